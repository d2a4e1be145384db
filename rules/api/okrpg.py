"""OK RPG's rules API: damage, the action-point round, Tide of Battle, and its odds."""

from __future__ import annotations

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
from rules.engine import RulesError, okrpg
from sheets import fields

# ---------------------------------------------------------------------------------------------
# OK RPG: damage, the action-point round, Tide of Battle

_RANK_HELP = "A rank name (Pth, Def, Avg, Gd, Grt, Ext, Her, Leg, Mth), optionally with '+'."


class RankField(serializers.CharField):
    """An OK RPG rank such as 'Grt' or 'Avg+'."""

    def to_internal_value(self, data: Any) -> okrpg.Rank:  # type: ignore[override]  # a Rank, not a str
        if not isinstance(data, str):
            raise serializers.ValidationError("A rank is a name such as 'Grt' or 'Avg+'.")
        try:
            return okrpg.parse_rank(data[:20])
        except RulesError as exc:
            raise serializers.ValidationError(str(exc)) from exc


class OkrpgDamageRequestSerializer(fields.StrictSerializer):
    damage = RankField(help_text=f"Damage rank. {_RANK_HELP}")
    dr = RankField(help_text=f"Damage resistance rank. {_RANK_HELP}")
    lethality = serializers.ChoiceField(
        choices=list(okrpg.LETHALITY), default="deep_puncturing", help_text="Lethality row."
    )


class OkrpgDamageSerializer(serializers.Serializer[Any]):
    net = serializers.IntegerField(help_text="Damage minus DR, in half-ranks.")
    points = serializers.IntegerField()
    rounded_up = serializers.BooleanField(help_text="The points were rounded up (the asterisk).")
    lethality = serializers.CharField()
    lethal = serializers.IntegerField()
    nonlethal = serializers.IntegerField()


class OkrpgDamageView(RulesView):
    @documented(
        "OK RPG damage points of a hit",
        OkrpgDamageRequestSerializer,
        OkrpgDamageSerializer,
        [
            request_example(
                "A Great cut against Average+ DR",
                {"damage": "Grt", "dr": "Avg+", "lethality": "cutting"},
            ),
            response_example(
                "Three points, two lethal", okrpg.damage("Grt", "Avg+", "cutting").as_dict()
            ),
        ],
    )
    def post(self, request: Request) -> Response:
        """Points from the damage rank over DR, split into lethal and nonlethal."""
        data = self.parse(OkrpgDamageRequestSerializer)
        return Response(okrpg.damage(data["damage"], data["dr"], data["lethality"]).as_dict())


class OkrpgCombatantSerializer(fields.StrictSerializer):
    name = fields.CharField(max_length=80)
    successes = WholeNumberField(min_value=0, max_value=100, help_text="Initiative successes.")
    carry = WholeNumberField(
        min_value=-100, max_value=3, default=0, help_text="Points carried from last round."
    )
    down = StrictBooleanField(default=False, help_text="Down: no action points.")


class OkrpgRoundRequestSerializer(fields.StrictSerializer):
    combatants = OkrpgCombatantSerializer(many=True, max_length=100, min_length=1)  # type: ignore[call-arg]  # for the ListSerializer


class OkrpgRoundSerializer(serializers.Serializer[Any]):
    start = serializers.DictField(child=serializers.IntegerField(), help_text="Points at start.")
    order = serializers.ListField(child=serializers.CharField(), help_text="Names, acting order.")
    carry = serializers.DictField(
        child=serializers.IntegerField(), help_text="Points carried to next round per name."
    )


_ROUND_EXAMPLE = [
    {"name": "A", "successes": 7, "carry": 0},
    {"name": "B", "successes": 4, "carry": 2},
    {"name": "C", "successes": 2, "carry": 0},
]


class OkrpgRoundView(RulesView):
    @documented(
        "Play out an OK RPG action-point round",
        OkrpgRoundRequestSerializer,
        OkrpgRoundSerializer,
        [
            request_example("Three combatants", {"combatants": _ROUND_EXAMPLE}),
            response_example(
                "A and B act twice each",
                okrpg.run_round([okrpg.Combatant(**c) for c in _ROUND_EXAMPLE]).as_dict(),  # type: ignore[arg-type]  # a dict of mixed values
            ),
        ],
    )
    def post(self, request: Request) -> Response:
        """Who acts when if everybody acts as soon as they may; what carries over."""
        data = self.parse(OkrpgRoundRequestSerializer)
        plan = okrpg.run_round([okrpg.Combatant(**c) for c in data["combatants"]])
        return Response(plan.as_dict())


_TIDE_MODES = ["normal", "worse", "better"]


class OkrpgTideRequestSerializer(fields.StrictSerializer):
    tide = serializers.ChoiceField(
        choices=_TIDE_MODES, default="normal", help_text="worse / better: two dice, one kept."
    )
    dice = serializers.ListField(
        child=WholeNumberField(min_value=1, max_value=6),
        max_length=2,
        required=False,
        allow_null=True,
        help_text="The d6 face(s) rolled.",
    )
    odds = StrictBooleanField(default=False, help_text="Add the exact Tide odds.")
    campaign = campaign_field()
    note = note_field()


class OkrpgTideOddsSerializer(serializers.Serializer[Any]):
    values = probability_map("Tide value -> probability.")
    edge = serializers.FloatField(help_text="Chance of a 6.")
    setback = serializers.FloatField(help_text="Chance of a 1.")


class OkrpgTideOddsWithExactSerializer(OkrpgTideOddsSerializer):
    exact = exact_twin(OkrpgTideOddsSerializer)


class OkrpgTideSerializer(serializers.Serializer[Any]):
    mode = serializers.CharField()
    dice = serializers.ListField(child=serializers.IntegerField())
    value = serializers.IntegerField()
    recoveries = serializers.IntegerField(help_text="Recoveries this round (0, 1 or 2).")
    edge = serializers.BooleanField()
    setback = serializers.BooleanField()
    odds = OkrpgTideOddsWithExactSerializer(required=False)


class OkrpgTideView(RulesView):
    @documented(
        "Roll or read a side's OK RPG Tide of Battle",
        OkrpgTideRequestSerializer,
        OkrpgTideSerializer,
        [
            request_example("A cursed side rolls 6 and 2", {"tide": "worse", "dice": [6, 2]}),
            response_example("The 2 is kept", okrpg.read_tide([6, 2], "worse").as_dict()),
        ],
        logs=True,
    )
    def post(self, request: Request) -> Response:
        """A 6 is an edge and a second recovery; a 1 is a setback and none."""
        data = self.parse(OkrpgTideRequestSerializer)
        campaign = self.campaign(data)
        result = okrpg.roll_tide(data["tide"], dice=data.get("dice"), rng=server_rng())
        self.log(campaign, data, result, physical=data.get("dice") is not None)
        body = result.as_dict()
        if data["odds"]:
            body["odds"] = with_exact(okrpg.tide_odds(data["tide"]))
        return Response(body)


class OkrpgOddsRequestSerializer(fields.StrictSerializer):
    tide = serializers.ChoiceField(choices=_TIDE_MODES, default="normal")


class OkrpgOddsView(RulesView):
    @documented(
        "Exact odds of an OK RPG Tide of Battle",
        OkrpgOddsRequestSerializer,
        OkrpgTideOddsWithExactSerializer,
        [response_example("Worse of two dice", with_exact(okrpg.tide_odds("worse")))],
        query=True,
    )
    def get(self, request: Request) -> Response:
        """Chance of each Tide value, of an edge and of a setback."""
        data = self.parse(OkrpgOddsRequestSerializer)
        return Response(with_exact(okrpg.tide_odds(data["tide"])))
