"""The shapes of a sheet's computed parts in the schema (CharacterSerializer's composites,
derived numbers, strikes, defenses, discipline PROs and creation record), so that a generated
client reads each as a typed object. Documentation only: the serializer builds the values."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from rules.engine.omg_data import APTITUDES, COMPOSITES


class ScoreSerializer(serializers.Serializer[Any]):
    """An aptitude or composite: its value, the PRO it tests at and the DIF it sets."""

    value = serializers.IntegerField()
    pro = serializers.IntegerField()
    dif = serializers.IntegerField()


def _scores(name: str, abbrs: list[str], doc: str) -> type[serializers.Serializer[Any]]:
    fields = {abbr: ScoreSerializer() for abbr in abbrs}
    return type(name, (serializers.Serializer,), {"__doc__": doc, **fields})


AptitudeScoresSerializer = _scores(
    "AptitudeScoresSerializer", [a.abbr for a in APTITUDES], "Each aptitude, by abbreviation."
)
CompositesSerializer = _scores(
    "CompositesSerializer",
    [c.abbr for c in COMPOSITES],
    "Composites (AGL, STR, STM, SPR, INS, WIT): value, PRO and the DIF of a save.",
)


class DerivedSerializer(serializers.Serializer[Any]):
    """VIT, MNA, CHI maxima, BZF, ENC (carry, lift), MOV and the weight class."""

    aptitudes = AptitudeScoresSerializer()
    vit = serializers.IntegerField()
    mna = serializers.IntegerField()
    chi = serializers.IntegerField()
    bzf = serializers.IntegerField()
    enc = serializers.IntegerField()
    carry = serializers.IntegerField()
    lift = serializers.IntegerField()
    mov = serializers.IntegerField()
    weight_category = serializers.CharField()


class StrikeLineSerializer(serializers.Serializer[Any]):
    """One weapon: its discipline and level, the PRO of each strike mode, and DMG."""

    weapon_id = serializers.IntegerField()
    weapon = serializers.CharField()
    discipline = serializers.CharField()
    level = serializers.IntegerField()
    fast = serializers.IntegerField(help_text="PRO of a fast strike (+SPD).")
    precise = serializers.IntegerField(help_text="PRO of a precise strike (+SKL).")
    mighty = serializers.IntegerField(help_text="PRO of a mighty strike (+VGR).")
    dmg = serializers.IntegerField(help_text="DMG with the weapon's bonus.")


class DefensesSerializer(serializers.Serializer[Any]):
    """DIF of each defense mode, and the Melee Combat level they use."""

    dodge = serializers.IntegerField(help_text="With SPD.")
    parry = serializers.IntegerField(help_text="With SKL.")
    block = serializers.IntegerField(help_text="With VGR.")
    melee = serializers.IntegerField()


DISCIPLINE_PRO = {
    "type": "object",
    "additionalProperties": {"type": "integer"},
    "description": "PRO of each discipline (by name) with its paired aptitude.",
}


class CreationRecordSerializer(serializers.Serializer[Any]):
    """How the wizard built the sheet (empty for a sheet made otherwise)."""

    method = serializers.ChoiceField(
        choices=["", "2d6", "7d6", "manual"], required=False, help_text="The aptitude method."
    )
    dice = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=6), max_length=14, required=False
    )
    server_rolled = serializers.BooleanField(required=False)
    imported = serializers.BooleanField(
        required=False, help_text="Came with an imported sheet, not from this server's wizard."
    )
