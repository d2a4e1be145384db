"""The Simple Die System's rules API: checks and their odds."""

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
    with_exact,
)
from rules.api.fields import StrictBooleanField, WholeNumberField, exact_twin, probability_map
from rules.engine import sds
from sheets import fields

# ---------------------------------------------------------------------------------------------
# Simple Die System


class SdsDifficultySerializer(fields.StrictSerializer):
    die = WholeNumberField(
        min_value=4,
        max_value=sds.MAX_SIZE,
        required=False,
        allow_null=True,
        help_text="The GM's difficulty die (4, 6, 8 ...).",
    )
    hard = WholeNumberField(
        min_value=1,
        max_value=sds.MAX_HARD,
        required=False,
        allow_null=True,
        help_text="A fixed Hard number instead of a die.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if (attrs.get("die") is None) == (attrs.get("hard") is None):
            raise serializers.ValidationError("Give exactly one of die or hard.")
        return attrs


class SdsSkillSerializer(fields.StrictSerializer):
    skill = WholeNumberField(
        min_value=4, max_value=sds.MAX_SIZE, help_text="Skill die size: 4, 6, 8 ... (even)."
    )
    mod = WholeNumberField(min_value=0, max_value=50, default=0, help_text="Item modifier.")
    self_buff = WholeNumberField(min_value=0, max_value=50, default=0)
    party_buff = WholeNumberField(min_value=0, max_value=50, default=0)
    focus = WholeNumberField(min_value=0, max_value=50, default=0, help_text="Added in full.")
    penalty = WholeNumberField(min_value=0, max_value=50, default=0)
    unskilled = StrictBooleanField(default=False, help_text="Roll twice, keep the lower.")

    def skill_check(self, data: Mapping[str, Any]) -> sds.SkillCheck:
        keys = ("skill", "mod", "self_buff", "party_buff", "focus", "penalty", "unskilled")
        return sds.SkillCheck(**{k: data[k] for k in keys})

    @staticmethod
    def difficulty(value: Mapping[str, Any] | None) -> sds.Difficulty | None:
        return None if value is None else sds.Difficulty(value.get("die"), value.get("hard"))


class SdsCheckRequestSerializer(SdsSkillSerializer):
    difficulty = SdsDifficultySerializer(  # type: ignore[assignment]  # the field DRF reads
        required=False, allow_null=True, help_text="{'die': 10} or {'hard': 8}; null for none."
    )
    skill_rolls = serializers.ListField(
        child=WholeNumberField(min_value=1, max_value=100),
        max_length=2,
        required=False,
        allow_null=True,
        help_text="Face(s) on the physical skill die: two when unskilled.",
    )
    flag_rolls = serializers.ListField(
        child=WholeNumberField(min_value=1, max_value=20),
        min_length=1,
        max_length=50,
        required=False,
        allow_null=True,
        help_text="The flag d20, then every heroic re-roll.",
    )
    gm_roll = WholeNumberField(
        min_value=1,
        max_value=100,
        required=False,
        allow_null=True,
        help_text="Face on the GM's physical die: needed with a difficulty die whenever the "
        "player's dice are typed in (typed-in dice are never mixed with server dice).",
    )
    diceless = StrictBooleanField(default=False, help_text="The player threw every die.")
    odds = StrictBooleanField(default=False, help_text="Add the exact odds of this roll.")
    campaign = campaign_field()
    note = note_field()


class SdsOddsSerializer(serializers.Serializer[Any]):
    skill_result = probability_map("Skill result before the flag -> probability.")
    flags = probability_map("critical, tremendous, heroic, none -> probability.")
    heroic_at_least = probability_map("k -> chance the result is multiplied by 10**k or more.")
    gm_result = probability_map("The GM's result -> probability.")
    player = serializers.FloatField(allow_null=True, help_text="Chance the player wins.")
    gm = serializers.FloatField(allow_null=True, help_text="Chance the GM wins.")


class SdsOddsWithExactSerializer(SdsOddsSerializer):
    exact = exact_twin(SdsOddsSerializer)


class SdsCheckSerializer(serializers.Serializer[Any]):
    effective_skill = serializers.IntegerField(help_text="Skill after the stacked bonus.")
    die = serializers.CharField(help_text="The physical die rolled, e.g. 'd20'.")
    skill_rolls = serializers.ListField(child=serializers.IntegerField())
    skill_result = serializers.IntegerField()
    flag_rolls = serializers.ListField(child=serializers.IntegerField())
    multiplier = serializers.IntegerField(help_text="10 per link of a heroic chain.")
    result = serializers.IntegerField()
    flags = serializers.ListField(
        child=serializers.CharField(), help_text="critical, tremendous or heroic."
    )
    gm_die = serializers.CharField(allow_null=True)
    gm_roll = serializers.IntegerField(allow_null=True)
    gm_result = serializers.IntegerField(allow_null=True)
    winner = serializers.CharField(allow_null=True, help_text="'player' or 'gm'.")
    diceless = serializers.BooleanField()
    odds = SdsOddsWithExactSerializer(required=False)


_SDS_EXAMPLE: dict[str, object] = {
    "skill": 8,
    "difficulty": {"die": 10},
    "skill_rolls": [5],
    "flag_rolls": [10, 20, 3],
    "gm_roll": 7,
}


class SdsCheckView(RulesView):
    @documented(
        "Roll or read a Simple Die System check",
        SdsCheckRequestSerializer,
        SdsCheckSerializer,
        [
            request_example("A heroic chain against a d10", _SDS_EXAMPLE),
            response_example(
                "5 x 100 beats the GM's 7",
                sds.check(
                    sds.SkillCheck(8),
                    sds.Difficulty(die=10),
                    skill_rolls=[5],
                    flag_rolls=[10, 20, 3],
                    gm_roll=7,
                ).as_dict(),
            ),
        ],
        logs=True,
    )
    def post(self, request: Request) -> Response:
        """The skill die against the GM's die or Hard number, with the flag d20's effects."""
        data = self.parse(SdsCheckRequestSerializer)
        campaign = self.campaign(data)
        shape = SdsSkillSerializer()
        skill = shape.skill_check(data)
        difficulty = shape.difficulty(data.get("difficulty"))
        result = sds.check(
            skill,
            difficulty,
            skill_rolls=data.get("skill_rolls"),
            flag_rolls=data.get("flag_rolls"),
            gm_roll=data.get("gm_roll"),
            rng=server_rng(),
            diceless=data["diceless"],
        )
        # The engine refuses a roll typed in only in part, so one typed-in die means all are.
        self.log(campaign, data, result, physical=data.get("skill_rolls") is not None)
        body = result.as_dict()
        if data["odds"]:
            body["odds"] = with_exact(sds.check_odds(skill, difficulty))
        return Response(body)


class SdsOddsRequestSerializer(SdsSkillSerializer):
    die = WholeNumberField(
        min_value=4,
        max_value=sds.MAX_SIZE,
        required=False,
        allow_null=True,
        help_text="The GM's difficulty die.",
    )
    hard = WholeNumberField(
        min_value=1,
        max_value=sds.MAX_HARD,
        required=False,
        allow_null=True,
        help_text="A Hard number instead of a die.",
    )


class SdsOddsView(RulesView):
    @documented(
        "Exact odds of a Simple Die System check",
        SdsOddsRequestSerializer,
        SdsOddsWithExactSerializer,
        [
            response_example(
                "Skill 8 against a d8",
                with_exact(sds.check_odds(sds.SkillCheck(8), sds.Difficulty(die=8))),
            )
        ],
        query=True,
    )
    def get(self, request: Request) -> Response:
        """The skill die's results, the flag's chances and who wins, heroic chains included."""
        data = self.parse(SdsOddsRequestSerializer)
        shape = SdsSkillSerializer()
        difficulty = None
        if data.get("die") is not None or data.get("hard") is not None:
            difficulty = sds.Difficulty(data.get("die"), data.get("hard"))
        return Response(with_exact(sds.check_odds(shape.skill_check(data), difficulty)))
