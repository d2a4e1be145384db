"""OGS's rules API: action checks, opposed checks, open rolls, die increases, and their odds."""

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
    every_side_typed_in,
    note_field,
    request_example,
    response_example,
    server_rng,
    with_exact,
)
from rules.api.fields import (
    DiceListField,
    OgsDieField,
    StrictBooleanField,
    WholeNumberField,
    exact_twin,
    faces_field,
    ogs_dice_field,
    probability_map,
)
from rules.engine import RulesError, ogs
from sheets import fields

# ---------------------------------------------------------------------------------------------
# OGS: action checks, opposed checks, open rolls, die increases


class OgsRollRequestSerializer(fields.StrictSerializer):
    dice = ogs_dice_field(
        min_length=2,
        help_text="Stat die, skill (or force) die, then any enhancement dice: ['d4', 'd8', 'd8'].",
    )
    values = faces_field(
        12,
        required=False,
        allow_null=True,
        help_text="Faces already rolled, one per die in order; leave out to let the server roll.",
    )
    rerolls = faces_field(
        12,
        required=False,
        allow_null=True,
        help_text="With reroll_ones: the new faces of the enhancement dice that showed 1, "
        "in dice order. Needed whenever values are typed in and an enhancement die shows 1; "
        "only with values.",
    )
    flat = WholeNumberField(min_value=-100, max_value=100, default=0, help_text="Flat bonus.")
    reroll_ones = StrictBooleanField(
        default=False, help_text="Enhancement dice showing 1 are rolled once more."
    )

    def check(self, data: Mapping[str, Any]) -> ogs.ActionCheck:
        return ogs.ActionCheck(tuple(data["dice"]), data["flat"], data["reroll_ones"])

    def roll(self, data: Mapping[str, Any], difficulty: int | None = None) -> ogs.CheckResult:
        return ogs.roll_check(
            self.check(data),
            difficulty=difficulty,
            values=data.get("values"),
            rerolls=data.get("rerolls"),
            rng=server_rng(),
        )


class OgsCheckRequestSerializer(OgsRollRequestSerializer):
    difficulty = WholeNumberField(
        min_value=0, max_value=1000, required=False, allow_null=True, help_text="Target total."
    )
    odds = StrictBooleanField(default=False, help_text="Add the exact odds of this check.")
    campaign = campaign_field()
    note = note_field()


class OgsCheckOddsSerializer(serializers.Serializer[Any]):
    totals = probability_map("Total -> probability.")
    difficulty = serializers.IntegerField(allow_null=True)
    success = serializers.FloatField(allow_null=True, help_text="Chance to reach the difficulty.")
    stages = probability_map("Stages of critical success (1 and up) -> probability.")


class OgsCheckOddsWithExactSerializer(OgsCheckOddsSerializer):
    exact = exact_twin(OgsCheckOddsSerializer)


class OgsCheckSerializer(serializers.Serializer[Any]):
    dice = serializers.ListField(child=serializers.CharField())
    values = serializers.ListField(
        child=serializers.IntegerField(), help_text="Kept face of every die."
    )
    flat = serializers.IntegerField()
    reroll_ones = serializers.BooleanField()
    rerolled = serializers.ListField(
        child=serializers.IntegerField(), help_text="Indexes of the dice that were re-rolled."
    )
    first_faces = serializers.ListField(
        child=serializers.IntegerField(), help_text="Their faces before the re-roll."
    )
    total = serializers.IntegerField()
    difficulty = serializers.IntegerField(allow_null=True)
    success = serializers.BooleanField(allow_null=True)
    stages = serializers.IntegerField(help_text="One stage of critical success per 2 points over.")
    odds = OgsCheckOddsWithExactSerializer(required=False)


class OgsCheckView(RulesView):
    @documented(
        "Roll or read an OGS action check",
        OgsCheckRequestSerializer,
        OgsCheckSerializer,
        [
            request_example(
                "d4 + d8 + d8 rolled 1, 4, 6 at difficulty 8",
                {"dice": ["d4", "d8", "d8"], "values": [1, 4, 6], "flat": 0, "difficulty": 8},
            ),
            response_example(
                "11 against 8: one stage",
                ogs.roll_check(
                    ogs.ActionCheck((4, 8, 8)), difficulty=8, values=[1, 4, 6]
                ).as_dict(),
            ),
        ],
        logs=True,
    )
    def post(self, request: Request) -> Response:
        """Total the dice plus the flat bonus, and count stages past the difficulty."""
        shape = OgsCheckRequestSerializer()
        data = self.parse(OgsCheckRequestSerializer)
        campaign = self.campaign(data)
        result = shape.roll(data, data.get("difficulty"))
        self.log(campaign, data, result, physical=data.get("values") is not None)
        body = result.as_dict()
        if data["odds"]:
            body["odds"] = with_exact(ogs.check_odds(result.check, data.get("difficulty")))
        return Response(body)


class OgsCheckOddsRequestSerializer(fields.StrictSerializer):
    dice = ogs_dice_field(min_length=1, help_text="Dice, e.g. dice=d4,d8,d8.")
    flat = WholeNumberField(min_value=-100, max_value=100, default=0, help_text="Flat bonus.")
    difficulty = WholeNumberField(
        min_value=0, max_value=1000, required=False, allow_null=True, help_text="Target total."
    )
    reroll_ones = StrictBooleanField(default=False, help_text="Re-roll enhancement ones once.")
    open = StrictBooleanField(
        default=False, help_text="An open roll (damage and the like): the dice simply totalled."
    )


class OgsOddsView(RulesView):
    @documented(
        "Exact odds of an OGS check or open roll",
        OgsCheckOddsRequestSerializer,
        OgsCheckOddsWithExactSerializer,
        [
            response_example(
                "d4 + d8 + d8 at difficulty 8",
                with_exact(ogs.check_odds(ogs.ActionCheck((4, 8, 8)), 8)),
            )
        ],
        query=True,
    )
    def get(self, request: Request) -> Response:
        """Distribution of the total, chance of success and of each stage."""
        data = self.parse(OgsCheckOddsRequestSerializer)
        if data["open"]:
            if data["reroll_ones"] or data.get("difficulty") is not None:
                raise RulesError("an open roll is simply totalled: no difficulty, no re-rolls")
            return Response(with_exact(ogs.open_odds(data["dice"], data["flat"])))
        check = ogs.ActionCheck(tuple(data["dice"]), data["flat"], data["reroll_ones"])
        return Response(with_exact(ogs.check_odds(check, data.get("difficulty"))))


class OgsOpposedRequestSerializer(fields.StrictSerializer):
    a = OgsRollRequestSerializer(help_text="The first side's check.")
    b = OgsRollRequestSerializer(help_text="The second side's check.")
    rolloffs = serializers.ListField(
        child=serializers.ListField(
            child=WholeNumberField(min_value=1, max_value=12), min_length=2, max_length=2
        ),
        max_length=20,
        required=False,
        allow_null=True,
        help_text="d12 roll-off pairs [a, b], used only when everything else ties. With typed-in "
        "values they are needed whenever the tie goes that far (the server never throws them "
        "then); given, both sides' values are needed too.",
    )
    odds = StrictBooleanField(
        default=False,
        help_text="Add each side's exact chance to win: offered for up to "
        f"{ogs.MAX_OPPOSED_ODDS_DICE} dice a side (more is a 400).",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        sides = {"a": attrs["a"], "b": attrs["b"]}
        every_side_typed_in(sides, "values", forced=attrs.get("rolloffs") is not None)
        return attrs


class OgsOpposedOddsSerializer(serializers.Serializer[Any]):
    a = serializers.FloatField(help_text="Chance the first side wins.")
    b = serializers.FloatField(help_text="Chance the second side wins.")
    decided_by = probability_map("Tie-break step (total, values, sizes, rolloff) -> probability.")


class OgsOpposedOddsWithExactSerializer(OgsOpposedOddsSerializer):
    exact = exact_twin(OgsOpposedOddsSerializer)


class OgsOpposedSerializer(serializers.Serializer[Any]):
    winner = serializers.CharField(help_text="'a' or 'b'.")
    decided_by = serializers.CharField(help_text="total, values, sizes or rolloff.")
    rolloffs = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField()),
        help_text="The d12 roll-off pairs used.",
    )
    a = OgsCheckSerializer()
    b = OgsCheckSerializer()
    odds = OgsOpposedOddsWithExactSerializer(required=False)


_MICHAEL = {"dice": ["d4", "d8", "d8"], "values": [1, 4, 6]}
_GUARD = {"dice": ["d6", "d6", "d6"], "values": [1, 4, 6]}


class OgsOpposedView(RulesView):
    @documented(
        "Settle an OGS opposed check",
        OgsOpposedRequestSerializer,
        OgsOpposedSerializer,
        [
            request_example("Michael against the guardsman", {"a": _MICHAEL, "b": _GUARD}),
            response_example(
                "Tied totals and values; the bigger dice win",
                ogs.opposed(
                    ogs.roll_check(ogs.ActionCheck((4, 8, 8)), values=[1, 4, 6]),
                    ogs.roll_check(ogs.ActionCheck((6, 6, 6)), values=[1, 4, 6]),
                ).as_dict(),
            ),
        ],
    )
    def post(self, request: Request) -> Response:
        """Higher total wins; then higher values, bigger dice, and d12 roll-offs."""
        data = self.parse(OgsOpposedRequestSerializer)
        shape = OgsRollRequestSerializer()
        a, b = shape.roll(data["a"]), shape.roll(data["b"])
        # Both sides are typed in or neither is (validated); typed in, so are the roll-offs.
        typed = data["a"].get("values") is not None
        rng = None if typed else server_rng()
        result = ogs.opposed(a, b, rolloffs=data.get("rolloffs"), rng=rng)
        body = result.as_dict()
        if data["odds"]:
            body["odds"] = with_exact(ogs.opposed_odds(a.check, b.check))
        return Response(body)


def _opposed_odds_dice(**kwargs: Any) -> DiceListField:
    limit = ogs.MAX_OPPOSED_ODDS_DICE
    return DiceListField(
        child=OgsDieField(),
        min_length=2,
        max_length=limit,
        error_messages={
            "max_length": f"Exact opposed odds are offered for up to {limit} dice a side "
            "(they track every sorted set of faces, which grows fast)."
        },
        **kwargs,
    )


_ODDS_LIMIT = f"At most {ogs.MAX_OPPOSED_ODDS_DICE} dice a side."


class OgsOpposedOddsRequestSerializer(fields.StrictSerializer):
    a = _opposed_odds_dice(help_text=f"First side's dice, e.g. a=d4,d8,d8. {_ODDS_LIMIT}")
    b = _opposed_odds_dice(help_text=f"Second side's dice, e.g. b=d6,d6,d6. {_ODDS_LIMIT}")
    a_flat = WholeNumberField(min_value=-100, max_value=100, default=0)
    b_flat = WholeNumberField(min_value=-100, max_value=100, default=0)
    a_reroll_ones = StrictBooleanField(default=False)
    b_reroll_ones = StrictBooleanField(default=False)


class OgsOpposedOddsView(RulesView):
    @documented(
        "Exact odds of an OGS opposed check",
        OgsOpposedOddsRequestSerializer,
        OgsOpposedOddsWithExactSerializer,
        [
            response_example(
                "d4 + d8 + d8 against 3d6",
                with_exact(
                    ogs.opposed_odds(ogs.ActionCheck((4, 8, 8)), ogs.ActionCheck((6, 6, 6)))
                ),
            )
        ],
        query=True,
    )
    def get(self, request: Request) -> Response:
        """Each side's chance to win with the full tie-break, and how often each step decides.

        Exact odds are offered up to a number of dice a side (see a and b): more is a 400
        naming the limit.
        """
        data = self.parse(OgsOpposedOddsRequestSerializer)
        a = ogs.ActionCheck(tuple(data["a"]), data["a_flat"], data["a_reroll_ones"])
        b = ogs.ActionCheck(tuple(data["b"]), data["b_flat"], data["b_reroll_ones"])
        return Response(with_exact(ogs.opposed_odds(a, b)))


class OgsOpenRequestSerializer(fields.StrictSerializer):
    dice = ogs_dice_field(min_length=1, help_text="Any dice, e.g. ['d6', 'd6'].")
    values = faces_field(12, required=False, allow_null=True, help_text="Faces already rolled.")
    flat = WholeNumberField(min_value=-100, max_value=100, default=0, help_text="Flat bonus.")
    odds = StrictBooleanField(default=False, help_text="Add the exact distribution of the total.")
    campaign = campaign_field()
    note = note_field()


class OgsOpenSerializer(serializers.Serializer[Any]):
    dice = serializers.ListField(child=serializers.CharField())
    values = serializers.ListField(child=serializers.IntegerField())
    flat = serializers.IntegerField()
    total = serializers.IntegerField()
    odds = OgsCheckOddsWithExactSerializer(required=False)


class OgsOpenView(RulesView):
    @documented(
        "Roll or read an OGS open roll",
        OgsOpenRequestSerializer,
        OgsOpenSerializer,
        [
            request_example(
                "3d6 + 2", {"dice": ["d6", "d6", "d6"], "values": [1, 5, 6], "flat": 2}
            ),
            response_example(
                "Totals 14", ogs.roll_open(["d6"] * 3, flat=2, values=[1, 5, 6]).as_dict()
            ),
        ],
        logs=True,
    )
    def post(self, request: Request) -> Response:
        """An open roll (damage and the like): the dice and the bonus simply added."""
        data = self.parse(OgsOpenRequestSerializer)
        campaign = self.campaign(data)
        result = ogs.roll_open(
            data["dice"], flat=data["flat"], values=data.get("values"), rng=server_rng()
        )
        self.log(campaign, data, result, physical=data.get("values") is not None)
        body = result.as_dict()
        if data["odds"]:
            body["odds"] = with_exact(ogs.open_odds(data["dice"], data["flat"]))
        return Response(body)


class OgsIncreaseRequestSerializer(fields.StrictSerializer):
    dice = ogs_dice_field(min_length=1, help_text="The dice before the increase.")
    stages = WholeNumberField(min_value=0, max_value=100, help_text="Steps of the one effect.")
    open = StrictBooleanField(
        default=False, help_text="An open roll: every die is raised, not just one."
    )
    target = WholeNumberField(
        min_value=0,
        required=False,
        allow_null=True,
        help_text="Index of the die to raise (default: the last one). Not with open.",
    )


class OgsIncreaseSerializer(serializers.Serializer[Any]):
    dice = serializers.ListField(child=serializers.CharField(), help_text="The dice after.")


class OgsIncreaseView(RulesView):
    @documented(
        "Apply an OGS die increase",
        OgsIncreaseRequestSerializer,
        OgsIncreaseSerializer,
        [
            request_example(
                "A d12 raised two steps", {"dice": ["d12"], "stages": 2, "open": False}
            ),
            response_example("Past d12 it splits", {"dice": ["d8", "d8"]}),
        ],
    )
    def post(self, request: Request) -> Response:
        """Raise one die (or every die of an open roll); past d12 a die splits in two."""
        data = self.parse(OgsIncreaseRequestSerializer)
        grown = ogs.increase(
            data["dice"], data["stages"], open_roll=data["open"], target=data.get("target")
        )
        return Response({"dice": list(ogs.dice_names(grown))})
