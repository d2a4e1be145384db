"""The combat API's serializers: what it answers (participants, attacks with their odds, log
entries, encounters) and what it reads (each action's body)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from combat import services, wound_words
from combat.api.base import FieldsBuiltOnce, hidden_for
from combat.api.shapes import nullable, ref
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
from sheets.models import BodyZone, Campaign, Weapon
from sheets.numbers import aptitudes_of

# --- Output --------------------------------------------------------------------------------


class CombatZoneSerializer(serializers.ModelSerializer[BodyZone]):
    class Meta:
        model = BodyZone
        fields = ["id", "name", "wounds", "arm", "arm_max", "arm_bonus", "grievous"]


class CombatWeaponSerializer(serializers.ModelSerializer[Weapon]):
    class Meta:
        model = Weapon
        fields = ["id", "name", "category", "dmg", "dmg_max", "bonus"]


class NumbersSerializer(serializers.Serializer[Any]):
    vitality = serializers.IntegerField()
    vit_max = serializers.IntegerField()
    bzf = serializers.IntegerField()
    fate = serializers.IntegerField()
    itv = serializers.IntegerField(allow_null=True)
    initiative = serializers.IntegerField(allow_null=True)
    zones = CombatZoneSerializer(many=True)
    weapons = CombatWeaponSerializer(many=True)


@extend_schema_field(ref("StoredConditions"))
class StoredConditionsField(serializers.JSONField):
    """A participant's conditions as stored (combat/conditions.py)."""


class ParticipantSerializer(serializers.ModelSerializer[Participant]):
    conditions = StoredConditionsField(read_only=True)
    name = serializers.CharField(source="character.name", read_only=True)
    is_npc = serializers.BooleanField(source="character.is_npc", read_only=True)
    owner = serializers.CharField(source="character.owner.username", read_only=True)
    numbers = serializers.SerializerMethodField(
        help_text="Vitality, zones, weapons and initiative; null when the GM hides them."
    )
    wounds_in_words = serializers.SerializerMethodField(
        help_text="For a viewer kept from a hidden participant's numbers, its state in one "
        "word when the GM chose to tell it (`hidden_shows`: words); null otherwise."
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
            "wounds_in_words",
        ]
        read_only_fields = fields

    @extend_schema_field(NumbersSerializer(allow_null=True))
    def get_numbers(self, obj: Participant) -> dict[str, Any] | None:
        if obj.pk in hidden_for(self.context["request"], obj.encounter):
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

    @extend_schema_field(serializers.ChoiceField(choices=wound_words.WORDS, allow_null=True))
    def get_wounds_in_words(self, obj: Participant) -> str | None:
        # The one hidden rule decides who is kept from the numbers; the GM's choice decides
        # whether those viewers get the word.
        if obj.pk not in hidden_for(self.context["request"], obj.encounter):
            return None
        if obj.hidden_shows != Participant.HiddenShows.WORDS:
            return None
        c = obj.character
        return wound_words.wounds_in_words(
            state=obj.state,
            vitality=c.vitality,
            vit_max=omg.derived(aptitudes_of(c), bzf=c.bzf).vit,
            zones=((z.wounds, c.bzf) for z in c.zones.all()),
        )


class OddsSerializer(serializers.Serializer[Any]):
    pvd = serializers.CharField()
    pro = serializers.IntegerField()
    dif = serializers.IntegerField()
    hit = serializers.IntegerField(help_text="Faces out of 100 that hit.")
    second_hit = serializers.IntegerField()
    epic_success = serializers.IntegerField()
    epic_failure = serializers.IntegerField()
    mean_damage = serializers.FloatField(allow_null=True)


class DeclarationSerializer(FieldsBuiltOnce[Declaration]):
    # A plain string: an enum named "status" would collide with the encounter's.
    status = serializers.CharField(
        read_only=True, help_text="pending (awaiting the defense), defended, resolved, cancelled"
    )
    # Stored as "" until the target defends; sent as null, the one value outside the enum.
    defense = serializers.ChoiceField(
        choices=DEFENSE_MODES,
        allow_null=True,
        read_only=True,
        help_text="dodge, parry or block once the target has defended; null until then (and "
        "for a feint, met with Focus).",
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
        data["defense"] = instance.defense or None
        # A hidden attacker's weapon is one of its numbers (docs/security.md).
        if instance.attacker_id in hidden_for(self.context["request"], instance.encounter):
            data["weapon"] = None
        return data

    @extend_schema_field(nullable(ref("DeclarationOdds")))
    def get_odds(self, obj: Declaration) -> dict[str, Any] | None:
        if obj.status not in (Declaration.Status.PENDING, Declaration.Status.DEFENDED):
            return None
        return services.odds_for_viewer(obj, hidden_for(self.context["request"], obj.encounter))


class LogEntrySerializer(FieldsBuiltOnce[CombatLogEntry]):
    actor = serializers.CharField(source="actor.username", read_only=True, allow_null=True)
    text = serializers.SerializerMethodField()
    roll = serializers.SerializerMethodField(
        help_text="The d100 (1 to 100); null for an entry without one, and when a hidden "
        "participant is involved (with the degree it bounds the hidden side's numbers)."
    )
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
        return obj.hides_numbers(hidden_for(self.context["request"], obj.encounter))

    @extend_schema_field({"type": "integer", "nullable": True, "minimum": 1, "maximum": 100})
    def get_roll(self, obj: CombatLogEntry) -> int | None:
        return obj.roll_for(hidden_for(self.context["request"], obj.encounter))

    @extend_schema_field(OpenApiTypes.STR)
    def get_text(self, obj: CombatLogEntry) -> str:
        return obj.text_for(
            self.context["request"].user, hidden_for(self.context["request"], obj.encounter)
        )

    @extend_schema_field(nullable(ref("LogDetails")))
    def get_details(self, obj: CombatLogEntry) -> dict[str, Any] | None:
        if self._redacted(obj):
            return None
        details = {k: v for k, v in obj.payload.items() if k not in ("text", "public_text")}
        # The kind tells the shapes of the details apart (combat/api/shapes.py).
        return {"kind": obj.kind, **details}


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
            fields["campaign"].queryset = Campaign.objects.for_user(request.user)  # type: ignore[attr-defined]  # a PrimaryKeyRelatedField
        return fields

    @extend_schema_field(OpenApiTypes.BOOL)
    def get_is_gm(self, obj: Encounter) -> bool:
        return bool(obj.campaign.gm_id == self.context["request"].user.pk)

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
        return ParticipantSerializer(
            encounter_participants(obj), many=True, context=self.context
        ).data

    @extend_schema_field(DeclarationSerializer(many=True))
    def get_attacks(self, obj: Encounter) -> Any:
        return DeclarationSerializer(list(_open_attacks(obj)), many=True, context=self.context).data


def encounter_participants(encounter: Encounter) -> list[Participant]:
    ps = list(
        encounter.participants.select_related("character__owner").prefetch_related(
            "character__zones", "character__weapons"
        )
    )
    for p in ps:
        p.encounter = encounter
    return ps


def _open_attacks(encounter: Encounter) -> QuerySet[Declaration]:
    return Declaration.objects.filter(
        encounter=encounter,
        status__in=[Declaration.Status.PENDING, Declaration.Status.DEFENDED],
    ).select_related(
        "zone", "weapon", "attacker__character", "target__character", "encounter__campaign"
    )


# --- Input ---------------------------------------------------------------------------------


class ParticipantsAddSerializer(fields.StrictSerializer):
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


class ParticipantUpdateSerializer(fields.StrictSerializer):
    hidden = fields.BooleanField(required=False)
    on_alert = fields.BooleanField(required=False)
    gm_order = fields.IntegerField(required=False, min_value=0, max_value=1000)
    itv = fields.IntegerField(required=False, min_value=0, max_value=100)
    state = serializers.ChoiceField(choices=Participant.State.choices, required=False)
    hidden_shows = serializers.ChoiceField(
        choices=Participant.HiddenShows.choices,
        required=False,
        help_text="What players see of this participant's wounds while it is hidden: "
        "nothing, or its state in words (`wounds_in_words`).",
    )
    clear_conditions = fields.BooleanField(default=False)


class NextTurnSerializer(fields.StrictSerializer):
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


#: A declaration's strike modes and maneuvers (DeclareActionEnum in the schema, shared by the
#: declaration and the one-call strike: config/settings.py names it).
ATTACK_ACTIONS = [*STRIKE_MODES, *MANEUVERS]


class DeclareSerializer(fields.StrictSerializer):
    attacker = fields.IntegerField(help_text="Participant id.")
    target = fields.IntegerField(help_text="Participant id.")
    zone = fields.IntegerField(
        required=False, allow_null=True, help_text="Body zone id of the target's character."
    )
    weapon = fields.IntegerField(
        required=False, allow_null=True, help_text="Weapon id; null: unarmed or improvised."
    )
    action = serializers.ChoiceField(choices=ATTACK_ACTIONS)
    counterattack = fields.BooleanField(default=False)


class DefenseSerializer(fields.StrictSerializer):
    defense = serializers.ChoiceField(choices=DEFENSE_MODES)


class RollSerializer(fields.StrictSerializer):
    roll = fields.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=100,
        help_text="The physical d100 rolled at the table (00 is 100); omit for server dice.",
    )


class StaminaSerializer(RollSerializer):
    difficulty = fields.IntegerField(
        required=False,
        allow_null=True,
        min_value=omg.DIF_MIN,
        max_value=omg.DIF_MAX,
        help_text=(
            "The GM's DIF for the test: a Difficulty Category (Casual 10, Moderate 20, "
            "Ambitious 30, Formidable 40, Supreme 50) or any whole number from 5 to 50; "
            "omit (or null) for Moderate 20. Only the GM may set it."
        ),
    )


class StrikeSerializer(DeclareSerializer):
    """A whole strike: the declaration, the target's defense and the attacker's d100."""

    defense = serializers.ChoiceField(
        choices=DEFENSE_MODES,
        required=False,
        allow_null=True,
        help_text="The target's defense; required except for a feint (met with Focus).",
    )
    roll = fields.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=100,
        help_text="The physical d100 rolled at the table (00 is 100); omit for server dice.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        feint = attrs["action"] == omg.Maneuver.FEINT.value
        if feint and attrs.get("defense"):
            raise serializers.ValidationError(
                {"defense": "A feint is met with Focus, not a defense mode."}
            )
        if not feint and not attrs.get("defense"):
            raise serializers.ValidationError({"defense": "Choose dodge, parry or block."})
        return attrs


class StrikeResultSerializer(serializers.Serializer[Any]):
    attack = DeclarationSerializer()
    entries = LogEntrySerializer(many=True, help_text="Declare, defend (not for a feint), roll.")


class FateSerializer(RollSerializer):
    action = serializers.ChoiceField(choices=[a.value for a in omg.FateAction])
    spender = fields.IntegerField(
        required=False,
        help_text="Participant whose Fate is spent (yours); default: your only one.",
    )


class AdjustSerializer(fields.StrictSerializer):
    zone = fields.IntegerField(help_text="Body zone id.")
    amount = fields.IntegerField(
        min_value=-1000, max_value=1000, help_text="Wounds to add; negative heals."
    )


class FateResultSerializer(serializers.Serializer[Any]):
    fate = LogEntrySerializer()
    reroll = LogEntrySerializer(allow_null=True)
