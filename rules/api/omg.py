"""The OMG System's rules API: checks, their odds, strikes and strike odds (see rules/api/base.py
for the conventions every endpoint shares).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from rules.api.base import (
    RulesView,
    campaign_field,
    documented,
    note_field,
    request_example,
    response_example,
    server_rng,
)
from rules.api.fields import StrictBooleanField, WholeNumberField
from rules.engine import odds, omg
from sheets import fields

# ---------------------------------------------------------------------------------------------
# OMG System: checks, odds, strikes

_DEGREES = ", ".join(d.value for d in omg.Degree)


class OmgCheckRequestSerializer(fields.StrictSerializer):
    pro = WholeNumberField(
        min_value=omg.PRO_MIN, max_value=omg.PRO_MAX, help_text="Proficiency to roll at or under."
    )
    dif = WholeNumberField(
        min_value=omg.DIF_MIN, max_value=omg.DIF_MAX, help_text="Difficulty to roll over."
    )
    roll = WholeNumberField(
        min_value=1,
        max_value=100,
        required=False,
        allow_null=True,
        help_text="The d100 already rolled (a 00 pair is 100); leave out to let the server roll.",
    )
    fast = StrictBooleanField(
        default=False, help_text="Also read the reversed roll as a fast strike's second attack."
    )
    campaign = campaign_field()
    note = note_field()


class SecondHitSerializer(serializers.Serializer[Any]):
    roll = serializers.IntegerField(help_text="The roll with its two dice swapped.")
    hit = serializers.BooleanField(help_text="Whether the second attack lands.")


class OmgCheckSerializer(serializers.Serializer[Any]):
    roll = serializers.IntegerField()
    pro = serializers.IntegerField()
    dif = serializers.IntegerField()
    degree = serializers.CharField(help_text=f"One of: {_DEGREES}.")
    abbr = serializers.CharField(
        allow_null=True, help_text="DrS, DrF, EpS, EpF or SwS; null for a plain result."
    )
    success = serializers.BooleanField(help_text="True for every kind of success.")
    exp = serializers.IntegerField(help_text="EXP mark earned on the discipline (0 or 1).")
    fate = serializers.IntegerField(help_text="Change to the roller's Fate: -1, 0 or +1.")
    sum = serializers.IntegerField(help_text="The two d10 faces added, a 0 face counting 10.")
    second = SecondHitSerializer(required=False, help_text="Only when fast was asked for.")


class OmgOddsRequestSerializer(fields.StrictSerializer):
    pro = WholeNumberField(min_value=omg.PRO_MIN, max_value=omg.PRO_MAX, help_text="Proficiency.")
    dif = WholeNumberField(min_value=omg.DIF_MIN, max_value=omg.DIF_MAX, help_text="Difficulty.")


class DegreeCountsSerializer(serializers.Serializer[Any]):
    success = serializers.IntegerField()
    failure = serializers.IntegerField()
    dramatic_success = serializers.IntegerField()
    dramatic_failure = serializers.IntegerField()
    epic_success = serializers.IntegerField()
    epic_failure = serializers.IntegerField()
    success_with_sacrifice = serializers.IntegerField()


class OmgOddsSerializer(serializers.Serializer[Any]):
    pro = serializers.IntegerField()
    dif = serializers.IntegerField()
    faces = serializers.IntegerField(help_text="Every count is out of this many faces (100).")
    counts = DegreeCountsSerializer(help_text="Faces of the d100 giving each degree.")
    hits = serializers.IntegerField(help_text="Faces giving any kind of success.")
    second_hit = serializers.IntegerField(
        help_text="Faces on which a disciplined fast strike lands its second attack as well."
    )


class OmgStrikeRequestSerializer(fields.StrictSerializer):
    strike = serializers.ChoiceField(
        choices=[m.value for m in omg.StrikeMode],
        help_text="Strike mode: fast uses Speed, precise Skill, mighty Vigor.",
    )
    attack_apt = WholeNumberField(min_value=1, max_value=5, help_text="Attacker's aptitude.")
    attack_dsc = WholeNumberField(
        min_value=0, max_value=5, default=0, help_text="Weapon discipline; 0 is undisciplined."
    )
    weapon_dmg = WholeNumberField(min_value=0, max_value=5, default=0, help_text="Weapon DMG.")
    weapon_bonus = WholeNumberField(
        min_value=0, max_value=5, default=0, help_text="Quality or magic bonus of the weapon."
    )
    defense = serializers.ChoiceField(
        choices=[m.value for m in omg.DefenseMode],
        help_text="Defense mode: dodge uses Speed, parry Skill, block Vigor.",
    )
    defense_apt = WholeNumberField(min_value=1, max_value=5, help_text="Defender's aptitude.")
    defense_dsc = WholeNumberField(
        min_value=0, max_value=5, default=0, help_text="Melee Combat; 0 is undisciplined."
    )
    arm = WholeNumberField(min_value=0, max_value=5, default=0, help_text="ARM of the zone hit.")
    arm_bonus = WholeNumberField(
        min_value=0, max_value=5, default=0, help_text="Magic bonus of that armor."
    )

    def build(self, data: Mapping[str, Any]) -> tuple[omg.Attacker, omg.Defender]:
        attacker = omg.Attacker(
            omg.StrikeMode(data["strike"]),
            data["attack_apt"],
            data["attack_dsc"],
            data["weapon_dmg"],
            data["weapon_bonus"],
        )
        defender = omg.Defender(
            omg.DefenseMode(data["defense"]),
            data["defense_apt"],
            data["defense_dsc"],
            data["arm"],
            data["arm_bonus"],
        )
        return attacker, defender


class OmgStrikeRollRequestSerializer(OmgStrikeRequestSerializer):
    roll = WholeNumberField(
        min_value=1,
        max_value=100,
        required=False,
        allow_null=True,
        help_text="The attacker's d100 already rolled; leave out to let the server roll.",
    )
    campaign = campaign_field()
    note = note_field()


class OmgHitSerializer(serializers.Serializer[Any]):
    roll = serializers.IntegerField(help_text="The roll this hit was read from.")
    damage = serializers.IntegerField(help_text="Damage after armor and a dodge.")
    raw = serializers.IntegerField(help_text="Damage before armor.")
    protection = serializers.IntegerField(help_text="Armor that stood against the hit.")
    armor_wear = serializers.IntegerField(help_text="1 when this hit wore the armor down.")
    second = serializers.BooleanField(help_text="True for a fast strike's second attack.")


class OmgStrikeSerializer(serializers.Serializer[Any]):
    pro = serializers.IntegerField()
    dif = serializers.IntegerField()
    roll = serializers.IntegerField()
    degree = serializers.CharField(help_text=f"One of: {_DEGREES}.")
    abbr = serializers.CharField(allow_null=True)
    success = serializers.BooleanField()
    sum = serializers.IntegerField()
    exp = serializers.IntegerField()
    fate = serializers.IntegerField()
    hits = OmgHitSerializer(many=True, help_text="Each landed attack, in order.")
    damage = serializers.IntegerField(help_text="Total damage of every hit.")
    armor_wear = serializers.IntegerField(help_text="Points of ARM lost.")
    arm_after = serializers.IntegerField()
    armor_destroyed = serializers.BooleanField()
    weapon_wear = serializers.IntegerField(help_text="Points of weapon DMG lost.")
    weapon_dmg_after = serializers.IntegerField()
    weapon_destroyed = serializers.BooleanField()
    counterattack = serializers.BooleanField(help_text="The defender earned a counterattack.")


class OmgStrikeOddsSerializer(serializers.Serializer[Any]):
    pro = serializers.IntegerField()
    dif = serializers.IntegerField()
    faces = serializers.IntegerField(help_text="Every count is out of this many faces (100).")
    check = OmgOddsSerializer()
    first = serializers.DictField(
        child=serializers.IntegerField(), help_text="Damage of the first attack -> faces."
    )
    first_miss = serializers.IntegerField()
    second = serializers.DictField(
        child=serializers.IntegerField(),
        allow_null=True,
        help_text="Damage of the second attack -> faces; null without a second attack.",
    )
    second_miss = serializers.IntegerField()
    total = serializers.DictField(
        child=serializers.IntegerField(), help_text="Damage of the whole strike -> faces."
    )
    mean_damage = serializers.FloatField()
    mean_damage_exact = serializers.CharField(help_text="The mean damage as a fraction.")


class OmgCheckView(RulesView):
    @documented(
        "Resolve a d100 check",
        OmgCheckRequestSerializer,
        OmgCheckSerializer,
        [
            request_example(
                "70 v 20, a fast strike rolling 43",
                {"pro": 70, "dif": 20, "roll": 43, "fast": True},
            ),
            response_example(
                "A success whose reversed roll hits too",
                omg.check(70, 20, 43, fast=True).as_dict(),
            ),
        ],
        logs=True,
    )
    def post(self, request: Request) -> Response:
        """Read one d100 roll against PRO v DIF; without a roll the server rolls."""
        data = self.parse(OmgCheckRequestSerializer)
        campaign = self.campaign(data)
        result = omg.check(
            data["pro"], data["dif"], data.get("roll"), rng=server_rng(), fast=data["fast"]
        )
        self.log(campaign, data, result, physical=data.get("roll") is not None)
        return Response(result.as_dict())


class OmgOddsView(RulesView):
    @documented(
        "Exact odds of a d100 check",
        OmgOddsRequestSerializer,
        OmgOddsSerializer,
        [response_example("70 v 20", {**odds.check_odds(70, 20).as_dict(), "faces": 100})],
        query=True,
    )
    def get(self, request: Request) -> Response:
        """How many of the 100 faces give each degree at PRO v DIF."""
        data = self.parse(OmgOddsRequestSerializer)
        return Response({**odds.check_odds(data["pro"], data["dif"]).as_dict(), "faces": 100})


_STRIKE_EXAMPLE = {
    "strike": "fast",
    "attack_apt": 3,
    "attack_dsc": 3,
    "weapon_dmg": 4,
    "weapon_bonus": 0,
    "defense": "dodge",
    "defense_apt": 3,
    "defense_dsc": 2,
    "arm": 2,
    "arm_bonus": 0,
}


def _strike_odds_dict(odds_obj: odds.StrikeOdds) -> dict[str, object]:
    mean = odds_obj.mean_damage
    return {
        **odds_obj.as_dict(),
        "faces": odds.FACES,
        "check": {**odds_obj.check.as_dict(), "faces": odds.FACES},
        "mean_damage_exact": f"{mean.numerator}/{mean.denominator}",
    }


class OmgStrikeView(RulesView):
    @documented(
        "Resolve a strike",
        OmgStrikeRollRequestSerializer,
        OmgStrikeSerializer,
        [
            request_example(
                "Fast sword strike into a dodge, rolling 43", {**_STRIKE_EXAMPLE, "roll": 43}
            ),
            response_example(
                "Two hits, the armor worn by both",
                omg.strike(
                    omg.Attacker(omg.StrikeMode.FAST, 3, 3, 4),
                    omg.Defender(omg.DefenseMode.DODGE, 3, 2, 2),
                    43,
                ).as_dict(),
            ),
        ],
        logs=True,
    )
    def post(self, request: Request) -> Response:
        """One strike against one defense: the check, every hit's damage, wear, counterattack."""
        data = self.parse(OmgStrikeRollRequestSerializer)
        campaign = self.campaign(data)
        attacker, defender = OmgStrikeRequestSerializer().build(data)
        result = omg.strike(attacker, defender, data.get("roll"), rng=server_rng())
        self.log(campaign, data, result, physical=data.get("roll") is not None)
        return Response(result.as_dict())


class OmgStrikeOddsView(RulesView):
    @documented(
        "Exact damage distribution of a strike",
        OmgStrikeRequestSerializer,
        OmgStrikeOddsSerializer,
        [
            response_example(
                "Fast sword strike into a dodge",
                _strike_odds_dict(odds.damage_odds(**_STRIKE_EXAMPLE)),  # type: ignore[arg-type]  # a dict of mixed values
            )
        ],
        query=True,
    )
    def get(self, request: Request) -> Response:
        """Faces (of 100) giving each damage, per attack and for the whole strike."""
        data = self.parse(OmgStrikeRequestSerializer)
        attacker, defender = OmgStrikeRequestSerializer().build(data)
        return Response(_strike_odds_dict(odds.strike_odds(attacker, defender)))
