"""ORE engine: pools, sets, special dice, contests, gobble, locations and exact odds."""

from __future__ import annotations

import doctest
import itertools
import json
import random
from collections import Counter
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules import ore
from rules.engine.errors import DiceError, InvalidChoice, InvalidScore, RulesError

d10s = st.lists(st.integers(1, 10), min_size=0, max_size=10)


def _best_by_hand(faces: list[int], difficulty: int) -> ore.OreSet | None:
    counts = Counter(faces)
    sets = [ore.OreSet(n, h) for h, n in counts.items() if n >= 2 and h >= difficulty]
    return max(sets, key=lambda s: (s.width, s.height), default=None)


# --- seed examples -----------------------------------------------------------------------------


def test_it_reads_john_does_swing() -> None:
    john = ore.roll(ore.OrePool(3 + 4), dice=[3, 4, 4, 4, 6, 8, 10])
    assert john.rolled == 7
    assert [str(s) for s in john.sets] == ["3x4"]
    assert john.loose == (3, 6, 8, 10)
    assert john.location == "left arm"


@pytest.mark.parametrize(
    ("dice", "special", "rolled"),
    [
        ([3, 4, 4, 4, 6, 8, 10], {}, 7),
        ([2, 5, 9], {"expert": 5}, 4),
        ([2, 5, 9], {"master": True}, 4),
        ([], {"master": True}, 1),
        ([], {}, 0),
    ],
)
def test_it_counts_the_dice_read_as_rolled(
    dice: list[int], special: dict[str, object], rolled: int
) -> None:
    # Dice read without a pool: every die on the table, a special die included.
    assert ore.read_dice(dice, **special).rolled == rolled  # type: ignore[arg-type]  # the wrong type on purpose


@pytest.mark.parametrize(
    ("john", "mugger", "first"),
    [
        ([3, 4, 4, 4, 6, 8, 10], [1, 5, 7, 7, 8], "a"),  # 3x4 is wider than 2x7
        ([3, 4, 4, 6, 8, 10, 1], [1, 5, 7, 7, 8], "b"),  # a 2x4 would lose to the taller 2x7
        ([1, 2, 3], [1, 5, 7, 7, 8], "b"),
        ([1, 2, 3], [4, 5, 6], None),
    ],
)
def test_it_orders_a_dynamic_contest(john: list[int], mugger: list[int], first: str | None) -> None:
    result = ore.contest(ore.read_dice(john), ore.read_dice(mugger))
    assert result.first == first
    assert not result.simultaneous


def test_it_lands_equal_sets_together() -> None:
    result = ore.contest(ore.read_dice([5, 5, 1]), ore.read_dice([5, 5, 9]))
    assert (result.first, result.simultaneous) == (None, True)


def test_it_gobbles_the_muggers_set() -> None:
    mugger = ore.read_dice([1, 5, 7, 7, 8])
    hit = ore.gobble(mugger)
    assert hit.best is None and not hit.success
    assert hit.gobbled == (7,)
    assert ore.contest(ore.read_dice([3, 4, 4, 4, 6, 8, 10]), hit).first == "a"


def test_it_gobbles_the_tallest_set_not_the_widest() -> None:
    hit = ore.gobble(ore.read_dice([2, 2, 2, 9, 9]))
    assert [str(s) for s in hit.sets] == ["3x2"]
    twice = ore.gobble(ore.read_dice([2, 2, 2, 9, 9]), 2)
    assert [str(s) for s in twice.sets] == ["2x2"]


@pytest.mark.parametrize(
    ("pool", "penalty", "rolled"),
    [
        (12, 2, 10),  # Master Li: 6 + 6 with -2 for three actions still rolls 10
        (12, 3, 9),
        (12, 0, 10),
        (15, 4, 10),
        (7, 2, 5),
        (3, 5, 0),
    ],
)
def test_it_caps_pools_and_takes_penalties_off_the_excess(
    pool: int, penalty: int, rolled: int
) -> None:
    resolved = ore.OrePool(pool, penalty).resolve()
    assert resolved.rolled == resolved.normal == rolled


def test_it_charges_master_li_for_three_actions() -> None:
    penalty = ore.multiple_action_penalty(3)
    assert ore.OrePool(6 + 6, penalty).resolve().rolled == 10


def test_it_reads_a_safe_cracking_difficulty() -> None:
    assert not ore.read_dice([2, 2, 5], difficulty=3).success
    assert ore.read_dice([3, 3, 5], difficulty=3).success
    # The best set is the widest set that still meets the difficulty.
    r = ore.read_dice([2, 2, 2, 6, 6], difficulty=3)
    assert str(r.best) == "2x6"


@pytest.mark.parametrize(
    ("height", "location"),
    [
        (1, "left leg"),
        (2, "right leg"),
        (3, "left arm"),
        (4, "left arm"),
        (5, "right arm"),
        (6, "right arm"),
        (7, "torso"),
        (8, "torso"),
        (9, "torso"),
        (10, "head"),
    ],
)
def test_it_finds_hit_locations(height: int, location: str) -> None:
    assert ore.hit_location(height) == location
    assert ore.read_dice([height, height]).location == location


# --- special dice ----------------------------------------------------------------------------


def test_it_sets_the_expert_die_before_the_roll() -> None:
    r = ore.roll(ore.OrePool(5, expert=10), dice=[10, 3, 4, 5])
    assert r.rolled == 5 and r.expert == 10
    assert str(r.best) == "2x10" and r.location == "head"


@pytest.mark.parametrize(
    ("pool", "penalty", "normal", "expert", "bought_off"),
    [
        (6, 1, 6, None, True),  # the expert die is rolled normally instead of losing a die
        (6, 2, 5, None, True),
        (6, 0, 5, 10, False),
        (12, 2, 9, 10, False),  # the excess soaks the penalty first
        (12, 3, 10, None, True),
    ],
)
def test_it_buys_off_penalties_with_the_expert_die(
    pool: int, penalty: int, normal: int, expert: int | None, bought_off: bool
) -> None:
    resolved = ore.OrePool(pool, penalty, expert=10).resolve()
    assert (resolved.normal, resolved.expert, resolved.expert_bought_off) == (
        normal,
        expert,
        bought_off,
    )


def test_it_drops_the_master_die_before_normal_dice() -> None:
    resolved = ore.OrePool(6, 1, master=True).resolve()
    assert (resolved.rolled, resolved.normal, resolved.master) == (5, 5, False)
    kept = ore.OrePool(11, 1, master=True).resolve()
    assert (kept.rolled, kept.normal, kept.master) == (10, 9, True)


@pytest.mark.parametrize(
    ("dice", "difficulty", "value", "best"),
    [
        ([2, 5, 9], 0, 9, "2x9"),
        ([3, 3, 9], 0, 3, "3x3"),
        ([3, 3, 9, 9], 0, 9, "3x9"),
        ([3, 3, 7], 5, 7, "2x7"),
        ([3, 3, 3, 7, 7], 8, 3, None),  # nothing reaches 8: widest anyway, still a failure
        ([], 0, 10, None),
    ],
)
def test_it_sets_the_master_die_for_the_best_set(
    dice: list[int], difficulty: int, value: int, best: str | None
) -> None:
    r = ore.read_dice(dice, master=True, difficulty=difficulty)
    assert r.master_value == value
    assert (None if r.best is None else str(r.best)) == best


@settings(max_examples=200)
@given(dice=st.lists(st.integers(1, 10), max_size=9), difficulty=st.integers(0, 10))
def test_it_picks_the_master_face_no_worse_than_any_other(dice: list[int], difficulty: int) -> None:
    chosen = ore.read_dice(dice, master=True, difficulty=difficulty).best
    for v in range(1, 11):
        other = _best_by_hand([*dice, v], difficulty)
        if other is not None:
            assert chosen is not None and chosen >= other


# --- multiple actions and cooperation -----------------------------------------------------------


def test_it_assigns_one_set_per_action() -> None:
    r = ore.read_dice([2, 2, 6, 6, 6, 9, 9])
    assert [str(s) for s in ore.assign_sets(r, 2)] == ["3x6", "2x9"]
    assert ore.assign_sets(ore.read_dice([1, 2]), 2) == (None, None)


def test_it_combines_pools_to_cooperate() -> None:
    both = ore.cooperate([ore.OrePool(6), ore.OrePool(7, penalty=1)])
    assert both == ore.OrePool(13, 1)
    assert both.resolve().rolled == 10
    assert ore.cooperate([ore.OrePool(3, expert=4), ore.OrePool(3, expert=9)]).expert == 4


def test_it_reads_timed_cooperation_together() -> None:
    alone = [ore.read_dice([3, 3, 8]), ore.read_dice([8, 8, 1])]
    assert str(ore.team_best(alone)) == "3x8"
    assert ore.team_best([ore.read_dice([3, 8]), ore.read_dice([8, 1])]) is None


def test_it_rolls_with_a_seeded_random() -> None:
    pool = ore.OrePool(9, expert=7)
    a = ore.roll(pool, difficulty=4, rng=random.Random(2024))
    b = ore.roll(pool, difficulty=4, rng=random.Random(2024))
    assert a == b and len(a.dice) == 8 and a.rolled == 9


@given(dice=d10s)
def test_it_accounts_for_every_die(dice: list[int]) -> None:
    r = ore.read_dice(dice)
    assert sum(s.width for s in r.sets) + len(r.loose) == len(dice)
    assert r.best == _best_by_hand(dice, 0)
    if len(dice) == 10 and len(set(dice)) < 10:
        assert r.success


# --- exact odds ----------------------------------------------------------------------------


@pytest.mark.parametrize("normal", [0, 1, 2, 3, 4])
@pytest.mark.parametrize(
    ("expert", "master", "difficulty"),
    [
        (None, False, 0),
        (None, False, 6),
        (10, False, 0),
        (3, False, 5),
        (None, True, 0),
        (None, True, 7),
    ],
)
def test_it_matches_brute_force_best_set_odds(
    normal: int, expert: int | None, master: bool, difficulty: int
) -> None:
    counts: Counter[ore.OreSet | None] = Counter()
    for dice in itertools.product(range(1, 11), repeat=normal):
        counts[
            ore.read_dice(list(dice), expert=expert, master=master, difficulty=difficulty).best
        ] += 1
    expected = {k: Fraction(n, 10**normal) for k, n in counts.items()}
    pool = ore.OrePool(normal + (expert is not None or master), expert=expert, master=master)
    odds = ore.pool_odds(pool, difficulty)
    assert dict(odds.best) == expected
    assert odds.success == 1 - expected.get(None, Fraction(0))


def test_it_gives_the_ten_dice_odds() -> None:
    odds = ore.pool_odds(ore.OrePool(10))
    assert odds.best[None] == Fraction(3628800, 10**10)  # 10! ways to roll all different
    assert sum(odds.best.values()) == 1
    assert sum(odds.location.values()) == odds.success
    assert ore.pool_odds(ore.OrePool(12, penalty=2)) is odds  # memoised per resolved pool


def test_it_matches_brute_force_contest_odds() -> None:
    a_first = b_first = same = neither = 0
    rolls_a = [ore.read_dice(list(d)) for d in itertools.product(range(1, 11), repeat=3)]
    rolls_b = [ore.read_dice(list(d)) for d in itertools.product(range(1, 11), repeat=2)]
    for ra in rolls_a:
        for rb in rolls_b:
            c = ore.contest(ra, rb)
            if c.first == "a":
                a_first += 1
            elif c.first == "b":
                b_first += 1
            elif c.simultaneous:
                same += 1
            else:
                neither += 1
    odds = ore.contest_odds(ore.OrePool(3), ore.OrePool(2))
    total = 10**5
    assert (odds.a_first, odds.b_first, odds.simultaneous, odds.neither) == (
        Fraction(a_first, total),
        Fraction(b_first, total),
        Fraction(same, total),
        Fraction(neither, total),
    )


@pytest.mark.parametrize("normal", [0, 1, 2, 3, 4])
@pytest.mark.parametrize(
    ("expert", "master", "difficulty"),
    [
        (None, False, 0),
        (None, False, 6),
        (10, False, 0),
        (3, False, 5),
        (None, True, 0),
        (None, True, 7),
    ],
)
def test_it_matches_brute_force_set_counts(
    normal: int, expert: int | None, master: bool, difficulty: int
) -> None:
    counts: Counter[int] = Counter()
    for dice in itertools.product(range(1, 11), repeat=normal):
        r = ore.read_dice(list(dice), expert=expert, master=master, difficulty=difficulty)
        counts[sum(1 for s in ore.assign_sets(r, ore.MAX_DICE) if s is not None)] += 1
    expected = {k: Fraction(n, 10**normal) for k, n in counts.items()}
    pool = ore.OrePool(normal + (expert is not None or master), expert=expert, master=master)
    odds = ore.sets_odds(pool, difficulty)
    assert dict(odds.sets) == expected
    for k in range(1, 4):
        assert odds.all_actions(k) == sum(p for n, p in expected.items() if n >= k)


def test_it_gives_the_chance_that_every_action_gets_a_set() -> None:
    odds = ore.sets_odds(ore.OrePool(12, penalty=2))  # Master Li's 10 dice for three actions
    assert odds is ore.sets_odds(ore.OrePool(10))
    assert sum(odds.sets.values()) == 1
    assert max(odds.sets) == 5  # ten dice make at most five pairs
    assert odds.at_least[1] == ore.pool_odds(ore.OrePool(10)).success
    assert odds.all_actions(1) > odds.all_actions(2) > odds.all_actions(3)
    assert odds.all_actions(6) == 0


@settings(max_examples=40, deadline=None)
@given(
    pool=st.integers(0, 14),
    penalty=st.integers(0, 5),
    special=st.sampled_from(["none", "expert", "master"]),
    expert=st.integers(1, 10),
    difficulty=st.integers(0, 10),
)
def test_it_has_pool_odds_that_sum_to_one(
    pool: int, penalty: int, special: str, expert: int, difficulty: int
) -> None:
    if special != "none" and pool == 0:
        pool = 1
    p = ore.OrePool(
        pool,
        penalty,
        expert=expert if special == "expert" else None,
        master=special == "master",
    )
    odds = ore.pool_odds(p, difficulty)
    assert sum(odds.best.values()) == 1
    assert sum(odds.width.values()) == sum(odds.height.values()) == odds.success
    assert all(s is None or s.height >= difficulty for s in odds.best)


@settings(max_examples=20, deadline=None)
@given(a=st.integers(0, 10), b=st.integers(0, 10))
def test_it_has_contest_odds_that_sum_to_one(a: int, b: int) -> None:
    odds = ore.contest_odds(ore.OrePool(a), ore.OrePool(b))
    assert odds.a_first + odds.b_first + odds.simultaneous + odds.neither == 1
    mirror = ore.contest_odds(ore.OrePool(b), ore.OrePool(a))
    assert odds.a_first == mirror.b_first


# --- bad input -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: ore.OrePool(-1), InvalidScore),
        (lambda: ore.OrePool(5, penalty=-1), InvalidScore),
        (lambda: ore.OrePool(5, expert=11), InvalidScore),
        (lambda: ore.OrePool(5, expert=3, master=True), InvalidChoice),
        (lambda: ore.OrePool(0, master=True), InvalidScore),
        (lambda: ore.roll(ore.OrePool(3), dice=[1, 2]), DiceError),
        (lambda: ore.roll(ore.OrePool(3), dice=[1, 2, 11]), DiceError),
        (lambda: ore.roll(ore.OrePool(3, expert=4), dice=[1, 2, 3]), DiceError),
        (lambda: ore.roll(ore.OrePool(3)), DiceError),
        (lambda: ore.roll(ore.OrePool(3), dice=[1, 2, 3], difficulty=11), InvalidScore),
        (lambda: ore.read_dice([1] * 11), DiceError),
        (lambda: ore.read_dice([1] * 10, master=True), DiceError),
        (lambda: ore.read_dice("1234"), DiceError),  # type: ignore[arg-type]  # the wrong type on purpose
        (lambda: ore.hit_location(0), InvalidScore),
        (lambda: ore.multiple_action_penalty(0), InvalidScore),
        (lambda: ore.cooperate([]), InvalidScore),
        (lambda: ore.sets_odds(ore.OrePool(3), difficulty=11), InvalidScore),
        (lambda: ore.sets_odds(ore.OrePool(3)).all_actions(0), InvalidScore),
    ],
)
def test_it_rejects_bad_input(call: object, error: type[RulesError]) -> None:
    with pytest.raises(error) as info:
        call()  # type: ignore[operator]  # a lambda of the table
    assert str(info.value)


def test_it_keeps_its_docstring_examples_true() -> None:
    assert doctest.testmod(ore).failed == 0


def test_it_serialises_results_and_odds_for_json() -> None:
    r = ore.roll(ore.OrePool(7), dice=[3, 4, 4, 4, 6, 8, 10]).as_dict()
    assert r["best"] == {"width": 3, "height": 4} and r["location"] == "left arm"
    assert r["sets"] == [{"width": 3, "height": 4}] and r["loose"] == [3, 6, 8, 10]
    c = ore.contest(ore.read_dice([3, 4, 4, 4]), ore.read_dice([7, 7])).as_dict()
    assert c["first"] == "a" and c["b"] == {"best": {"width": 2, "height": 7}}
    odds = ore.pool_odds(ore.OrePool(2)).as_dict(exact=True)
    assert odds["success"] == "1/10"
    assert {"width": 0, "height": 0, "p": "9/10"} in odds["best"]  # type: ignore[operator]  # a list in the JSON
    counts = ore.sets_odds(ore.OrePool(2)).as_dict(exact=True)
    assert counts["sets"] == {0: "9/10", 1: "1/10"} and counts["at_least"] == {1: "1/10"}
    json.dumps([r, c, odds, counts, ore.contest_odds(ore.OrePool(3), ore.OrePool(4)).as_dict()])
