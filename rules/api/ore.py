"""ORE's rules API: pools read into sets, contests, gobble dice, multiple actions, cooperation,
and their odds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drf_spectacular.utils import (
    extend_schema_field,
)
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from rules.api.base import (
    NEVER_MIXED,
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
from rules.api.fields import StrictBooleanField, WholeNumberField, exact_twin, probability_map
from rules.engine import RulesError, ore
from sheets import fields

# ---------------------------------------------------------------------------------------------
# ORE: pools, sets, contests


class OrePoolRequestSerializer(fields.StrictSerializer):
    pool = WholeNumberField(
        min_value=0,
        max_value=100,
        required=False,
        allow_null=True,
        help_text="Every die of the pool, an expert or master die included (at most 10 rolled). "
        "Leave out to read the dice as they are.",
    )
    penalty = WholeNumberField(
        min_value=0,
        max_value=100,
        default=0,
        help_text="Penalty dice, off the excess over 10 first.",
    )
    expert = WholeNumberField(
        min_value=1,
        max_value=10,
        required=False,
        allow_null=True,
        help_text="The face the expert die is set to.",
    )
    master = StrictBooleanField(default=False, help_text="A master die, set after the roll.")
    dice = serializers.ListField(
        child=WholeNumberField(min_value=1, max_value=10),
        max_length=ore.MAX_DICE,
        required=False,
        allow_null=True,
        help_text="The normal d10s rolled (no expert or master die); leave out to let the "
        "server roll.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs.get("pool") is None and attrs.get("dice") is None:
            raise serializers.ValidationError(
                {"dice": ["Give the dice rolled, or the pool for the server to roll."]}
            )
        return attrs

    def roll(self, data: Mapping[str, Any], difficulty: int = 0) -> ore.OreRoll:
        if data.get("pool") is None:
            return ore.read_dice(
                data["dice"],
                expert=data.get("expert"),
                master=data["master"],
                difficulty=difficulty,
            )
        pool = ore.OrePool(data["pool"], data["penalty"], data.get("expert"), data["master"])
        return ore.roll(pool, difficulty=difficulty, dice=data.get("dice"), rng=server_rng())


class OreRollRequestSerializer(OrePoolRequestSerializer):
    difficulty = WholeNumberField(
        min_value=0, max_value=10, default=0, help_text="Lowest height a set needs."
    )
    odds = StrictBooleanField(default=False, help_text="Add the pool's exact best-set odds.")
    campaign = campaign_field()
    note = note_field()


class OreSetSerializer(serializers.Serializer[Any]):
    width = serializers.IntegerField(help_text="How many dice match.")
    height = serializers.IntegerField(help_text="The face they show.")


class OreBestOddsSerializer(serializers.Serializer[Any]):
    width = serializers.IntegerField(help_text="0 stands for no set.")
    height = serializers.IntegerField()
    p = serializers.FloatField()


class OreOddsSerializer(serializers.Serializer[Any]):
    normal = serializers.IntegerField(help_text="Normal dice rolled.")
    expert = serializers.IntegerField(allow_null=True)
    master = serializers.BooleanField()
    difficulty = serializers.IntegerField()
    best = OreBestOddsSerializer(many=True, help_text="Each possible best set with its chance.")
    success = serializers.FloatField(help_text="Chance of a set meeting the difficulty.")
    width = probability_map("Width of the best set -> probability.")
    height = probability_map("Height of the best set -> probability.")
    location = probability_map("Hit location of the best set -> probability.")


class OreOddsWithExactSerializer(OreOddsSerializer):
    exact = exact_twin(OreOddsSerializer)


class OreReadingSerializer(serializers.Serializer[Any]):
    """A roll read out: its dice, sets and best set."""

    rolled = serializers.IntegerField(help_text="Dice on the table, special die included.")
    dice = serializers.ListField(child=serializers.IntegerField(), help_text="Normal dice.")
    expert = serializers.IntegerField(allow_null=True)
    master_value = serializers.IntegerField(
        allow_null=True, help_text="The face the master die was set to."
    )
    faces = serializers.ListField(child=serializers.IntegerField(), help_text="Every die, sorted.")
    sets = OreSetSerializer(many=True, help_text="Widest first, then tallest.")
    loose = serializers.ListField(child=serializers.IntegerField())
    difficulty = serializers.IntegerField()
    best = OreSetSerializer(allow_null=True)
    success = serializers.BooleanField()
    location = serializers.CharField(allow_null=True, help_text="Where the best set hits.")
    gobbled = serializers.ListField(
        child=serializers.IntegerField(), help_text="Faces taken off by hits, in order."
    )


class OreRollSerializer(OreReadingSerializer):
    odds = OreOddsWithExactSerializer(required=False)


_JOHN = [3, 4, 4, 4, 6, 8, 10]
_MUGGER = [1, 5, 7, 7, 8]


class OreRollView(RulesView):
    @documented(
        "Roll or read an ORE pool",
        OreRollRequestSerializer,
        OreRollSerializer,
        [
            request_example(
                "John Doe's seven dice",
                {
                    "pool": 7,
                    "penalty": 0,
                    "expert": None,
                    "master": False,
                    "difficulty": 0,
                    "dice": _JOHN,
                },
            ),
            response_example(
                "A 3x4 to the left arm", ore.roll(ore.OrePool(7), dice=_JOHN).as_dict()
            ),
        ],
        logs=True,
    )
    def post(self, request: Request) -> Response:
        """Sets among the dice (width x height), the best one and where it hits."""
        data = self.parse(OreRollRequestSerializer)
        campaign = self.campaign(data)
        result = OreRollRequestSerializer().roll(data, data["difficulty"])
        self.log(campaign, data, result, physical=data.get("dice") is not None)
        body = result.as_dict()
        if data["odds"]:
            if data.get("pool") is None:
                raise RulesError("odds are for a pool: give pool as well")
            pool = ore.OrePool(data["pool"], data["penalty"], data.get("expert"), data["master"])
            body["odds"] = with_exact(ore.pool_odds(pool, data["difficulty"]))
        return Response(body)


class OreContestRequestSerializer(fields.StrictSerializer):
    a = OrePoolRequestSerializer(
        help_text="The first side's pool or dice (dice for both sides, or for neither)."
    )
    b = OrePoolRequestSerializer(help_text="The second side's pool or dice.")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        every_side_typed_in({"a": attrs["a"], "b": attrs["b"]}, "dice")
        return attrs


class OreContestSideSerializer(serializers.Serializer[Any]):
    best = OreSetSerializer(allow_null=True)


class OreContestSerializer(serializers.Serializer[Any]):
    first = serializers.CharField(
        allow_null=True, help_text="'a' or 'b'; null when neither has a set, or both tie."
    )
    simultaneous = serializers.BooleanField(help_text="Both best sets are equal.")
    a = OreContestSideSerializer()
    b = OreContestSideSerializer()


class OreContestView(RulesView):
    @documented(
        "Order a dynamic ORE contest",
        OreContestRequestSerializer,
        OreContestSerializer,
        [
            request_example(
                "John Doe against the mugger", {"a": {"dice": _JOHN}, "b": {"dice": _MUGGER}}
            ),
            response_example(
                "The wider set acts first",
                ore.contest(ore.read_dice(_JOHN), ore.read_dice(_MUGGER)).as_dict(),
            ),
        ],
    )
    def post(self, request: Request) -> Response:
        """The wider best set acts first; equal widths go to the taller set."""
        data = self.parse(OreContestRequestSerializer)
        shape = OrePoolRequestSerializer()
        return Response(ore.contest(shape.roll(data["a"]), shape.roll(data["b"])).as_dict())


class OreOddsRequestSerializer(fields.StrictSerializer):
    pool = WholeNumberField(min_value=0, max_value=100, help_text="Every die of the pool.")
    penalty = WholeNumberField(min_value=0, max_value=100, default=0)
    expert = WholeNumberField(min_value=1, max_value=10, required=False, allow_null=True)
    master = StrictBooleanField(default=False)
    difficulty = WholeNumberField(min_value=0, max_value=10, default=0)


class OreOddsView(RulesView):
    @documented(
        "Exact odds of an ORE pool",
        OreOddsRequestSerializer,
        OreOddsWithExactSerializer,
        [response_example("Five dice", with_exact(ore.pool_odds(ore.OrePool(5))))],
        query=True,
    )
    def get(self, request: Request) -> Response:
        """Chance of each best set, of success, and of each width, height and location."""
        data = self.parse(OreOddsRequestSerializer)
        pool = ore.OrePool(data["pool"], data["penalty"], data.get("expert"), data["master"])
        return Response(with_exact(ore.pool_odds(pool, data["difficulty"])))


class OreContestOddsRequestSerializer(fields.StrictSerializer):
    a_pool = WholeNumberField(min_value=0, max_value=100, help_text="First side's pool.")
    a_penalty = WholeNumberField(min_value=0, max_value=100, default=0)
    a_expert = WholeNumberField(min_value=1, max_value=10, required=False, allow_null=True)
    a_master = StrictBooleanField(default=False)
    b_pool = WholeNumberField(min_value=0, max_value=100, help_text="Second side's pool.")
    b_penalty = WholeNumberField(min_value=0, max_value=100, default=0)
    b_expert = WholeNumberField(min_value=1, max_value=10, required=False, allow_null=True)
    b_master = StrictBooleanField(default=False)


class OreContestOddsSerializer(serializers.Serializer[Any]):
    a_first = serializers.FloatField()
    b_first = serializers.FloatField()
    simultaneous = serializers.FloatField()
    neither = serializers.FloatField(help_text="Neither side rolls a set.")


class OreContestOddsWithExactSerializer(OreContestOddsSerializer):
    exact = exact_twin(OreContestOddsSerializer)


class OreContestOddsView(RulesView):
    @documented(
        "Exact odds of a dynamic ORE contest",
        OreContestOddsRequestSerializer,
        OreContestOddsWithExactSerializer,
        [
            response_example(
                "Seven dice against five",
                with_exact(ore.contest_odds(ore.OrePool(7), ore.OrePool(5))),
            )
        ],
        query=True,
    )
    def get(self, request: Request) -> Response:
        """Chance that each side's best set lands first."""
        data = self.parse(OreContestOddsRequestSerializer)
        a, b = (
            ore.OrePool(
                data[f"{s}_pool"],
                data[f"{s}_penalty"],
                data.get(f"{s}_expert"),
                data[f"{s}_master"],
            )
            for s in "ab"
        )
        return Response(with_exact(ore.contest_odds(a, b)))


def _ore_pool(data: Mapping[str, Any]) -> ore.OrePool:
    if data.get("pool") is None:
        raise RulesError("odds are for a pool: give pool as well")
    return ore.OrePool(data["pool"], data["penalty"], data.get("expert"), data["master"])


class OreGobbleRequestSerializer(OrePoolRequestSerializer):
    difficulty = WholeNumberField(
        min_value=0, max_value=10, default=0, help_text="Lowest height a set needs."
    )
    hits = WholeNumberField(
        min_value=0,
        max_value=ore.MAX_DICE,
        default=1,
        help_text="Damaging hits this roller took before acting; each takes one die off the "
        "tallest set.",
    )


class OreGobbleSerializer(serializers.Serializer[Any]):
    before = OreReadingSerializer(help_text="The roll as it came up.")
    after = OreReadingSerializer(
        help_text="What is left once the hits took their dice (listed under gobbled)."
    )


class OreGobbleView(RulesView):
    @documented(
        "Take dice off an ORE roll that was hit (gobble)",
        OreGobbleRequestSerializer,
        OreGobbleSerializer,
        [
            request_example("John's blow lands on the mugger", {"dice": _MUGGER, "hits": 1}),
            response_example(
                "The mugger's 2x7 falls apart",
                {
                    "before": ore.read_dice(_MUGGER).as_dict(),
                    "after": ore.gobble(ore.read_dice(_MUGGER)).as_dict(),
                },
            ),
        ],
    )
    def post(self, request: Request) -> Response:
        """A damaging hit removes one die from the target's tallest set, one die per hit.

        No odds here: once the dice are on the table what a hit takes is certain.
        """
        data = self.parse(OreGobbleRequestSerializer)
        before = OrePoolRequestSerializer().roll(data, data["difficulty"])
        after = ore.gobble(before, data["hits"])
        return Response({"before": before.as_dict(), "after": after.as_dict()})


class OreMultipleRequestSerializer(OreRollRequestSerializer):
    actions = WholeNumberField(
        min_value=1,
        max_value=ore.MAX_DICE,
        help_text="Actions declared for this one roll; each needs a set of its own.",
    )
    charge = StrictBooleanField(
        default=False,
        help_text="Take one die off the pool for each action after the first, as in the "
        "rules' Master Li example (their multiple-actions paragraph charges nothing: the "
        "table decides).",
    )


class OreSetCountOddsSerializer(serializers.Serializer[Any]):
    normal = serializers.IntegerField(help_text="Normal dice rolled.")
    expert = serializers.IntegerField(allow_null=True)
    master = serializers.BooleanField()
    difficulty = serializers.IntegerField()
    sets = probability_map("Number of sets meeting the difficulty -> probability.")
    at_least = probability_map("k -> chance of k sets or more.")
    all_actions = serializers.FloatField(help_text="Chance that every declared action gets a set.")


class OreSetCountOddsWithExactSerializer(OreSetCountOddsSerializer):
    exact = exact_twin(OreSetCountOddsSerializer)


# drf-spectacular 0.30 documents a list of nullable serializers as a list of plain ones (the
# ``$ref`` leaves ``nullable`` out): the null entries broke the documented schema.
@extend_schema_field(
    {
        "type": "array",
        "items": {
            "type": "object",
            "nullable": True,
            "properties": {
                "width": {"type": "integer", "description": "How many dice match."},
                "height": {"type": "integer", "description": "The face they show."},
            },
            "required": ["height", "width"],
        },
    }
)
class _AssignedSetsField(serializers.ListField):
    pass


class OreMultipleSerializer(serializers.Serializer[Any]):
    actions = serializers.IntegerField()
    penalty = serializers.IntegerField(
        help_text="Penalty dice on the pool, the charge for extra actions included."
    )
    roll = OreReadingSerializer()
    assigned = _AssignedSetsField(
        child=OreSetSerializer(allow_null=True),
        help_text="One entry per action, best set first; null where no set was left for it.",
    )
    every_action = serializers.BooleanField(help_text="Each action got a set.")
    odds = OreSetCountOddsWithExactSerializer(required=False)


def _set_count_odds(counts: ore.SetCountOdds, actions: int) -> dict[str, object]:
    p = counts.all_actions(actions)
    exact = {**counts.as_dict(exact=True), "all_actions": f"{p.numerator}/{p.denominator}"}
    return {**counts.as_dict(), "all_actions": float(p), "exact": exact}


_LI_DICE = [1, 1, 3, 5, 5, 5, 7, 9, 9, 10]


class OreMultipleView(RulesView):
    @documented(
        "Roll once for several ORE actions",
        OreMultipleRequestSerializer,
        OreMultipleSerializer,
        [
            request_example(
                "Master Li's three actions",
                {"pool": 12, "actions": 3, "charge": True, "dice": _LI_DICE},
            ),
            response_example(
                "Three sets, one per action",
                {
                    "actions": 3,
                    "penalty": 2,
                    "roll": ore.roll(ore.OrePool(12, 2), dice=_LI_DICE).as_dict(),
                    "assigned": [
                        s.as_dict() if s else None
                        for s in ore.assign_sets(ore.read_dice(_LI_DICE), 3)
                    ],
                    "every_action": True,
                },
            ),
        ],
        logs=True,
    )
    def post(self, request: Request) -> Response:
        """Each declared action takes one set, the best first; the player may swap them."""
        data = self.parse(OreMultipleRequestSerializer)
        campaign = self.campaign(data)
        actions = data["actions"]
        if data["charge"]:
            if data.get("pool") is None:
                raise RulesError("the charge for extra actions comes off a pool: give pool")
            data["penalty"] += ore.multiple_action_penalty(actions)
        result = OreRollRequestSerializer().roll(data, data["difficulty"])
        self.log(campaign, data, result, physical=data.get("dice") is not None)
        assigned = ore.assign_sets(result, actions)
        body: dict[str, object] = {
            "actions": actions,
            "penalty": data["penalty"],
            "roll": result.as_dict(),
            "assigned": [None if s is None else s.as_dict() for s in assigned],
            "every_action": all(s is not None for s in assigned),
        }
        if data["odds"]:
            counts = ore.sets_odds(_ore_pool(data), data["difficulty"])
            body["odds"] = _set_count_odds(counts, actions)
        return Response(body)


class OreCooperateRequestSerializer(fields.StrictSerializer):
    members = OrePoolRequestSerializer(  # type: ignore[call-arg]  # lengths for the ListSerializer
        many=True,
        min_length=2,
        max_length=10,
        help_text="Each character's pool (same stat + skill). With timed, each may give the "
        "dice they rolled instead: every member, or none.",
    )
    timed = StrictBooleanField(
        default=False,
        help_text="Time matters: each rolls alone and all the faces are read together, as long "
        "as one of them rolled a set alone. Otherwise the pools are added up and rolled once.",
    )
    difficulty = WholeNumberField(
        min_value=0, max_value=10, default=0, help_text="Lowest height a set needs."
    )
    dice = serializers.ListField(
        child=WholeNumberField(min_value=1, max_value=10),
        max_length=ore.MAX_DICE,
        required=False,
        allow_null=True,
        help_text="Not timed: the normal d10s of the combined roll; leave out to let the "
        "server roll.",
    )
    odds = StrictBooleanField(
        default=False, help_text="Not timed: add the combined pool's exact best-set odds."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        members = attrs["members"]
        if attrs["timed"] and any(m.get("dice") is not None for m in members):
            missing = [m.get("dice") is None for m in members]
            if any(missing):
                message = (
                    f"Type this member's dice too: the others' are typed in, and {NEVER_MIXED}."
                )
                raise serializers.ValidationError(
                    {"members": [{"dice": [message]} if m else {} for m in missing]}
                )
        return attrs


class OrePoolSerializer(serializers.Serializer[Any]):
    pool = serializers.IntegerField()
    penalty = serializers.IntegerField()
    expert = serializers.IntegerField(allow_null=True)
    master = serializers.BooleanField()


class OreCooperateSerializer(serializers.Serializer[Any]):
    timed = serializers.BooleanField()
    pool = OrePoolSerializer(
        allow_null=True, help_text="The combined pool (one special die kept); null when timed."
    )
    roll = OreReadingSerializer(allow_null=True, help_text="The combined roll; null when timed.")
    rolls = OreReadingSerializer(many=True, help_text="Timed: each character's own roll.")
    best = OreSetSerializer(allow_null=True)
    success = serializers.BooleanField()
    location = serializers.CharField(allow_null=True)
    odds = OreOddsWithExactSerializer(required=False)


class OreCooperateView(RulesView):
    @documented(
        "Cooperate on an ORE roll",
        OreCooperateRequestSerializer,
        OreCooperateSerializer,
        [
            request_example(
                "Two pools rolled as one",
                {
                    "members": [{"pool": 4}, {"pool": 5, "master": True}],
                    "dice": [2, 2, 5, 6, 8, 8, 9, 10],
                },
            ),
            request_example(
                "Each rolls alone against the clock",
                {"timed": True, "members": [{"dice": [3, 3, 8]}, {"dice": [8, 8, 1]}]},
            ),
            response_example(
                "The faces read together make a 3x8",
                {
                    "timed": True,
                    "pool": None,
                    "roll": None,
                    "rolls": [
                        ore.read_dice([3, 3, 8]).as_dict(),
                        ore.read_dice([8, 8, 1]).as_dict(),
                    ],
                    "best": {"width": 3, "height": 8},
                    "success": True,
                    "location": "torso",
                },
            ),
        ],
    )
    def post(self, request: Request) -> Response:
        """Characters pool their dice for one roll, or read their separate rolls together."""
        data = self.parse(OreCooperateRequestSerializer)
        members = data["members"]
        difficulty = data["difficulty"]
        shape = OrePoolRequestSerializer()
        if data["timed"]:
            if data.get("dice") is not None or data["odds"]:
                raise RulesError(
                    "timed cooperation: give each member's dice, not combined dice or odds"
                )
            rolls = [shape.roll(m, difficulty) for m in members]
            best = ore.team_best(rolls, difficulty)
            return Response(
                {
                    "timed": True,
                    "pool": None,
                    "roll": None,
                    "rolls": [r.as_dict() for r in rolls],
                    "best": None if best is None else best.as_dict(),
                    "success": best is not None,
                    "location": None if best is None else best.location,
                }
            )
        if any(m.get("pool") is None or m.get("dice") is not None for m in members):
            raise RulesError(
                "cooperation adds up pools: give each member's pool, and the "
                "dice of the combined roll (if any) beside members"
            )
        pool = ore.cooperate(
            [ore.OrePool(m["pool"], m["penalty"], m.get("expert"), m["master"]) for m in members]
        )
        result = ore.roll(pool, difficulty=difficulty, dice=data.get("dice"), rng=server_rng())
        body: dict[str, object] = {
            "timed": False,
            "pool": {
                "pool": pool.pool,
                "penalty": pool.penalty,
                "expert": pool.expert,
                "master": pool.master,
            },
            "roll": result.as_dict(),
            "rolls": [],
            "best": None if result.best is None else result.best.as_dict(),
            "success": result.success,
            "location": result.location,
        }
        if data["odds"]:
            body["odds"] = with_exact(ore.pool_odds(pool, difficulty))
        return Response(body)
