"""The preparation API: the GM's NPC library (/api/library/), prepared encounters
(/api/campaigns/<id>/prepared/, /api/prepared/<id>/, its start, matchups and forecast), library
NPCs into an encounter (/api/encounters/<id>/library/) and a running fight's forecast
(/api/encounters/<id>/forecast/). A library is its owner's alone and a
prepared encounter its campaign GM's: everyone else, players included, gets 404."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.http import Http404
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    extend_schema_serializer,
    extend_schema_view,
)
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from combat import access as combat_access
from prep import access as prep_access
from prep import forecast as fight_forecast
from prep import matchups, services, statblock
from prep.models import MAX_COUNT, LibraryNpc, PreparedEncounter, PreparedGroup
from prep.throttles import ForecastThrottle
from sheets import fields
from sheets.http import signed_in
from sheets.ids import ID_SCHEMA, parse_id
from sheets.models import Campaign, Character
from sheets.services import lock_campaign

NOT_FOUND = OpenApiResponse(description="No such object, or not yours.")
BAD = OpenApiResponse(description="Invalid input: the body names each field that is wrong.")


@extend_schema_field({"$ref": "#/components/schemas/StatBlockSheet"})
class StatBlockSheetField(serializers.JSONField):
    """A library NPC's stored stat block (prep/shapes.py)."""


class LibraryNpcSerializer(serializers.ModelSerializer[LibraryNpc]):
    sheet = StatBlockSheetField(
        read_only=True,
        help_text="The stat block: aptitudes, weight, BZF, disciplines, weapons, zones "
        "(with armor), notes; the character document's fields.",
    )

    class Meta:
        model = LibraryNpc
        fields = ["id", "name", "sheet", "starter", "created_at", "updated_at"]
        read_only_fields = fields


def _validated(request: Request, data: Any) -> dict[str, Any]:
    sheet, errors = statblock.validate(data, request=request)
    if sheet is None:
        raise ValidationError(errors)
    return sheet


@extend_schema_view(
    list=extend_schema(summary="Your NPC library"),
    retrieve=extend_schema(responses={200: LibraryNpcSerializer, 404: NOT_FOUND}),
    create=extend_schema(
        request=statblock.StatBlockSerializer,
        responses={201: LibraryNpcSerializer, 400: BAD},
        description="A stat block, validated as a character import is (an exported character "
        "sheet is accepted as it is: its campaign, owner and pools are ignored).",
    ),
    update=extend_schema(
        request=statblock.StatBlockSerializer,
        responses={200: LibraryNpcSerializer, 400: BAD, 404: NOT_FOUND},
    ),
    partial_update=extend_schema(
        request=statblock.StatBlockSerializer,
        responses={200: LibraryNpcSerializer, 400: BAD, 404: NOT_FOUND},
        description="The keys sent replace the stat block's; the result is validated whole.",
    ),
    destroy=extend_schema(
        responses={204: None, 400: BAD, 404: NOT_FOUND},
        description="Refused (400, naming them) while a prepared encounter uses the NPC.",
    ),
)
class LibraryViewSet(viewsets.ModelViewSet[Any]):
    """The NPC library of the user calling: theirs alone."""

    serializer_class = LibraryNpcSerializer

    def get_queryset(self) -> QuerySet[LibraryNpc]:
        if getattr(self, "swagger_fake_view", False):
            return LibraryNpc.objects.none()
        return LibraryNpc.objects.filter(owner=signed_in(self.request.user))

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        sheet = _validated(request, request.data)
        npc = services.save_npc(owner=signed_in(request.user), sheet=sheet)
        return Response(LibraryNpcSerializer(npc).data, status=status.HTTP_201_CREATED)

    def update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        npc = self.get_object()
        data = request.data
        if kwargs.get("partial"):
            if not isinstance(data, dict):
                raise ValidationError({"non_field_errors": ["A stat block is one JSON object."]})
            before = services.full_sheet(npc)
            if "weight" in data and "bzf" not in data and not before.get("bzf_rolled"):
                # As on a sheet: a new weight sets BZF (weight / 14) unless BZF was rolled.
                before.pop("bzf", None)
            data = {**before, **data}
        sheet = _validated(request, data)
        npc = services.save_npc(owner=signed_in(request.user), sheet=sheet, npc=npc)
        return Response(LibraryNpcSerializer(npc).data)

    def perform_destroy(self, instance: LibraryNpc) -> None:
        services.delete_npc(npc=instance, actor=self.request.user)

    @extend_schema(request=None, responses={201: LibraryNpcSerializer, 404: NOT_FOUND})
    @action(detail=True, methods=["post"])
    def duplicate(self, request: Request, pk: str | None = None) -> Response:
        """A copy of the stat block, named "<name> (copy)"."""
        npc = services.duplicate_npc(npc=self.get_object())
        return Response(LibraryNpcSerializer(npc).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={200: LibraryNpcSerializer(many=True)})
    @action(detail=False, methods=["post"], url_path="starter-set", pagination_class=None)
    def starter_set(self, request: Request) -> Response:
        """Add the starter stat blocks you do not have yet (town guard, thug, veteran, wolf);
        answers with those added (none the second time)."""
        added = services.add_starter_set(owner=signed_in(request.user))
        return Response(LibraryNpcSerializer(added, many=True).data)


class GroupSerializer(fields.StrictModelSerializer):
    npc = fields.PrimaryKeyRelatedField(queryset=LibraryNpc.objects.none())
    npc_name = serializers.CharField(source="npc.name", read_only=True)
    count = fields.IntegerField(min_value=1, max_value=MAX_COUNT, default=1)
    hidden = fields.BooleanField(default=False)
    on_alert = fields.BooleanField(default=False)

    class Meta:
        model = PreparedGroup
        # ``id`` is what the forecast's "one fewer" what-if takes (``?remove=<id>``); the
        # groups sent replace them all, so each one sent gets a new id.
        fields = ["id", "npc", "npc_name", "count", "hidden", "on_alert"]
        read_only_fields = ["id"]

    def get_fields(self) -> dict[str, Any]:
        out = super().get_fields()
        request = self.context.get("request")
        if request is not None and request.user.is_authenticated:
            out["npc"].queryset = LibraryNpc.objects.filter(owner=request.user)  # type: ignore[attr-defined]  # a PrimaryKeyRelatedField
        return out

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # The groups sent replace them all: each one is whole, in a PATCH too (where DRF
        # requires no field, nested ones included); the model's defaults fill the rest.
        if "npc" not in attrs:
            raise serializers.ValidationError({"npc": ["This field is required."]})
        return attrs


class PreparedSerializer(fields.StrictModelSerializer):
    name = fields.CharField(max_length=120)
    notes = fields.CharField(allow_blank=True, required=False, default="")
    expected = fields.PrimaryKeyRelatedField(
        many=True, required=False, queryset=Character.objects.none()
    )
    groups = GroupSerializer(many=True, required=False)

    class Meta:
        model = PreparedEncounter
        fields = ["id", "campaign", "name", "notes", "expected", "groups", "created_at"]
        read_only_fields = ["id", "campaign", "created_at"]

    def get_fields(self) -> dict[str, Any]:
        out = super().get_fields()
        campaign = self.context.get("campaign")
        if campaign is not None:
            out["expected"].child_relation.queryset = Character.objects.filter(  # type: ignore[attr-defined]  # a ManyRelatedField
                campaign=campaign, copied_from__isnull=True, fight_only=False
            )
        return out

    def _groups(self, prepared: PreparedEncounter, groups: list[dict[str, Any]] | None) -> None:
        if groups is None:
            return
        # The NPCs locked before their groups are written: one deleted since it was validated
        # is a 400 naming it, not a group of a deleted NPC (prep.services.lock_npcs).
        locked = services.lock_npcs({g["npc"].pk for g in groups})
        gone = sorted({g["npc"].name for g in groups if g["npc"].pk not in locked})
        if gone:
            raise ValidationError(
                {"groups": [f"No longer in your library (deleted meanwhile): {', '.join(gone)}."]}
            )
        prepared.groups.all().delete()
        PreparedGroup.objects.bulk_create(PreparedGroup(prepared=prepared, **g) for g in groups)

    def create(self, validated_data: dict[str, Any]) -> PreparedEncounter:
        groups = validated_data.pop("groups", [])
        expected = validated_data.pop("expected", [])
        with transaction.atomic():
            # The campaign first, the NPCs of the groups last (the lock order): behind a
            # deletion of the campaign or the GM's account, it is waited for, then a 404.
            campaign = lock_campaign(pk=self.context["campaign"].pk)
            prepared = PreparedEncounter.objects.create(campaign=campaign, **validated_data)
            prepared.expected.set(expected)
            self._groups(prepared, groups)
        return prepared

    def update(self, instance: PreparedEncounter, validated_data: dict[str, Any]) -> Any:
        groups = validated_data.pop("groups", None)
        expected = validated_data.pop("expected", None)
        with transaction.atomic():
            # As create: the campaign, then this row, the NPCs last; a 404 once deleted.
            lock_campaign(pk=instance.campaign_id)
            PreparedEncounter.objects.select_for_update().get(pk=instance.pk)
            for key, value in validated_data.items():
                setattr(instance, key, value)
            instance.save()
            if expected is not None:
                instance.expected.set(expected)
            self._groups(instance, groups)
        return instance


class StartedSerializer(serializers.Serializer[Any]):
    encounter = serializers.IntegerField(help_text="The encounter created, with its participants.")
    url = serializers.CharField(help_text="Its tracker page.")


MATCHUPS_SCHEMA = {
    "$ref": "#/components/schemas/Matchups",
    "description": "npc_attacks and character_attacks: one row per attacker, weapon and "
    "defender, with cells[strike][defense] = {pvd, hit (of 100), second_hit (of 100), zones: "
    "[{zone, protection, damage_per_hit, hits_to_bzf}]} for the least and the most armored "
    "zone (docs/rules.md, 'The matchup table'); best = {strike, hit}: the strike mode "
    "whose lowest chance over the three defenses is highest, and that chance (the page's "
    "overview).",
}


# The reference alone: with allow_null below, drf-spectacular adds the one null branch itself
# (naming null here too made it twice, and null then matched two branches of the oneOf).
@extend_schema_field({"$ref": "#/components/schemas/FightForecast"})
class ForecastField(serializers.JSONField):
    """The forecast (prep/shapes.py), or null while a side is empty."""


@extend_schema_serializer(many=False)
class ForecastSerializer(serializers.Serializer[Any]):
    """One answer, not a list: the running fight's forecast is read on a collection route."""

    forecast = ForecastField(
        allow_null=True, help_text="How the fight is likely to go; null while a side is empty."
    )
    what_if = serializers.CharField(allow_null=True, help_text="What was changed, or null.")


FORECAST_PARAMETERS = [
    OpenApiParameter(
        "fights",
        {"type": "integer", "minimum": 1, "maximum": fight_forecast.MAX_FIGHTS},
        description=f"Fights to play: {fight_forecast.FIGHTS} unless given, at most "
        f"{fight_forecast.MAX_FIGHTS}, and fights times fighters at most "
        f"{fight_forecast.MAX_FIGHTER_FIGHTS} (3333 for 30 fighters, the default too); above "
        "that, 400.",
    ),
    OpenApiParameter(
        "seed",
        {"type": "integer", "minimum": 0, "maximum": 2**32},
        description="The random seed: same seed and sheets, same answer. Without one, any "
        "cached answer for the same sheets and fights is given (seed 1 when none is).",
    ),
]

THROTTLED = OpenApiResponse(
    description="Too many forecasts from this user in a short time (the four forecast routes "
    "share one allowance); Retry-After says when to try again."
)


class PreparedAccess:
    request: Request
    kwargs: dict[str, Any]

    def _campaign(self) -> Campaign:
        user = self.request.user
        pk = parse_id(str(self.kwargs.get("campaign_pk")))
        found = None
        if user.is_authenticated and pk is not None:
            found = Campaign.objects.filter(pk=pk, gm_id=user.pk).first()
        if found is None:
            raise NotFound("No such campaign of yours.")
        return found


@extend_schema_view(
    create=extend_schema(responses={201: PreparedSerializer, 400: BAD, 404: NOT_FOUND}),
    list=extend_schema(responses={200: PreparedSerializer(many=True), 404: NOT_FOUND}),
)
class CampaignPreparedViewSet(  # type: ignore[misc]  # self.request is DRF's Request here
    PreparedAccess,
    mixins.ListModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet[Any],
):
    """A campaign's prepared encounters: its GM's alone (players 404)."""

    serializer_class = PreparedSerializer

    def get_queryset(self) -> QuerySet[PreparedEncounter]:
        if getattr(self, "swagger_fake_view", False):
            return PreparedEncounter.objects.none()
        return PreparedEncounter.objects.filter(campaign=self._campaign()).prefetch_related(
            "expected", "groups__npc"
        )

    def get_serializer_context(self) -> dict[str, Any]:
        context = dict(super().get_serializer_context())
        if not getattr(self, "swagger_fake_view", False):
            context["campaign"] = self._campaign()
        return context


@extend_schema_view(
    retrieve=extend_schema(responses={200: PreparedSerializer, 404: NOT_FOUND}),
    update=extend_schema(responses={200: PreparedSerializer, 400: BAD, 404: NOT_FOUND}),
    partial_update=extend_schema(responses={200: PreparedSerializer, 400: BAD, 404: NOT_FOUND}),
    destroy=extend_schema(responses={204: None, 404: NOT_FOUND}),
)
class PreparedViewSet(
    mixins.RetrieveModelMixin,
    mixins.UpdateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet[Any],
):
    """One prepared encounter (its campaign's GM only), its start and its matchup table."""

    serializer_class = PreparedSerializer

    def get_queryset(self) -> QuerySet[PreparedEncounter]:
        if getattr(self, "swagger_fake_view", False):
            return PreparedEncounter.objects.none()
        user = self.request.user
        return PreparedEncounter.objects.filter(campaign__gm_id=user.pk).select_related("campaign")

    def get_serializer_context(self) -> dict[str, Any]:
        context = dict(super().get_serializer_context())
        if self.kwargs.get("pk") and not getattr(self, "swagger_fake_view", False):
            context["campaign"] = self.get_object().campaign
        return context

    @extend_schema(request=None, responses={201: StartedSerializer, 400: BAD, 404: NOT_FOUND})
    @action(detail=True, methods=["post"])
    def start(self, request: Request, pk: str | None = None) -> Response:
        """The one press at the table: creates the encounter with the expected characters and
        the NPC groups (numbered copies), all or nothing."""
        encounter = services.start_prepared(prepared=self.get_object(), actor=request.user)
        return Response(
            {"encounter": encounter.pk, "url": encounter.get_absolute_url()},
            status=status.HTTP_201_CREATED,
        )

    @extend_schema(responses={200: OpenApiResponse(response=MATCHUPS_SCHEMA), 404: NOT_FOUND})
    @action(detail=True, methods=["get"])
    def matchups(self, request: Request, pk: str | None = None) -> Response:
        """The exact odds of every attacker and weapon against every expected defender, both
        ways (NPCs against characters, characters against NPCs)."""
        table = matchups.matchup_table(self.get_object())
        return Response(matchups.table_as_dict(table))

    @extend_schema(
        parameters=[
            *FORECAST_PARAMETERS,
            OpenApiParameter(
                "add", ID_SCHEMA, description="What if: one more of this library NPC."
            ),
            OpenApiParameter(
                "remove",
                ID_SCHEMA,
                description="What if: one fewer of this group (its groups[].id in the "
                "prepared encounter).",
            ),
        ],
        responses={200: ForecastSerializer, 400: BAD, 404: NOT_FOUND, 429: THROTTLED},
    )
    @action(detail=True, methods=["get"], throttle_classes=[ForecastThrottle])
    def forecast(self, request: Request, pk: str | None = None) -> Response:
        """How the fight is likely to go, played many times by the engine on copies of the
        sheets (docs/rules.md, "The fight forecast"); cached by the sheets' numbers."""
        prepared = self.get_object()
        params = request.query_params
        try:
            asked = fight_forecast.parse_asked(params)
            what_if = fight_forecast.parse_what_if(request.user, prepared, params)
            result = fight_forecast.forecast_for(
                prepared, fights=asked.fights, seed=asked.seed, what_if=what_if
            )
        except fight_forecast.ForecastError as exc:
            raise ValidationError({exc.field: [str(exc)]}) from exc
        return Response({"forecast": result, "what_if": what_if.label or None})


class PickSerializer(fields.StrictSerializer):
    npc = fields.IntegerField(help_text="A library NPC of yours.")
    count = fields.IntegerField(min_value=1, max_value=MAX_COUNT)


class EncounterLibrarySerializer(fields.StrictSerializer):
    picks = PickSerializer(many=True, min_length=1)  # type: ignore[call-arg]  # for the ListSerializer
    hidden = fields.BooleanField(default=False)
    on_alert = fields.BooleanField(default=False)


class AddedSerializer(serializers.Serializer[Any]):
    participants = serializers.ListField(child=serializers.IntegerField())
    names = serializers.ListField(child=serializers.CharField())


class EncounterLibraryViewSet(viewsets.GenericViewSet[Any]):
    """Library NPCs into an encounter, in one step."""

    serializer_class = EncounterLibrarySerializer

    @extend_schema(
        responses={
            201: AddedSerializer,
            400: BAD,
            403: OpenApiResponse(description="Only the campaign's GM changes the encounter."),
            404: NOT_FOUND,
        }
    )
    def create(self, request: Request, encounter_pk: str) -> Response:
        """``count`` copies of each picked library NPC join the fight, named "Thug #1",
        "Thug #2"..., hidden and on alert if asked."""
        # Outsiders 404, players 403 (DRF turns Django's Http404 and PermissionDenied into them).
        pk = parse_id(encounter_pk)
        if pk is None:
            raise NotFound("No such encounter.")
        encounter = combat_access.get_encounter(request.user, pk, write=True)
        body = EncounterLibrarySerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        mine = {n.pk: n for n in LibraryNpc.objects.filter(owner=signed_in(request.user))}
        picks = []
        for index, pick in enumerate(data["picks"]):
            npc = mine.get(pick["npc"])
            if npc is None:
                # Row indexes as keys, as in DRF's own list errors (the stubs say str keys).
                detail: Any = {"picks": {index: {"npc": ["Not an NPC of your library."]}}}
                raise ValidationError(detail)
            picks.append(services.Pick(npc, pick["count"], data["hidden"], data["on_alert"]))
        added = services.put_into_encounter(encounter=encounter, picks=picks, actor=request.user)
        return Response(
            {"participants": [p.pk for p in added], "names": [p.character.name for p in added]},
            status=status.HTTP_201_CREATED,
        )


class EncounterForecastViewSet(viewsets.GenericViewSet[Any]):
    """The forecast of a fight from where it stands."""

    pagination_class = None
    throttle_classes = [ForecastThrottle]

    @extend_schema(
        parameters=FORECAST_PARAMETERS,
        responses={200: ForecastSerializer, 400: BAD, 404: NOT_FOUND, 429: THROTTLED},
    )
    def list(self, request: Request, encounter_pk: str) -> Response:
        """How the rest of the fight is likely to go, from the sheets as they stand now
        (docs/rules.md, "The fight forecast"). The campaign GM's alone: everyone else, the
        fight's players included, 404."""
        pk = parse_id(encounter_pk)
        try:
            encounter = prep_access.get_encounter_run_by(request.user, pk or 0)
        except Http404 as exc:
            raise NotFound("No such encounter.") from exc
        params = request.query_params
        try:
            asked = fight_forecast.parse_asked(params)
            result = fight_forecast.forecast_for_encounter(
                encounter, fights=asked.fights, seed=asked.seed
            )
        except fight_forecast.ForecastError as exc:
            raise ValidationError({exc.field: [str(exc)]}) from exc
        return Response({"forecast": result, "what_if": None})


def register(router: Any) -> None:
    """Add the preparation endpoints to the API router (config/api_urls.py)."""
    router.register("library", LibraryViewSet, basename="library")
    router.register(
        r"campaigns/(?P<campaign_pk>\d+)/prepared", CampaignPreparedViewSet, basename="prepared"
    )
    router.register("prepared", PreparedViewSet, basename="prepared-encounter")
    router.register(
        r"encounters/(?P<encounter_pk>\d+)/library",
        EncounterLibraryViewSet,
        basename="encounter-library",
    )
    router.register(
        r"encounters/(?P<encounter_pk>\d+)/forecast",
        EncounterForecastViewSet,
        basename="encounter-forecast",
    )
