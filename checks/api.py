"""REST API for checks outside combat, with the pages' rules (the same services): players roll
and answer for their own characters, the GM for every one and alone calls, reveals and undoes.
Outsiders get 404, members who may not act 403, bad input 400 naming the field (nothing is
stored), a table that moved on 409. A secret check reads as ``{"secret": true}`` without its
roll, degree or effects to anyone but the GM."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import QuerySet
from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import permissions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import APIException, NotFound
from rest_framework.exceptions import PermissionDenied as DRFPermissionDenied
from rest_framework.exceptions import ValidationError as DRFValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from checks import access, services
from checks.models import Check, CheckCall, CheckRequest
from checks.services import CheckConflict, Target
from rules.engine import omg
from sheets import fields
from sheets.http import signed_in
from sheets.ids import parse_id
from sheets.randomness import server_rng


class Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The table moved on; nothing was done."
    default_code = "conflict"


def _run(fn: Any, **kwargs: Any) -> Any:
    """A service call, its errors as the API's."""
    try:
        return fn(**kwargs)
    except DjangoValidationError as exc:
        detail = exc.message_dict if hasattr(exc, "error_dict") else exc.messages
        raise DRFValidationError(detail) from exc
    except DjangoPermissionDenied as exc:
        raise DRFPermissionDenied(str(exc) or None) from exc
    except Http404 as exc:
        raise NotFound() from exc
    except CheckConflict as exc:
        raise Conflict(str(exc)) from exc


def _responses(ok: Any, code: int = 200) -> dict[int, Any]:
    return {
        code: ok,
        400: OpenApiResponse(description="Invalid input, with the field and the reason."),
        403: OpenApiResponse(description="Not yours to do (players act for their own)."),
        404: OpenApiResponse(description="No such object, or not in your campaigns."),
        409: OpenApiResponse(description="The table moved on; nothing was done."),
    }


# --- Bodies --------------------------------------------------------------------------------


#: What ``against`` takes by name: a Difficulty Category (a test) or a proficiency tier (a save).
AGAINST_NAMES = (
    *(c.name for c in omg.DIFFICULTY_CATEGORIES),
    *(t.name for t in omg.PROFICIENCY_TIERS),
)


@extend_schema_field(
    {
        "oneOf": [
            {"type": "integer", "minimum": 5, "maximum": 100},
            {"type": "string", "enum": list(AGAINST_NAMES)},
        ]
    }
)
class AgainstField(serializers.Field[Any, Any, Any, Any]):
    """A whole number, or a Difficulty Category (a test) / proficiency tier (a save) by name.

    A string is a name, never a number, as the schema says: "20", "²", 5,000 digits or a NUL
    character are refused here, naming the field; the rules then judge the number's range and
    whether the name fits the kind (``services.parse_target``)."""

    default_error_messages = {
        "invalid": "A number, or one of: {names}.".format(names=", ".join(AGAINST_NAMES)),
    }

    def to_internal_value(self, data: Any) -> int | str:
        if isinstance(data, bool) or not isinstance(data, int | str):
            self.fail("invalid")
        if isinstance(data, str) and data not in AGAINST_NAMES:
            self.fail("invalid")
        return data

    def to_representation(self, value: Any) -> Any:
        return value


class TargetSerializer(fields.StrictSerializer):
    kind = serializers.ChoiceField(choices=[k.value for k in omg.CheckKind])
    aptitude = fields.CharField(required=False, allow_blank=True, max_length=3, default="")
    discipline = fields.CharField(required=False, allow_blank=True, max_length=120, default="")
    composite = fields.CharField(required=False, allow_blank=True, max_length=3, default="")
    against = AgainstField(
        help_text="A test: DIF 5..50 or Casual, Moderate, Ambitious, Formidable, Supreme. "
        "A save: the opposing PRO 55..100 or Inept, Capable, Adept, Expert, Master."
    )


def _target(data: dict[str, Any]) -> Target:
    """What a body read by a :class:`TargetSerializer` asks to roll (a 400 naming the field
    the rules refuse)."""
    target: Target = _run(
        services.parse_target,
        kind=data["kind"],
        against=data["against"],
        aptitude=data["aptitude"],
        discipline=data["discipline"],
        composite=data["composite"],
    )
    return target


class RollBody(TargetSerializer):
    roll = fields.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=100,
        help_text="The d100 rolled at the table (00 is 100); omit for the server's dice.",
    )
    secret = fields.BooleanField(required=False, default=False, help_text="The GM's only.")
    note = fields.CharField(required=False, allow_blank=True, max_length=80, default="")


class CallBody(TargetSerializer):
    campaign = fields.IntegerField()
    characters = serializers.ListField(
        child=fields.IntegerField(), required=False, max_length=100, default=list
    )
    everyone = fields.BooleanField(required=False, default=False)
    secret = fields.BooleanField(required=False, default=False)
    note = fields.CharField(required=False, allow_blank=True, max_length=80, default="")


class AnswerBody(fields.StrictSerializer):
    roll = fields.IntegerField(required=False, allow_null=True, min_value=1, max_value=100)
    aptitude = fields.CharField(required=False, allow_blank=True, max_length=3, default="")


class FateBody(fields.StrictSerializer):
    action = serializers.ChoiceField(choices=[a.value for a in omg.FateAction])
    spender = fields.IntegerField(help_text="The character whose Fate is spent (yours).")
    roll = fields.IntegerField(required=False, allow_null=True, min_value=1, max_value=100)


class EmptyBody(fields.StrictSerializer):
    """No fields: a key sent anyway is refused rather than ignored."""


class ResourceBody(fields.StrictSerializer):
    pool = serializers.ChoiceField(choices=["mana", "chi"])
    amount = fields.IntegerField(
        min_value=-100, max_value=100, help_text="Negative spends, positive restores."
    )
    cost = serializers.ChoiceField(choices=["", "ARC", "PWR", "PSI", "CHI"], default="")
    note = fields.CharField(required=False, allow_blank=True, max_length=80, default="")


# --- What goes out ------------------------------------------------------------------------------


def check_data(check: Check, *, hidden: bool) -> dict[str, Any]:
    """A check as its reader may see it: a secret one hides its result from all but the GM."""
    data: dict[str, Any] = {
        "id": check.pk,
        "campaign": check.campaign_id,
        "character": {"id": check.character_id, "name": check.character.name},
        "roller": check.roller.get_username() if check.roller else None,
        "seq": check.seq,
        "kind": check.kind,
        "aptitude": check.aptitude or None,
        "discipline": check.discipline or None,
        "composite": check.composite or None,
        "label": check.label,
        "secret": check.secret,
        "status": check.status,
        "created_at": check.created_at.isoformat(),
    }
    if hidden:
        return data
    data.update(
        level=check.level,
        pro=check.pro,
        dif=check.dif,
        roll=check.roll,
        physical=check.physical,
        degree=check.degree,
        abbr=omg.Degree(check.degree).abbr,
        success=check.success,
        exp=check.exp,
        exp_on=check.exp_on or None,
        fate=check.fate,
        effects=check.effects,
        replaces=check.replaces_id,
        note=check.note,
    )
    return data


def _out(request: Request, check: Check) -> dict[str, Any]:
    return check_data(check, hidden=check.secret and not check.campaign.is_gm(request.user))


def call_data(call: CheckCall, request: Request) -> dict[str, Any]:
    return {
        "id": call.pk,
        "campaign": call.campaign_id,
        "label": call.label,
        "kind": call.kind,
        "aptitude": call.aptitude or None,
        "discipline": call.discipline or None,
        "composite": call.composite or None,
        "against": call.against,
        "secret": call.secret,
        "note": call.note,
        "closed": call.closed,
        "requests": [
            {
                "id": r.pk,
                "character": {"id": r.character_id, "name": r.character.name},
                "check": _out(request, r.check_made) if r.check_made else None,
            }
            for r in call.requests.select_related("character", "check_made__character")
        ],
    }


def _id(raw: Any) -> int:
    """The id in a path: a number past any row (5,000 digits, past a bigint) or another
    script's digits are the 404 of a missing id."""
    pk = parse_id(str(raw))
    if pk is None:
        raise NotFound()
    return pk


# --- Views ---------------------------------------------------------------------------------------


class _ChecksViewSet(viewsets.GenericViewSet[Any]):
    """What the checks endpoints share: signed-in users, bounded lists, and one body each."""

    permission_classes = [permissions.IsAuthenticated]
    pagination_class = None  # the lists are bounded (the newest 200 checks, 50 calls)

    def body(self) -> dict[str, Any]:
        """The request's body as ``serializer_class`` reads it, so the body parsed is the one
        OPTIONS describes; a bad one answers 400 naming the field."""
        serializer = self.get_serializer(data=self.request.data)
        serializer.is_valid(raise_exception=True)
        data: dict[str, Any] = serializer.validated_data
        return data


class CheckViewSet(_ChecksViewSet):
    """Checks: read one, spend Fate on the latest, reveal a secret one (GM)."""

    serializer_class = FateBody  # the body it reads (and what OPTIONS describes)
    lookup_value_regex = r"[0-9]+"  # anything else is the 404 of a missing id

    def _get(self, raw: str) -> Check:
        return access.get_check(self.request.user, _id(raw))

    @extend_schema(responses=_responses(OpenApiResponse(description="The check.")))
    def retrieve(self, request: Request, pk: str) -> Response:
        return Response(_out(request, self._get(pk)))

    @extend_schema(request=FateBody, responses=_responses(OpenApiResponse(description="")))
    @action(detail=True, methods=["post"])
    def fate(self, request: Request, pk: str) -> Response:
        """1 Fate re-rolls or revokes the campaign's latest check (its EXP and Fate undone)."""
        check = self._get(pk)
        data = self.body()
        spender = check.campaign.characters.filter(pk=data["spender"]).first()
        if spender is None:
            raise DRFValidationError({"spender": "No such character in this campaign."})
        revoked, new = _run(
            services.spend_fate,
            user=request.user,
            check=check,
            spender=spender,
            action=data["action"],
            rng=server_rng(),
            roll=data.get("roll"),
        )
        return Response(
            {"revoked": _out(request, revoked), "reroll": _out(request, new) if new else None}
        )

    @extend_schema(request=None, responses=_responses(OpenApiResponse(description="")))
    @action(detail=True, methods=["post"])
    def reveal(self, request: Request, pk: str) -> Response:
        check = self._get(pk)
        EmptyBody(data=request.data or {}).is_valid(raise_exception=True)
        return Response(_out(request, _run(services.reveal, user=request.user, check=check)))


class CharacterCheckViewSet(_ChecksViewSet):
    """Roll a check for a character (yours; the GM: any)."""

    serializer_class = RollBody  # the body it reads (and what OPTIONS describes)

    @extend_schema(request=RollBody, responses=_responses(OpenApiResponse(description=""), 201))
    def create(self, request: Request, character_pk: str) -> Response:
        character = access.get_character(request.user, _id(character_pk), write=True)
        d = self.body()
        target = _target(d)
        check = _run(
            services.roll_check,
            user=request.user,
            character=character,
            target=target,
            rng=server_rng(),
            roll=d.get("roll"),
            secret=d["secret"],
            note=d["note"],
        )
        return Response(_out(request, check), status=status.HTTP_201_CREATED)


class CampaignCheckViewSet(_ChecksViewSet):
    """A campaign's check log (newest first), and the GM's undo of the latest step."""

    serializer_class = EmptyBody  # the body it reads (and what OPTIONS describes)

    @extend_schema(responses=_responses(OpenApiResponse(description="The log.")))
    def list(self, request: Request, campaign_pk: str) -> Response:
        campaign = access.get_campaign(request.user, _id(campaign_pk))
        checks = (
            Check.objects.visible_to(request.user, campaign)
            .select_related("campaign", "character", "roller")
            .order_by("-seq")[:200]
        )
        return Response([_out(request, c) for c in checks])

    @extend_schema(request=None, responses=_responses(OpenApiResponse(description="")))
    @action(detail=False, methods=["post"])
    def undo(self, request: Request, campaign_pk: str) -> Response:
        campaign = access.get_campaign(request.user, _id(campaign_pk), write=True)
        EmptyBody(data=request.data or {}).is_valid(raise_exception=True)
        check = _run(services.undo_latest, user=request.user, campaign=campaign)
        return Response(_out(request, Check.objects.get(pk=check.pk)))


class CheckCallViewSet(_ChecksViewSet):
    """The GM's calls for checks: make one, read its answers."""

    serializer_class = CallBody  # the body it reads (and what OPTIONS describes)
    lookup_value_regex = r"[0-9]+"  # anything else is the 404 of a missing id

    def get_queryset(self) -> QuerySet[CheckCall]:
        return CheckCall.objects.filter(campaign__gm=signed_in(self.request.user)).select_related(
            "campaign"
        )

    @extend_schema(responses=_responses(OpenApiResponse(description="")))
    def list(self, request: Request) -> Response:
        return Response([call_data(c, request) for c in self.get_queryset()[:50]])

    @extend_schema(responses=_responses(OpenApiResponse(description="")))
    def retrieve(self, request: Request, pk: str) -> Response:
        call = access.get_call(request.user, _id(pk))
        return Response(call_data(call, request))

    @extend_schema(request=CallBody, responses=_responses(OpenApiResponse(description=""), 201))
    def create(self, request: Request) -> Response:
        d = self.body()
        campaign = access.get_campaign(request.user, _id(d["campaign"]), write=True)
        if d["everyone"]:
            chosen = list(
                campaign.characters.filter(is_npc=False, copied_from=None, fight_only=False)
            )
        else:
            chosen = list(campaign.characters.filter(pk__in=d["characters"]))
            if len(chosen) != len(set(d["characters"])):
                raise DRFValidationError({"characters": "Characters of this campaign only."})
        target = _target(d)
        call = _run(
            services.call_checks,
            user=request.user,
            campaign=campaign,
            characters=chosen,
            target=target,
            secret=d["secret"],
            note=d["note"],
        )
        return Response(call_data(call, request), status=status.HTTP_201_CREATED)


class CheckRequestViewSet(_ChecksViewSet):
    """The calls waiting for your characters, and your answer to one."""

    serializer_class = AnswerBody  # the body it reads (and what OPTIONS describes)
    lookup_value_regex = r"[0-9]+"  # anything else is the 404 of a missing id

    @extend_schema(responses=_responses(OpenApiResponse(description="")))
    def list(self, request: Request) -> Response:
        pending = CheckRequest.objects.filter(
            call__closed=False, check_made=None, character__owner_id=request.user.pk
        ).select_related("call", "character")
        return Response(
            [
                {
                    "id": r.pk,
                    "call": r.call_id,
                    "campaign": r.call.campaign_id,
                    "character": {"id": r.character_id, "name": r.character.name},
                    "label": r.call.label,
                    "secret": r.call.secret,
                    "odds": _odds(r),
                }
                for r in pending
            ]
        )

    @extend_schema(request=AnswerBody, responses=_responses(OpenApiResponse(description=""), 201))
    @action(detail=True, methods=["post"])
    def answer(self, request: Request, pk: str) -> Response:
        asked = access.get_request(request.user, _id(pk))
        d = self.body()
        check = _run(
            services.answer,
            user=request.user,
            request=asked,
            rng=server_rng(),
            roll=d.get("roll"),
            aptitude=d["aptitude"],
        )
        return Response(_out(request, check), status=status.HTTP_201_CREATED)


def _odds(asked: CheckRequest) -> dict[str, Any] | None:
    try:
        spec, _apt, _lv = services.spec_for(
            asked.character, services.target_of(asked.call), lenient=True
        )
    except DjangoValidationError:
        return None
    counts = omg.sheet_check_odds(spec)
    return {"pro": spec.pro, "dif": spec.dif, "counts": {d.value: n for d, n in counts.items()}}


class ResourceViewSet(_ChecksViewSet):
    """Spend or restore a character's Mana or Chi (yours; the GM: any)."""

    serializer_class = ResourceBody  # the body it reads (and what OPTIONS describes)

    @extend_schema(request=ResourceBody, responses=_responses(OpenApiResponse(description=""), 201))
    def create(self, request: Request, character_pk: str) -> Response:
        character = access.get_character(request.user, _id(character_pk), write=True)
        d = self.body()
        change = _run(
            services.change_resource,
            user=request.user,
            character=character,
            pool=d["pool"],
            amount=d["amount"],
            cost=d["cost"],
            note=d["note"],
        )
        return Response(
            {
                "character": character.pk,
                "pool": change.pool,
                "cost": change.cost or None,
                "amount": change.amount,
                "before": change.before,
                "after": change.after,
            },
            status=status.HTTP_201_CREATED,
        )


def register(router: Any) -> None:
    """Add the checks endpoints to the API router (config/api_urls.py)."""
    router.register("checks", CheckViewSet, basename="check")
    router.register(
        r"characters/(?P<character_pk>\d+)/checks",
        CharacterCheckViewSet,
        basename="character-check",
    )
    router.register(
        r"characters/(?P<character_pk>\d+)/resources", ResourceViewSet, basename="resource"
    )
    router.register(
        r"campaigns/(?P<campaign_pk>\d+)/checks", CampaignCheckViewSet, basename="campaign-check"
    )
    router.register("check-calls", CheckCallViewSet, basename="check-call")
    router.register("check-requests", CheckRequestViewSet, basename="check-request")
