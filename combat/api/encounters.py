"""The encounter endpoints: list, create, read, change, delete, and the GM's and players'
actions on a fight (participants, start, initiative, next turn, attacks, undo, adjust)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import Http404
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import permissions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied as DRFPermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response

from combat import access, services
from combat.api.base import IsGMOrReadOnly, documented_responses
from combat.api.serializers import (
    AdjustSerializer,
    DeclarationSerializer,
    DeclareSerializer,
    EncounterDetailSerializer,
    EncounterSerializer,
    LogEntrySerializer,
    NextTurnSerializer,
    ParticipantsAddSerializer,
    ParticipantSerializer,
    StrikeResultSerializer,
    StrikeSerializer,
    encounter_participants,
)
from combat.models import (
    CombatLogEntry,
    Encounter,
)
from sheets.ids import ID_SCHEMA, parse_id
from sheets.models import BodyZone, Character


@extend_schema_view(
    list=extend_schema(
        parameters=[
            OpenApiParameter(
                "campaign", ID_SCHEMA, description="Only the encounters of this campaign."
            )
        ]
    )
)
class EncounterViewSet(viewsets.ModelViewSet[Any]):
    """Encounters of my campaigns; the GM creates, renames and deletes them and runs the
    fight. `?campaign=ID` filters the list."""

    permission_classes = [permissions.IsAuthenticated, IsGMOrReadOnly]

    def get_queryset(self) -> QuerySet[Encounter]:
        queryset = Encounter.objects.for_user(self.request.user).select_related("campaign")
        campaign = self.request.query_params.get("campaign")
        if campaign is not None:
            campaign_id = parse_id(campaign)
            if campaign_id is None:
                raise serializers.ValidationError({"campaign": ["Give a campaign id (a number)."]})
            queryset = queryset.filter(campaign_id=campaign_id)
        return queryset.order_by("-created_at", "-pk")

    def get_serializer_class(self) -> type[serializers.BaseSerializer[Any]]:
        if self.action == "retrieve":
            return EncounterDetailSerializer
        return EncounterSerializer

    def perform_create(self, serializer: EncounterSerializer) -> None:  # type: ignore[override]  # always this serializer
        campaign = serializer.validated_data["campaign"]
        if not campaign.is_gm(self.request.user):
            raise DRFPermissionDenied("Only the campaign's GM runs encounters.")
        encounter, _ = services.create_encounter(
            campaign=campaign,
            name=serializer.validated_data["name"],
            actor=self.request.user,
        )
        serializer.instance = encounter

    @extend_schema(
        responses={
            204: OpenApiResponse(description="Deleted, with its participants and log."),
            403: OpenApiResponse(description="Only the campaign's GM deletes an encounter."),
            404: OpenApiResponse(description="No such encounter, or not in your campaigns."),
            409: OpenApiResponse(description="The fight is running: finish it first."),
        }
    )
    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Delete an encounter that is being prepared or is over. GM only."""
        return super().destroy(request, *args, **kwargs)

    def perform_destroy(self, instance: Encounter) -> None:
        services.delete_encounter(encounter=instance, actor=self.request.user)

    def _encounter(self, write: bool = False) -> Encounter:
        pk = parse_id(str(self.kwargs["pk"]))
        if pk is None:
            raise Http404("No such encounter.")
        return access.get_encounter(self.request.user, pk, write=write)

    def _entry(self, entry: CombatLogEntry, code: int = 200) -> Response:
        return Response(LogEntrySerializer(entry, context={"request": self.request}).data, code)

    @extend_schema(methods=["GET"], responses={200: ParticipantSerializer(many=True), 404: None})
    @extend_schema(
        methods=["POST"],
        request=ParticipantsAddSerializer,
        responses=documented_responses(LogEntrySerializer, 201),
        description="Add campaign characters, or `count` copies of an NPC (each its own "
        "sheet with its own wounds, armor and weapons). GM only.",
    )
    # The whole list, never a page (a fight has a few dozen participants at most): documented
    # as the array it is.
    @action(detail=True, methods=["get", "post"], pagination_class=None)
    def participants(self, request: Request, pk: str) -> Response:
        if request.method == "GET":
            encounter = self._encounter()
            data = ParticipantSerializer(
                encounter_participants(encounter), many=True, context={"request": request}
            ).data
            return Response(data)
        encounter = self._encounter(write=True)
        body = ParticipantsAddSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        if data.get("npc"):
            npc = Character.objects.filter(campaign=encounter.campaign, pk=data["npc"]).first()
            if npc is None:
                raise serializers.ValidationError({"npc": "No such NPC in this campaign."})
            entry = services.add_npc_copies(
                encounter=encounter,
                npc=npc,
                count=data.get("count", 1),
                hidden=data["hidden"],
                actor=request.user,
            )
        else:
            characters = list(
                Character.objects.filter(campaign=encounter.campaign, pk__in=data["characters"])
            )
            if len(characters) != len(set(data["characters"])):
                raise serializers.ValidationError({"characters": "Not all are in this campaign."})
            entry = services.add_participants(
                encounter=encounter,
                characters=characters,
                hidden=data["hidden"],
                actor=request.user,
            )
        return self._entry(entry, 201)

    @extend_schema(request=None, responses=documented_responses(LogEntrySerializer))
    @action(detail=True, methods=["post"])
    def start(self, request: Request, pk: str) -> Response:
        """Roll missing ITVs, order the initiative and begin round 1. GM only."""
        encounter = self._encounter(write=True)
        return self._entry(services.start_encounter(encounter=encounter, actor=request.user))

    @extend_schema(request=None, responses=documented_responses(LogEntrySerializer))
    @action(detail=True, methods=["post"])
    def initiative(self, request: Request, pk: str) -> Response:
        """Order the initiative again (after on-alert or tie-break changes). GM only."""
        encounter = self._encounter(write=True)
        return self._entry(services.roll_initiative(encounter=encounter, actor=request.user))

    @extend_schema(request=NextTurnSerializer, responses=documented_responses(LogEntrySerializer))
    @action(detail=True, methods=["post"], url_path="next-turn")
    def next_turn(self, request: Request, pk: str) -> Response:
        """Pass the turn (the GM, or whoever is acting); queued counterattacks come before
        the round ends."""
        encounter = self._encounter()
        body = NextTurnSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        entry = services.next_turn(
            encounter=encounter,
            include_skipped=body.validated_data["include_skipped"],
            seen=body.seen(),
            actor=request.user,
        )
        return self._entry(entry)

    @extend_schema(request=None, responses=documented_responses(LogEntrySerializer))
    @action(detail=True, methods=["post"])
    def undo(self, request: Request, pk: str) -> Response:
        """Undo the last action still in force, with a compensating entry. GM only."""
        encounter = self._encounter(write=True)
        return self._entry(services.undo_last(encounter=encounter, actor=request.user))

    @extend_schema(request=None, responses=documented_responses(LogEntrySerializer))
    @action(detail=True, methods=["post"])
    def finish(self, request: Request, pk: str) -> Response:
        """End the fight; open attacks are called off. GM only."""
        encounter = self._encounter(write=True)
        return self._entry(services.finish_encounter(encounter=encounter, actor=request.user))

    @extend_schema(request=AdjustSerializer, responses=documented_responses(LogEntrySerializer))
    @action(detail=True, methods=["post"])
    def adjust(self, request: Request, pk: str) -> Response:
        """The GM's manual damage (positive) or healing (negative) on a zone."""
        encounter = self._encounter(write=True)
        body = AdjustSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        zone = BodyZone.objects.filter(
            pk=body.validated_data["zone"], character__combat_participants__encounter=encounter
        ).first()
        if zone is None:
            raise serializers.ValidationError({"zone": "No such zone in this encounter."})
        entry = services.adjust_zone(
            encounter=encounter,
            zone=zone,
            amount=body.validated_data["amount"],
            actor=request.user,
        )
        return self._entry(entry)

    @extend_schema(
        request=DeclareSerializer, responses=documented_responses(DeclarationSerializer, 201)
    )
    @action(detail=True, methods=["post"])
    def attacks(self, request: Request, pk: str) -> Response:
        """Declare an attack: attacker, target, zone, weapon, strike mode or maneuver. For
        your own characters (the GM: anyone)."""
        decl, _ = _declared(
            services.declare_attack, **self._declaration(self._checked(DeclareSerializer))
        )
        # The declaration comes back with the rows it was checked against: answered as it is
        # (this attack only, not every open one).
        return Response(
            DeclarationSerializer(decl, context={"request": request}).data,
            status=status.HTTP_201_CREATED,
        )

    def _checked(self, serializer: type[serializers.Serializer[Any]]) -> dict[str, Any]:
        """The request's body, checked; a bad one is a 400 for those who may see the
        encounter, a 404 for the others (the encounter itself is read by the service)."""
        body = serializer(data=self.request.data)
        if not body.is_valid():
            self._encounter()
            raise serializers.ValidationError(body.errors)
        return dict(body.validated_data)

    def _declaration(self, data: dict[str, Any]) -> dict[str, Any]:
        """The arguments of a declaration from a checked body, as ids: the service finds
        the encounter in the user's campaigns and checks the ids under its lock, in one
        read (a participant, zone or weapon that is not this fight's is a 400 naming the
        field, _declared; an encounter the user cannot see, a 404)."""
        pk = parse_id(str(self.kwargs["pk"]))
        if pk is None:
            raise Http404("No such encounter.")
        return {
            "encounter": pk,
            "attacker": data["attacker"],
            "target": data["target"],
            "action": data["action"],
            "zone": data.get("zone"),
            "weapon": data.get("weapon"),
            "counterattack": data["counterattack"],
            "actor": self.request.user,
        }

    @extend_schema(
        request=StrikeSerializer, responses=documented_responses(StrikeResultSerializer, 201)
    )
    @action(detail=True, methods=["post"])
    def strike(self, request: Request, pk: str) -> Response:
        """A whole strike in one call, for table dice: declare the attack, record the target's
        defense and resolve it with the d100 (`roll`, typed from physical dice; omitted:
        server dice). One transaction, the same log entries as the three steps. The defense
        is the target's controller's choice: you must control both sides (the GM controls
        everyone). A feint takes no defense."""
        data = self._checked(StrikeSerializer)
        decl, entries = _declared(
            services.strike,
            **self._declaration(data),
            defense=data.get("defense"),
            roll=data.get("roll"),
        )
        context = {"request": request}
        return Response(
            {
                "attack": DeclarationSerializer(decl, context=context).data,
                "entries": LogEntrySerializer(entries, many=True, context=context).data,
            },
            status=status.HTTP_201_CREATED,
        )

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "after", ID_SCHEMA, description="Only entries with a larger id (catch up)."
            )
        ],
        responses={
            200: LogEntrySerializer(many=True),
            400: OpenApiResponse(description="`after` is not an entry id."),
            404: None,
        },
    )
    # At most 500 entries after `after`, never a page: documented as the array it is.
    @action(detail=True, methods=["get"], pagination_class=None)
    def events(self, request: Request, pk: str) -> Response:
        """The combat log, oldest first, as this viewer may read it (at most 500)."""
        encounter = self._encounter()
        entries = CombatLogEntry.objects.filter(encounter=encounter).select_related("actor")
        after = request.query_params.get("after")
        if after is not None:
            after_id = parse_id(after)
            if after_id is None:
                raise serializers.ValidationError({"after": ["Give an entry id (a number)."]})
            entries = entries.filter(pk__gt=after_id)
        page = list(entries.order_by("pk")[:500])
        for e in page:
            e.encounter = encounter
        return Response(LogEntrySerializer(page, many=True, context={"request": request}).data)


#: What a declaration's field at fault is told (combat.services.CombatError.fields).
FIELD_ERRORS: dict[str, Any] = {
    "attacker": ["Not a participant of this encounter."],
    "target": ["Not a participant of this encounter."],
    "zone": "Not a zone of the target.",
    "weapon": "Not a weapon of the attacker.",
}


def _declared(fn: Any, **kwargs: Any) -> Any:
    """A declaration: an input at fault is a 400 naming it, in the words of ``FIELD_ERRORS``
    (the handler's own shape, ``{name: [reason]}``, is for the other refusals)."""
    try:
        return fn(**kwargs)
    except Encounter.DoesNotExist as exc:
        raise Http404("No such encounter.") from exc
    except services.CombatError as exc:
        if not exc.fields:
            raise
        raise serializers.ValidationError(
            {
                name: str(exc) if exc.explains else FIELD_ERRORS.get(name, str(exc))
                for name in exc.fields
            }
        ) from exc
