"""The checks API's views: thin, as the pages are: check access (checks/access.py), parse the
body (checks/api/bodies.py), call the service, answer the shape (checks/api/shapes.py)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import permissions, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import BaseRouter

from checks import access, services
from checks.api.base import path_id, responses
from checks.api.bodies import (
    AnswerBody,
    CallBody,
    EmptyBody,
    FateBody,
    ResourceBody,
    RollBody,
    target_from,
)
from checks.api.shapes import (
    CheckCallSerializer,
    CheckFateSerializer,
    CheckPromptSerializer,
    CheckSerializer,
    ResourceChangeSerializer,
    call_data,
    check_for,
    fate_data,
    prompt_data,
    resource_data,
)
from checks.models import Check, CheckCall, CheckRequest
from sheets.http import signed_in
from sheets.randomness import server_rng


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


def _no_body(request: Request) -> None:
    EmptyBody(data=request.data or {}).is_valid(raise_exception=True)


class CheckViewSet(_ChecksViewSet):
    """Checks: read one, spend Fate on the latest, reveal a secret one (GM)."""

    serializer_class = FateBody  # the body it reads (and what OPTIONS describes)
    lookup_value_regex = r"[0-9]+"  # anything else is the 404 of a missing id

    @extend_schema(responses=responses(CheckSerializer))
    def retrieve(self, request: Request, pk: str) -> Response:
        user = signed_in(request.user)
        return Response(check_for(user, access.get_check(user, path_id(pk))))

    @extend_schema(request=FateBody, responses=responses(CheckFateSerializer))
    @action(detail=True, methods=["post"])
    def fate(self, request: Request, pk: str) -> Response:
        """1 Fate re-rolls or revokes the campaign's latest check (its EXP and Fate undone)."""
        user = signed_in(request.user)
        check = access.get_check(user, path_id(pk))
        data = self.body()
        spender = check.campaign.characters.filter(pk=data["spender"]).first()
        if spender is None:
            raise ValidationError({"spender": "No such character in this campaign."})
        revoked, new = services.spend_fate(
            user=user,
            check=check,
            spender=spender,
            action=data["action"],
            rng=server_rng(),
            roll=data.get("roll"),
        )
        return Response(fate_data(user, revoked, new))

    @extend_schema(request=None, responses=responses(CheckSerializer))
    @action(detail=True, methods=["post"])
    def reveal(self, request: Request, pk: str) -> Response:
        """The GM shows a secret check to the table: its EXP and Fate apply now."""
        user = signed_in(request.user)
        check = access.get_check(user, path_id(pk))
        _no_body(request)
        return Response(check_for(user, services.reveal(user=user, check=check)))


class CharacterCheckViewSet(_ChecksViewSet):
    """Roll a check for a character (yours; the GM: any)."""

    serializer_class = RollBody  # the body it reads (and what OPTIONS describes)

    @extend_schema(request=RollBody, responses=responses(CheckSerializer, 201))
    def create(self, request: Request, character_pk: str) -> Response:
        user = signed_in(request.user)
        character = access.get_character(user, path_id(character_pk), write=True)
        d = self.body()
        check = services.roll_check(
            user=user,
            character=character,
            target=target_from(d),
            rng=server_rng(),
            roll=d.get("roll"),
            secret=d["secret"],
            note=d["note"],
        )
        return Response(check_for(user, check), status=status.HTTP_201_CREATED)


class CampaignCheckViewSet(_ChecksViewSet):
    """A campaign's check log (newest first), and the GM's undo of the latest step."""

    serializer_class = EmptyBody  # the body it reads (and what OPTIONS describes)

    @extend_schema(responses=responses(CheckSerializer(many=True)))
    def list(self, request: Request, campaign_pk: str) -> Response:
        user = signed_in(request.user)
        campaign = access.get_campaign(user, path_id(campaign_pk))
        checks = (
            Check.objects.visible_to(user, campaign)
            .select_related("campaign", "character", "roller")
            .order_by("-seq")[:200]
        )
        return Response([check_for(user, c) for c in checks])

    @extend_schema(request=None, responses=responses(CheckSerializer))
    @action(detail=False, methods=["post"])
    def undo(self, request: Request, campaign_pk: str) -> Response:
        """The GM takes back the latest step: a roll (with a re-roll's Fate), or a revoke;
        the answer is the check it changed, as it is now."""
        user = signed_in(request.user)
        campaign = access.get_campaign(user, path_id(campaign_pk), write=True)
        _no_body(request)
        check = services.undo_latest(user=user, campaign=campaign)
        return Response(check_for(user, Check.objects.get(pk=check.pk)))


class CheckCallViewSet(_ChecksViewSet):
    """The GM's calls for checks: make one, read its answers."""

    serializer_class = CallBody  # the body it reads (and what OPTIONS describes)
    lookup_value_regex = r"[0-9]+"  # anything else is the 404 of a missing id

    def get_queryset(self) -> QuerySet[CheckCall]:
        return CheckCall.objects.filter(campaign__gm=signed_in(self.request.user)).select_related(
            "campaign"
        )

    @extend_schema(responses=responses(CheckCallSerializer(many=True)))
    def list(self, request: Request) -> Response:
        """The newest 50 calls of the campaigns you run."""
        user = signed_in(request.user)
        return Response([call_data(user, c) for c in self.get_queryset()[:50]])

    @extend_schema(responses=responses(CheckCallSerializer))
    def retrieve(self, request: Request, pk: str) -> Response:
        user = signed_in(request.user)
        return Response(call_data(user, access.get_call(user, path_id(pk))))

    @extend_schema(request=CallBody, responses=responses(CheckCallSerializer, 201))
    def create(self, request: Request) -> Response:
        user = signed_in(request.user)
        d = self.body()
        campaign = access.get_campaign(user, path_id(d["campaign"]), write=True)
        if d["everyone"]:
            chosen = list(
                campaign.characters.filter(is_npc=False, copied_from=None, fight_only=False)
            )
        else:
            chosen = list(campaign.characters.filter(pk__in=d["characters"]))
            if len(chosen) != len(set(d["characters"])):
                raise ValidationError({"characters": "Characters of this campaign only."})
        call = services.call_checks(
            user=user,
            campaign=campaign,
            characters=chosen,
            target=target_from(d),
            secret=d["secret"],
            note=d["note"],
        )
        return Response(call_data(user, call), status=status.HTTP_201_CREATED)


class CheckRequestViewSet(_ChecksViewSet):
    """The calls waiting for your characters, and your answer to one."""

    serializer_class = AnswerBody  # the body it reads (and what OPTIONS describes)
    lookup_value_regex = r"[0-9]+"  # anything else is the 404 of a missing id

    @extend_schema(responses=responses(CheckPromptSerializer(many=True)))
    def list(self, request: Request) -> Response:
        user = signed_in(request.user)
        pending = CheckRequest.objects.filter(
            call__closed=False, check_made=None, character__owner_id=user.pk
        ).select_related("call", "character")
        return Response([prompt_data(r) for r in pending])

    @extend_schema(request=AnswerBody, responses=responses(CheckSerializer, 201))
    @action(detail=True, methods=["post"])
    def answer(self, request: Request, pk: str) -> Response:
        """Roll the called check for your character (a secret call: the server's dice)."""
        user = signed_in(request.user)
        asked = access.get_request(user, path_id(pk))
        d = self.body()
        check = services.answer(
            user=user,
            request=asked,
            rng=server_rng(),
            roll=d.get("roll"),
            aptitude=d["aptitude"],
        )
        return Response(check_for(user, check), status=status.HTTP_201_CREATED)


class ResourceViewSet(_ChecksViewSet):
    """Spend or restore a character's Mana or Chi (yours; the GM: any)."""

    serializer_class = ResourceBody  # the body it reads (and what OPTIONS describes)

    @extend_schema(request=ResourceBody, responses=responses(ResourceChangeSerializer, 201))
    def create(self, request: Request, character_pk: str) -> Response:
        user = signed_in(request.user)
        character = access.get_character(user, path_id(character_pk), write=True)
        d = self.body()
        change = services.change_resource(
            user=user,
            character=character,
            pool=d["pool"],
            amount=d["amount"],
            cost=d["cost"],
            note=d["note"],
        )
        return Response(resource_data(change), status=status.HTTP_201_CREATED)


def register(router: BaseRouter) -> None:
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
