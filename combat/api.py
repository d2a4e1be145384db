"""REST API for the combat tracker: everything the encounter page does, with the same rules
(outsiders 404, players act for their own characters, the GM for anyone and for the
encounter itself) and the same per-viewer view (hidden NPC numbers are null for players).

Actions answer with the combat log entry they wrote, the same object the live feed sends.
409 means someone else acted first (the attack is already rolled, a value changed since);
400 says why the fight does not allow the action.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import mixins, permissions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import APIException
from rest_framework.exceptions import PermissionDenied as DRFPermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response

from combat import access, services
from combat.models import (
    DEFENSE_MODES,
    MANEUVERS,
    STRIKE_MODES,
    CombatLogEntry,
    Declaration,
    Encounter,
    Participant,
)
from rules.engine import omg
from sheets import fields
from sheets.ids import ID_SCHEMA, parse_id
from sheets.models import BodyZone, Campaign, Character, Weapon
from sheets.numbers import aptitudes_of

# --- Errors --------------------------------------------------------------------------------


class Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "Someone else acted first."
    default_code = "conflict"


class NotAllowedNow(APIException):
    status_code = status.HTTP_400_BAD_REQUEST
    default_detail = "The fight does not allow this now."
    default_code = "invalid"


def _run(fn: Any, **kwargs: Any) -> Any:
    try:
        return fn(**kwargs)
    except services.CombatConflict as exc:
        raise Conflict(str(exc)) from exc
    except services.CombatError as exc:
        raise NotAllowedNow(str(exc)) from exc


def _hidden(request: Request, encounter: Encounter) -> set[int]:
    cache = request.__dict__.setdefault("_combat_hidden", {})
    if encounter.pk not in cache:
        cache[encounter.pk] = access.hidden_ids(encounter, request.user)
    return cache[encounter.pk]


# --- Output --------------------------------------------------------------------------------


class CombatZoneSerializer(serializers.ModelSerializer):  # type: ignore[type-arg]
    class Meta:
        model = BodyZone
        fields = ["id", "name", "wounds", "arm", "arm_max", "arm_bonus", "grievous"]


class CombatWeaponSerializer(serializers.ModelSerializer):  # type: ignore[type-arg]
    class Meta:
        model = Weapon
        fields = ["id", "name", "category", "dmg", "dmg_max", "bonus"]


class NumbersSerializer(serializers.Serializer):  # type: ignore[type-arg]
    vitality = serializers.IntegerField()
    vit_max = serializers.IntegerField()
    bzf = serializers.IntegerField()
    fate = serializers.IntegerField()
    itv = serializers.IntegerField(allow_null=True)
    initiative = serializers.IntegerField(allow_null=True)
    zones = CombatZoneSerializer(many=True)
    weapons = CombatWeaponSerializer(many=True)


class ParticipantSerializer(serializers.ModelSerializer):  # type: ignore[type-arg]
    name = serializers.CharField(source="character.name", read_only=True)
    is_npc = serializers.BooleanField(source="character.is_npc", read_only=True)
    owner = serializers.CharField(source="character.owner.username", read_only=True)
    numbers = serializers.SerializerMethodField(
        help_text="Vitality, zones, weapons and initiative; null when the GM hides them."
    )

    class Meta:
        model = Participant
        fields = [
            "id",
            "character",
            "name",
            "is_npc",
            "owner",
            "hidden",
            "on_alert",
            "gm_order",
            "position",
            "state",
            "conditions",
            "counterattacks",
            "stamina_due",
            "numbers",
        ]
        read_only_fields = fields

    @extend_schema_field(NumbersSerializer(allow_null=True))
    def get_numbers(self, obj: Participant) -> dict[str, Any] | None:
        if obj.pk in _hidden(self.context["request"], obj.encounter):
            return None
        c = obj.character
        return {
            "vitality": c.vitality,
            "vit_max": omg.derived(aptitudes_of(c), bzf=c.bzf).vit,
            "bzf": c.bzf,
            "fate": c.fate,
            "itv": obj.itv,
            "initiative": obj.initiative,
            "zones": CombatZoneSerializer(c.zones.all(), many=True).data,
            "weapons": CombatWeaponSerializer(c.weapons.all(), many=True).data,
        }


class OddsSerializer(serializers.Serializer):  # type: ignore[type-arg]
    pvd = serializers.CharField()
    pro = serializers.IntegerField()
    dif = serializers.IntegerField()
    hit = serializers.IntegerField(help_text="Faces out of 100 that hit.")
    second_hit = serializers.IntegerField()
    epic_success = serializers.IntegerField()
    epic_failure = serializers.IntegerField()
    mean_damage = serializers.FloatField(allow_null=True)


class DeclarationSerializer(serializers.ModelSerializer):  # type: ignore[type-arg]
    # A plain string: an enum named "status" would collide with the encounter's.
    status = serializers.CharField(
        read_only=True, help_text="pending (awaiting the defense), defended, resolved, cancelled"
    )
    odds = serializers.SerializerMethodField(
        help_text="PvD and exact odds per defense mode (the declared one once declared; "
        "'focus' for a feint). Against a hidden participant only your side's number is "
        "given (the other and the odds are null); null when both are hidden."
    )

    class Meta:
        model = Declaration
        fields = [
            "id",
            "encounter",
            "round",
            "attacker",
            "target",
            "zone",
            "weapon",
            "action",
            "defense",
            "counterattack",
            "status",
            "odds",
            "created_at",
        ]
        read_only_fields = fields

    def to_representation(self, instance: Declaration) -> dict[str, Any]:
        data = super().to_representation(instance)
        # A hidden attacker's weapon is one of its numbers (docs/security.md).
        if instance.attacker_id in _hidden(self.context["request"], instance.encounter):
            data["weapon"] = None
        return data

    @extend_schema_field(
        {"type": "object", "nullable": True, "additionalProperties": {"type": "object"}}
    )
    def get_odds(self, obj: Declaration) -> dict[str, Any] | None:
        if obj.status not in (Declaration.Status.PENDING, Declaration.Status.DEFENDED):
            return None
        return services.odds_for_viewer(obj, _hidden(self.context["request"], obj.encounter))


class LogEntrySerializer(serializers.ModelSerializer):  # type: ignore[type-arg]
    actor = serializers.CharField(source="actor.username", read_only=True, allow_null=True)
    text = serializers.SerializerMethodField()
    details = serializers.SerializerMethodField(
        help_text="The engine's result and every change with its before/after value; null "
        "when a hidden participant is involved."
    )

    class Meta:
        model = CombatLogEntry
        fields = [
            "id",
            "seq",
            "kind",
            "actor",
            "participant",
            "declaration",
            "text",
            "roll",
            "physical",
            "reverts",
            "details",
            "created_at",
        ]
        read_only_fields = fields

    def _redacted(self, obj: CombatLogEntry) -> bool:
        hidden = _hidden(self.context["request"], obj.encounter)
        return bool(hidden & set(obj.payload.get("involves", [])))

    @extend_schema_field(OpenApiTypes.STR)
    def get_text(self, obj: CombatLogEntry) -> str:
        return obj.text_for(
            self.context["request"].user, _hidden(self.context["request"], obj.encounter)
        )

    @extend_schema_field({"type": "object", "nullable": True})
    def get_details(self, obj: CombatLogEntry) -> dict[str, Any] | None:
        if self._redacted(obj):
            return None
        return {k: v for k, v in obj.payload.items() if k not in ("text", "public_text")}


class EncounterSerializer(fields.StrictModelSerializer):
    campaign = fields.PrimaryKeyRelatedField(queryset=Campaign.objects.all())
    is_gm = serializers.SerializerMethodField()

    class Meta:
        model = Encounter
        fields = [
            "id",
            "campaign",
            "name",
            "status",
            "round",
            "turn",
            "countering",
            "is_gm",
            "created_at",
            "updated_at",
        ]
        read_only_fields = [
            "id",
            "status",
            "round",
            "turn",
            "countering",
            "created_at",
            "updated_at",
        ]

    def get_fields(self) -> dict[str, Any]:
        # Only the user's campaigns exist here: another campaign's id gets the answer of an id
        # that does not exist, so the refusal does not tell that it is there.
        fields = super().get_fields()
        request = self.context.get("request")
        if request is not None and request.user.is_authenticated:
            fields["campaign"].queryset = Campaign.objects.for_user(request.user)
        return fields

    @extend_schema_field(OpenApiTypes.BOOL)
    def get_is_gm(self, obj: Encounter) -> bool:
        return obj.campaign.gm_id == self.context["request"].user.pk

    def validate_campaign(self, campaign: Campaign) -> Campaign:
        if self.instance is not None and campaign.pk != self.instance.campaign_id:
            raise serializers.ValidationError("An encounter cannot move to another campaign.")
        return campaign


class EncounterDetailSerializer(EncounterSerializer):
    participants = serializers.SerializerMethodField()
    attacks = serializers.SerializerMethodField(help_text="Open attacks (declared, not rolled).")

    class Meta(EncounterSerializer.Meta):
        fields = [*EncounterSerializer.Meta.fields, "participants", "attacks"]

    @extend_schema_field(ParticipantSerializer(many=True))
    def get_participants(self, obj: Encounter) -> Any:
        return ParticipantSerializer(_participants(obj), many=True, context=self.context).data

    @extend_schema_field(DeclarationSerializer(many=True))
    def get_attacks(self, obj: Encounter) -> Any:
        return DeclarationSerializer(_open_attacks(obj), many=True, context=self.context).data


def _participants(encounter: Encounter) -> list[Participant]:
    ps = list(
        encounter.participants.select_related("character__owner").prefetch_related(
            "character__zones", "character__weapons"
        )
    )
    for p in ps:
        p.encounter = encounter
    return ps


def _open_attacks(encounter: Encounter) -> list[Declaration]:
    decls = list(
        Declaration.objects.filter(
            encounter=encounter,
            status__in=[Declaration.Status.PENDING, Declaration.Status.DEFENDED],
        ).select_related(
            "zone", "weapon", "attacker__character", "target__character", "encounter__campaign"
        )
    )
    return decls


# --- Input ---------------------------------------------------------------------------------


class ParticipantsAddSerializer(serializers.Serializer):  # type: ignore[type-arg]
    characters = serializers.ListField(
        child=fields.IntegerField(min_value=1),
        required=False,
        help_text="Campaign characters to add as they are (player characters, NPCs).",
    )
    npc = fields.IntegerField(
        required=False, min_value=1, help_text="An NPC to add as `count` separate copies."
    )
    count = fields.IntegerField(required=False, min_value=1, max_value=services.MAX_COPIES)
    hidden = fields.BooleanField(default=False, help_text="Hide the NPCs' numbers.")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if bool(attrs.get("characters")) == bool(attrs.get("npc")):
            raise serializers.ValidationError("Send either `characters` or `npc` (with `count`).")
        return attrs


class ParticipantUpdateSerializer(serializers.Serializer):  # type: ignore[type-arg]
    hidden = fields.BooleanField(required=False)
    on_alert = fields.BooleanField(required=False)
    gm_order = fields.IntegerField(required=False, min_value=0, max_value=1000)
    itv = fields.IntegerField(required=False, min_value=0, max_value=100)
    state = serializers.ChoiceField(choices=Participant.State.choices, required=False)
    clear_conditions = fields.BooleanField(default=False)


class NextTurnSerializer(serializers.Serializer):  # type: ignore[type-arg]
    include_skipped = fields.BooleanField(
        default=False, help_text="Do not skip the down, unconscious or busy."
    )
    round = fields.IntegerField(
        required=False,
        min_value=0,
        max_value=10_000,
        help_text="The round you saw. With `turn`: if the fight has moved on since (a "
        "double click, another screen), the answer is 409 and nothing changes.",
    )
    turn = fields.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        help_text="The participant whose turn you saw (null: nobody's); sent with `round`.",
    )
    countering = fields.BooleanField(
        required=False,
        help_text="Whether you saw the round's end held for counterattacks (optional).",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("round" in attrs) != ("turn" in attrs):
            raise serializers.ValidationError("Send `round` and `turn` together.")
        return attrs

    def seen(self) -> services.SeenTurn | None:
        data = self.validated_data
        if "round" not in data:
            return None
        return services.SeenTurn(data["round"], data["turn"], data.get("countering"))


class DeclareSerializer(serializers.Serializer):  # type: ignore[type-arg]
    attacker = fields.IntegerField(help_text="Participant id.")
    target = fields.IntegerField(help_text="Participant id.")
    zone = fields.IntegerField(
        required=False, allow_null=True, help_text="Body zone id of the target's character."
    )
    weapon = fields.IntegerField(
        required=False, allow_null=True, help_text="Weapon id; null: unarmed or improvised."
    )
    action = serializers.ChoiceField(choices=[*STRIKE_MODES, *MANEUVERS])
    counterattack = fields.BooleanField(default=False)


class DefenseSerializer(serializers.Serializer):  # type: ignore[type-arg]
    defense = serializers.ChoiceField(choices=DEFENSE_MODES)


class RollSerializer(serializers.Serializer):  # type: ignore[type-arg]
    roll = fields.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=100,
        help_text="The physical d100 rolled at the table (00 is 100); omit for server dice.",
    )


class FateSerializer(RollSerializer):
    action = serializers.ChoiceField(choices=[a.value for a in omg.FateAction])
    spender = fields.IntegerField(
        required=False,
        help_text="Participant whose Fate is spent (yours); default: your only one.",
    )


class AdjustSerializer(serializers.Serializer):  # type: ignore[type-arg]
    zone = fields.IntegerField(help_text="Body zone id.")
    amount = fields.IntegerField(
        min_value=-1000, max_value=1000, help_text="Wounds to add; negative heals."
    )


class FateResultSerializer(serializers.Serializer):  # type: ignore[type-arg]
    fate = LogEntrySerializer()
    reroll = LogEntrySerializer(allow_null=True)


def _responses(ok: Any, code: int = 200) -> dict[int, Any]:
    return {
        code: ok,
        400: OpenApiResponse(description="Not possible now, or invalid input (with the reason)."),
        403: OpenApiResponse(description="Not yours to do (players act for their own)."),
        404: OpenApiResponse(description="No such object, or not in your campaigns."),
        409: OpenApiResponse(description="Someone else acted first; nothing was done."),
    }


# --- Views ---------------------------------------------------------------------------------


class IsGMOrReadOnly(permissions.BasePermission):
    message = "Only the campaign's GM can change this encounter."

    def has_object_permission(self, request: Request, view: Any, obj: Encounter) -> bool:
        return request.method in permissions.SAFE_METHODS or obj.campaign.is_gm(request.user)


@extend_schema_view(
    list=extend_schema(
        parameters=[
            OpenApiParameter(
                "campaign", ID_SCHEMA, description="Only the encounters of this campaign."
            )
        ]
    )
)
class EncounterViewSet(viewsets.ModelViewSet):  # type: ignore[type-arg]
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

    def get_serializer_class(self) -> type[serializers.BaseSerializer]:  # type: ignore[type-arg]
        if self.action == "retrieve":
            return EncounterDetailSerializer
        return EncounterSerializer

    def perform_create(self, serializer: EncounterSerializer) -> None:  # type: ignore[override]
        campaign = serializer.validated_data["campaign"]
        if not campaign.is_gm(self.request.user):
            raise DRFPermissionDenied("Only the campaign's GM runs encounters.")
        encounter, _ = _run(
            services.create_encounter,
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
        _run(services.delete_encounter, encounter=instance, actor=self.request.user)

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
        responses=_responses(LogEntrySerializer, 201),
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
                _participants(encounter), many=True, context={"request": request}
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
            entry = _run(
                services.add_npc_copies,
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
            entry = _run(
                services.add_participants,
                encounter=encounter,
                characters=characters,
                hidden=data["hidden"],
                actor=request.user,
            )
        return self._entry(entry, 201)

    @extend_schema(request=None, responses=_responses(LogEntrySerializer))
    @action(detail=True, methods=["post"])
    def start(self, request: Request, pk: str) -> Response:
        """Roll missing ITVs, order the initiative and begin round 1. GM only."""
        encounter = self._encounter(write=True)
        return self._entry(_run(services.start_encounter, encounter=encounter, actor=request.user))

    @extend_schema(request=None, responses=_responses(LogEntrySerializer))
    @action(detail=True, methods=["post"])
    def initiative(self, request: Request, pk: str) -> Response:
        """Order the initiative again (after on-alert or tie-break changes). GM only."""
        encounter = self._encounter(write=True)
        return self._entry(_run(services.roll_initiative, encounter=encounter, actor=request.user))

    @extend_schema(request=NextTurnSerializer, responses=_responses(LogEntrySerializer))
    @action(detail=True, methods=["post"], url_path="next-turn")
    def next_turn(self, request: Request, pk: str) -> Response:
        """Pass the turn (the GM, or whoever is acting); queued counterattacks come before
        the round ends."""
        encounter = self._encounter()
        body = NextTurnSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        entry = _run(
            services.next_turn,
            encounter=encounter,
            include_skipped=body.validated_data["include_skipped"],
            seen=body.seen(),
            actor=request.user,
        )
        return self._entry(entry)

    @extend_schema(request=None, responses=_responses(LogEntrySerializer))
    @action(detail=True, methods=["post"])
    def undo(self, request: Request, pk: str) -> Response:
        """Undo the last action still in force, with a compensating entry. GM only."""
        encounter = self._encounter(write=True)
        return self._entry(_run(services.undo_last, encounter=encounter, actor=request.user))

    @extend_schema(request=None, responses=_responses(LogEntrySerializer))
    @action(detail=True, methods=["post"])
    def finish(self, request: Request, pk: str) -> Response:
        """End the fight; open attacks are called off. GM only."""
        encounter = self._encounter(write=True)
        return self._entry(_run(services.finish_encounter, encounter=encounter, actor=request.user))

    @extend_schema(request=AdjustSerializer, responses=_responses(LogEntrySerializer))
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
        entry = _run(
            services.adjust_zone,
            encounter=encounter,
            zone=zone,
            amount=body.validated_data["amount"],
            actor=request.user,
        )
        return self._entry(entry)

    @extend_schema(request=DeclareSerializer, responses=_responses(DeclarationSerializer, 201))
    @action(detail=True, methods=["post"])
    def attacks(self, request: Request, pk: str) -> Response:
        """Declare an attack: attacker, target, zone, weapon, strike mode or maneuver. For
        your own characters (the GM: anyone)."""
        encounter = self._encounter()
        body = DeclareSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        ps = {p.pk: p for p in encounter.participants.select_related("character")}
        attacker, target = ps.get(data["attacker"]), ps.get(data["target"])
        if attacker is None or target is None:
            pairs = (("attacker", attacker), ("target", target))
            raise serializers.ValidationError(
                {name: ["Not a participant of this encounter."] for name, p in pairs if p is None}
            )
        attacker.encounter = target.encounter = encounter
        if not attacker.is_controlled_by(request.user):
            raise DRFPermissionDenied("You can only act for your own characters.")
        zone = weapon = None
        if data.get("zone") is not None:
            zone = BodyZone.objects.filter(pk=data["zone"], character=target.character).first()
            if zone is None:
                raise serializers.ValidationError({"zone": "Not a zone of the target."})
        if data.get("weapon") is not None:
            weapon = Weapon.objects.filter(pk=data["weapon"], character=attacker.character).first()
            if weapon is None:
                raise serializers.ValidationError({"weapon": "Not a weapon of the attacker."})
        decl, _ = _run(
            services.declare_attack,
            encounter=encounter,
            attacker=attacker,
            target=target,
            action=data["action"],
            zone=zone,
            weapon=weapon,
            counterattack=data["counterattack"],
            actor=request.user,
        )
        # Reloaded with what the serializer reads; several attacks may be open at once.
        decl = next((d for d in _open_attacks(encounter) if d.pk == decl.pk), decl)
        return Response(
            DeclarationSerializer(decl, context={"request": request}).data,
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
        entries = list(entries.order_by("pk")[:500])
        for e in entries:
            e.encounter = encounter
        return Response(LogEntrySerializer(entries, many=True, context={"request": request}).data)


class ParticipantViewSet(mixins.RetrieveModelMixin, viewsets.GenericViewSet):  # type: ignore[type-arg]
    """One participant of an encounter; the GM changes its switches."""

    serializer_class = ParticipantSerializer
    permission_classes = [permissions.IsAuthenticated]

    def get_queryset(self) -> QuerySet[Participant]:
        return Participant.objects.filter(
            encounter__in=Encounter.objects.for_user(self.request.user)
        ).select_related("character__owner", "encounter__campaign")

    @extend_schema(request=ParticipantUpdateSerializer, responses=_responses(LogEntrySerializer))
    @action(detail=True, methods=["post"], url_path="update")
    def update_state(self, request: Request, pk: str) -> Response:
        """Hide or show numbers, on alert, tie-break order, ITV, state, clear conditions.
        GM only."""
        participant = self.get_object()
        body = ParticipantUpdateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        entry = _run(
            services.update_participant,
            participant=participant,
            actor=request.user,
            **body.validated_data,
        )
        return Response(LogEntrySerializer(entry, context={"request": request}).data)

    @extend_schema(request=RollSerializer, responses=_responses(LogEntrySerializer))
    @action(detail=True, methods=["post"])
    def stamina(self, request: Request, pk: str) -> Response:
        """The Stamina test a grievous wound or a stun calls for (failure: unconscious)."""
        participant = self.get_object()
        body = RollSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        entry = _run(
            services.stamina_check,
            participant=participant,
            roll=body.validated_data.get("roll"),
            actor=request.user,
        )
        return Response(LogEntrySerializer(entry, context={"request": request}).data)


class AttackViewSet(mixins.RetrieveModelMixin, viewsets.GenericViewSet):  # type: ignore[type-arg]
    """A declared attack: its defense, its roll, calling it off."""

    serializer_class = DeclarationSerializer
    permission_classes = [permissions.IsAuthenticated]

    def get_queryset(self) -> QuerySet[Declaration]:
        return Declaration.objects.filter(
            encounter__in=Encounter.objects.for_user(self.request.user)
        ).select_related(
            "zone", "weapon", "attacker__character", "target__character", "encounter__campaign"
        )

    def _entry(self, entry: CombatLogEntry) -> Response:
        return Response(LogEntrySerializer(entry, context={"request": self.request}).data)

    @extend_schema(request=DefenseSerializer, responses=_responses(LogEntrySerializer))
    @action(detail=True, methods=["post"])
    def defense(self, request: Request, pk: str) -> Response:
        """Dodge, parry or block: the target's player, or the GM."""
        declaration = self.get_object()
        body = DefenseSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        return self._entry(
            _run(
                services.declare_defense,
                declaration=declaration,
                defense=body.validated_data["defense"],
                actor=request.user,
            )
        )

    @extend_schema(request=RollSerializer, responses=_responses(LogEntrySerializer))
    @action(detail=True, methods=["post"])
    def roll(self, request: Request, pk: str) -> Response:
        """Roll and resolve: server dice, or the typed value of physical dice. Resolves
        once: a second call answers 409."""
        declaration = self.get_object()
        body = RollSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        return self._entry(
            _run(
                services.resolve,
                declaration=declaration,
                roll=body.validated_data.get("roll"),
                actor=request.user,
            )
        )

    @extend_schema(request=None, responses=_responses(LogEntrySerializer))
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: str) -> Response:
        """Call the attack off (its attacker's player, or the GM)."""
        return self._entry(
            _run(services.cancel_declaration, declaration=self.get_object(), actor=request.user)
        )


class RollViewSet(mixins.RetrieveModelMixin, viewsets.GenericViewSet):  # type: ignore[type-arg]
    """Rolls (combat log entries with dice); Fate re-rolls or revokes the latest one."""

    serializer_class = LogEntrySerializer
    permission_classes = [permissions.IsAuthenticated]

    def get_queryset(self) -> QuerySet[CombatLogEntry]:
        return CombatLogEntry.objects.filter(
            encounter__in=Encounter.objects.for_user(self.request.user), roll__isnull=False
        ).select_related("encounter__campaign", "actor", "declaration")

    @extend_schema(request=FateSerializer, responses=_responses(FateResultSerializer))
    @action(detail=True, methods=["post"])
    def fate(self, request: Request, pk: str) -> Response:
        """Spend 1 Fate of your character to re-roll or revoke this roll, while no later
        roll exists: its effects are undone exactly, then the re-roll is applied."""
        entry = self.get_object()
        body = FateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        mine = services.fate_spenders(entry, request.user)
        if "spender" in data:
            spender = next((p for p in mine if p.pk == data["spender"]), None)
            if spender is None:
                raise DRFPermissionDenied("Spend the Fate of your own character.")
        elif len(mine) == 1:
            spender = mine[0]
        else:
            raise serializers.ValidationError(
                {"spender": "Say whose Fate to spend." if mine else "You have no one here."}
            )
        spender.encounter = entry.encounter
        fate_entry, new = _run(
            services.spend_fate,
            entry=entry,
            spender=spender,
            action=data["action"],
            roll=data.get("roll"),
            actor=request.user,
        )
        context = {"request": request}
        return Response(
            {
                "fate": LogEntrySerializer(fate_entry, context=context).data,
                "reroll": LogEntrySerializer(new, context=context).data if new else None,
            }
        )


def register(router: Any) -> None:
    """Add the combat endpoints to the API router (config/api_urls.py)."""
    router.register("encounters", EncounterViewSet, basename="encounter")
    router.register("participants", ParticipantViewSet, basename="participant")
    router.register("attacks", AttackViewSet, basename="attack")
    router.register("rolls", RollViewSet, basename="roll")
