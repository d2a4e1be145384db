"""OGS engine: checks, opposed tie-breaks, die increases and exact odds."""

from __future__ import annotations

import doctest
import itertools
import json
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules import ogs
from rules.engine.errors import DiceError, InvalidChoice, InvalidScore, RulesError

sizes = st.sampled_from(ogs.DIE_SIZES)


def _faces(size: int, reroll: bool) -> list[tuple[int, Fraction]]:
    """(kept face, probability) of one die, by brute force over the re-roll too."""
    if not reroll:
        return [(v, Fraction(1, size)) for v in range(1, size + 1)]
    out: list[tuple[int, Fraction]] = []
    for v in range(1, size + 1):
        if v == 1:
            out += [(w, Fraction(1, size * size)) for w in range(1, size + 1)]
        else:
            out.append((v, Fraction(1, size)))
    return out


def _brute_outcomes(check: ogs.ActionCheck) -> list[tuple[tuple[int, ...], Fraction]]:
    per_die = [_faces(size, check.reroll_ones and i >= 2) for i, size in enumerate(check.dice)]
    out = []
    for combo in itertools.product(*per_die):
        p = Fraction(1)
        for _, q in combo:
            p *= q
        out.append((tuple(v for v, _ in combo), p))
    return out


# --- seed examples -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a_dice", "a_values", "b_dice", "b_values", "winner", "decided_by"),
    [
        # Michael (d4 + d8 + d8: 1, 4, 6) vs the guardsman (3d6: 1, 4, 6): sizes decide.
        ((4, 8, 8), (1, 4, 6), (6, 6, 6), (1, 4, 6), "a", "sizes"),
        # Had Michael rolled a 2 instead of the 1, his 12 beats 11 outright.
        ((4, 8, 8), (2, 4, 6), (6, 6, 6), (1, 4, 6), "a", "total"),
        # Same total, a higher die wins on values before sizes are looked at.
        ((4, 8, 8), (1, 2, 8), (6, 6, 6), (1, 4, 6), "a", "values"),
        ((6, 6, 6), (3, 3, 5), (4, 8, 8), (1, 4, 6), "b", "values"),
    ],
)
def test_it_breaks_opposed_ties_like_the_seed(
    a_dice: tuple[int, ...],
    a_values: tuple[int, ...],
    b_dice: tuple[int, ...],
    b_values: tuple[int, ...],
    winner: str,
    decided_by: str,
) -> None:
    a = ogs.roll_check(ogs.ActionCheck(a_dice), values=a_values)
    b = ogs.roll_check(ogs.ActionCheck(b_dice), values=b_values)
    result = ogs.opposed(a, b)
    assert (result.winner, result.decided_by) == (winner, decided_by)


def test_it_reads_the_seed_michael_and_guard_totals() -> None:
    michael = ogs.roll_check(ogs.ActionCheck(("d4", "d8", "d8")), values=[1, 4, 6])  # type: ignore[arg-type]  # parsed in __post_init__
    guard = ogs.roll_check(ogs.ActionCheck(("d6", "d6", "d6")), values=[1, 4, 6])  # type: ignore[arg-type]  # parsed in __post_init__
    assert michael.total == guard.total == 11


@pytest.mark.parametrize(
    ("total", "difficulty", "success", "stages"),
    [
        (16, 8, True, 4),  # seed: four-stage critical hit
        (8, 8, True, 0),
        (9, 8, True, 0),
        (10, 8, True, 1),
        (11, 8, True, 1),
        (7, 8, False, 0),
        (1, 20, False, 0),
    ],
)
def test_it_counts_stages_of_critical_success(
    total: int, difficulty: int, success: bool, stages: int
) -> None:
    result = ogs.roll_check(
        ogs.ActionCheck((12, 12), flat=total - 2), difficulty=difficulty, values=[1, 1]
    )
    assert (result.total, result.success, result.stages) == (total, success, stages)


@pytest.mark.parametrize(
    ("dice", "stages", "open_roll", "target", "expected"),
    [
        (["d6"] * 10, 2, True, None, ["d10"] * 10),  # seed: 10d6 Fireball -> 10d10
        (["d4"], 1, False, None, ["d6"]),
        (["d4"], 2, False, None, ["d8"]),
        (["d12"], 1, False, None, ["d8", "d6"]),
        (["d12"], 2, False, None, ["d8", "d8"]),
        (["d12"], 3, False, None, ["d8", "d10"]),
        (["d12"], 4, False, None, ["d8", "d12"]),
        (["d12"], 5, False, None, ["d8", "d12", "d6"]),
        (["d12"], 9, False, None, ["d8", "d12", "d12", "d6"]),
        (["d10"], 3, False, None, ["d8", "d8"]),
        # The enhancement die (last) is the default target of an action check.
        (["d4", "d8", "d6"], 1, False, None, ["d4", "d8", "d8"]),
        (["d4", "d8", "d6"], 1, False, 0, ["d6", "d8", "d6"]),
        # A new effect on a pool made by an earlier one picks a die; the d6 by default.
        (["d8", "d6"], 2, False, None, ["d8", "d10"]),
        (["d8", "d12"], 1, False, 1, ["d8", "d8", "d6"]),
        (["d12", "d4"], 1, True, None, ["d8", "d6", "d6"]),
        (["d8"], 0, False, None, ["d8"]),
    ],
)
def test_it_increases_dice(
    dice: list[str], stages: int, open_roll: bool, target: int | None, expected: list[str]
) -> None:
    got = ogs.increase(dice, stages, open_roll=open_roll, target=target)
    assert list(ogs.dice_names(got)) == expected


def test_it_caps_every_die_increase_at_twenty_dice() -> None:
    # Seed: an open roll's increase raises every die, so ten d12s +1 become twenty dice ...
    assert len(ogs.increase(["d12"] * 10, 1, open_roll=True)) == ogs.MAX_DICE == 20
    # ... and one more die, or one more stage, is past the cap, as for any other roll.
    for dice, stages in [(["d12"] * 11, 1), (["d12"] * 10, 5), (["d6"] * 20, 10)]:
        with pytest.raises(InvalidScore, match=r"^at most 20 dice in one roll: .* makes \d+"):
            ogs.increase(dice, stages, open_roll=True)
    with pytest.raises(InvalidScore, match="at most 20 dice"):
        ogs.increase(["d12"], 100)


@pytest.mark.parametrize("name", ["d\u00b2", "d\u0668", "d\uff18", "d\u09ea"])
def test_it_refuses_dice_written_with_other_digits(name: str) -> None:
    # '²' passes str.isdigit() but int() refuses it; Arabic-Indic, full-width and Bengali
    # digits int() reads: each must be the same clear error as 'd7'.
    with pytest.raises(InvalidChoice, match="a die is written like 'd8'"):
        ogs.parse_die(name)


@given(size=sizes, stages=st.integers(0, 30))
def test_it_raises_the_highest_total_with_every_stage(size: int, stages: int) -> None:
    now, then = ogs.increase_die(size, stages), ogs.increase_die(size, stages + 1)
    assert sum(then) > sum(now)
    assert all(d in ogs.DIE_SIZES for d in then)
    # Multi-stage effects compose while the newest die has not passed d12.
    if now[-1] < 12:
        assert then == (*now[:-1], *ogs.increase_die(now[-1], 1))


def test_it_rerolls_ones_on_the_enhancement_dice_only() -> None:
    check = ogs.ActionCheck((4, 6, 8, 8), reroll_ones=True)
    result = ogs.roll_check(check, values=[1, 1, 1, 3], rerolls=[7])
    assert result.values == (1, 1, 7, 3)
    assert result.rerolled == (2,)
    assert result.first_faces == (1,)
    assert result.total == 12


def test_it_rerolls_server_dice_ones_with_the_generator() -> None:
    check = ogs.ActionCheck((4, 6, 8), reroll_ones=True)
    rng = random.Random(3)
    results = [ogs.roll_check(check, rng=rng) for _ in range(100)]
    rerolled = [r for r in results if r.rerolled]
    assert rerolled and all(r.first_faces == (1,) for r in rerolled)
    assert all(1 <= r.values[2] <= 8 for r in rerolled)


def test_it_never_rerolls_typed_in_ones_with_the_generator() -> None:
    # Dice typed in at the table are read, never topped up with generated ones: the 1 on the
    # d8 needs its re-roll typed in too, even when a generator is at hand.
    check = ogs.ActionCheck((4, 6, 8), reroll_ones=True)
    with pytest.raises(DiceError, match=r"^rerolls: .*position 3 showed 1"):
        ogs.roll_check(check, values=[2, 4, 1], rng=random.Random(3))
    assert ogs.roll_check(check, values=[2, 4, 1], rerolls=[5], rng=random.Random(3)).total == 11


def test_it_never_types_in_rerolls_for_server_dice() -> None:
    check = ogs.ActionCheck((4, 6, 8), reroll_ones=True)
    with pytest.raises(DiceError, match=r"^rerolls: .*give values too"):
        ogs.roll_check(check, rerolls=[5], rng=random.Random(3))


def test_it_is_reproducible_with_a_seeded_random() -> None:
    check = ogs.ActionCheck((6, 8, 10), flat=1, reroll_ones=True)
    first = [ogs.roll_check(check, difficulty=12, rng=random.Random(42)) for _ in range(2)]
    assert first[0] == first[1]
    rng = random.Random(5)
    results = [ogs.roll_check(check, difficulty=12, rng=rng) for _ in range(200)]
    assert all(3 + 1 <= r.total <= 24 + 1 for r in results)
    assert any(r.success for r in results) and not all(r.success for r in results)


def test_it_rolls_off_with_given_d12s_until_they_differ() -> None:
    a = ogs.roll_check(ogs.ActionCheck((6, 6)), values=[3, 4])
    b = ogs.roll_check(ogs.ActionCheck((6, 6)), values=[4, 3])
    result = ogs.opposed(a, b, rolloffs=[(5, 5), (2, 9)])
    assert (result.winner, result.decided_by, result.rolloffs) == ("b", "rolloff", ((5, 5), (2, 9)))
    rolled = ogs.opposed(a, b, rng=random.Random(1))
    assert rolled.decided_by == "rolloff" and rolled.rolloffs[-1][0] != rolled.rolloffs[-1][1]


def test_it_asks_for_the_rolloffs_of_typed_in_dice_rather_than_rolling_them() -> None:
    # Without a generator (the API's physical dice) a tie that reaches the roll-off needs its
    # d12s typed in: the first pair, and another while the pairs given still tie.
    a = ogs.roll_check(ogs.ActionCheck((6, 6)), values=[3, 4])
    with pytest.raises(DiceError, match=r"^rolloffs: tied on total, values and sizes"):
        ogs.opposed(a, a)
    with pytest.raises(DiceError, match=r"^rolloffs: still tied after the roll-offs given"):
        ogs.opposed(a, a, rolloffs=[(7, 7)])
    assert ogs.opposed(a, a, rolloffs=[(7, 7), (2, 9)]).winner == "b"


def test_it_counts_a_missing_die_as_lower() -> None:
    # 6 + 4 + flat 1 against 6 + 4 + 1: same total, the side with the extra die wins on values.
    a = ogs.roll_check(ogs.ActionCheck((6, 6), flat=1), values=[6, 4])
    b = ogs.roll_check(ogs.ActionCheck((6, 6, 6)), values=[6, 4, 1])
    assert ogs.opposed(a, b).winner == "b"


def test_it_rolls_open_rolls() -> None:
    assert ogs.roll_open(["d10"] * 10, values=[1] * 10, flat=3).total == 13
    assert 10 <= ogs.roll_open(["d10"] * 10, rng=random.Random(9)).total <= 100


# --- exact odds ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "check",
    [
        ogs.ActionCheck((4, 8, 8)),
        ogs.ActionCheck((6, 6, 6), flat=2),
        ogs.ActionCheck((4, 6, 4), reroll_ones=True),
        ogs.ActionCheck((4, 4, 6, 4), flat=-1, reroll_ones=True),
        ogs.ActionCheck((12, 10)),
    ],
)
@pytest.mark.parametrize("difficulty", [4, 8, 11, 15])
def test_it_matches_brute_force_check_odds(check: ogs.ActionCheck, difficulty: int) -> None:
    success = Fraction(0)
    stages: dict[int, Fraction] = {}
    for values, p in _brute_outcomes(check):
        total = sum(values) + check.flat
        if total >= difficulty:
            success += p
        s = ogs.stages_of(total, difficulty)
        if s:
            stages[s] = stages.get(s, Fraction(0)) + p
    odds = ogs.check_odds(check, difficulty)
    assert odds.success == success
    assert dict(odds.stages) == stages


def _brute_opposed(a: ogs.ActionCheck, b: ogs.ActionCheck) -> tuple[Fraction, Fraction]:
    pa = pb = Fraction(0)
    for va, qa in _brute_outcomes(a):
        for vb, qb in _brute_outcomes(b):
            p = qa * qb
            ta, tb = sum(va) + a.flat, sum(vb) + b.flat
            ka, kb = sorted(va, reverse=True), sorted(vb, reverse=True)
            sa, sb = sorted(a.dice, reverse=True), sorted(b.dice, reverse=True)
            if ta != tb:
                win = ta > tb
            elif ka != kb:
                win = ka > kb
            elif sa != sb:
                win = sa > sb
            else:
                pa += p / 2
                pb += p / 2
                continue
            if win:
                pa += p
            else:
                pb += p
    return pa, pb


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (ogs.ActionCheck((4, 8, 8)), ogs.ActionCheck((6, 6, 6))),
        (ogs.ActionCheck((4, 6), flat=1), ogs.ActionCheck((4, 4, 4))),
        (ogs.ActionCheck((6, 6)), ogs.ActionCheck((6, 6))),
        (ogs.ActionCheck((4, 4, 6), reroll_ones=True), ogs.ActionCheck((6, 4, 4))),
        # Sides of different lengths whose totals meet through the flat bonuses, and
        # re-rolls on both sides.
        (ogs.ActionCheck((6, 6), flat=3), ogs.ActionCheck((4, 4, 6), flat=-1)),
        (ogs.ActionCheck((4, 6, 4), 2, True), ogs.ActionCheck((4, 4, 4, 4), reroll_ones=True)),
        (ogs.ActionCheck((12, 4), flat=-5), ogs.ActionCheck((4, 4, 4), flat=2)),
    ],
)
def test_it_matches_brute_force_opposed_odds(a: ogs.ActionCheck, b: ogs.ActionCheck) -> None:
    odds = ogs.opposed_odds(a, b)
    assert (odds.a, odds.b) == _brute_opposed(a, b)
    assert sum(odds.decided_by.values()) == 1


def test_it_gives_the_open_roll_distribution() -> None:
    odds = ogs.open_odds(["d6", "d6"])
    assert odds.totals[2] == Fraction(1, 36)
    assert odds.totals[7] == Fraction(1, 6)
    assert ogs.open_odds(["d10"] * 10).totals[100] == Fraction(1, 10**10)


@settings(max_examples=40, deadline=None)
@given(
    dice=st.lists(sizes, min_size=2, max_size=5),
    flat=st.integers(-3, 3),
    reroll=st.booleans(),
    difficulty=st.integers(0, 40),
)
def test_it_has_check_odds_that_sum_to_one(
    dice: list[int], flat: int, reroll: bool, difficulty: int
) -> None:
    odds = ogs.check_odds(ogs.ActionCheck(tuple(dice), flat, reroll), difficulty)
    assert sum(odds.totals.values()) == 1
    assert odds.success is not None and 0 <= odds.success <= 1
    assert sum(odds.stages.values()) <= odds.success


@settings(max_examples=30, deadline=None)
@given(
    a=st.lists(sizes, min_size=2, max_size=4),
    b=st.lists(sizes, min_size=2, max_size=4),
    flat=st.integers(-2, 2),
)
def test_it_has_opposed_odds_that_sum_to_one_and_mirror(
    a: list[int], b: list[int], flat: int
) -> None:
    ca, cb = ogs.ActionCheck(tuple(a), flat), ogs.ActionCheck(tuple(b))
    odds, mirror = ogs.opposed_odds(ca, cb), ogs.opposed_odds(cb, ca)
    assert odds.a + odds.b == 1
    assert (odds.a, odds.b) == (mirror.b, mirror.a)
    if sorted(a) == sorted(b) and flat == 0:
        assert odds.a == Fraction(1, 2)


@settings(max_examples=40, deadline=None)
@given(
    dice=st.lists(sizes, min_size=2, max_size=5),
    difficulty=st.integers(0, 40),
    seed=st.integers(0, 10**6),
)
def test_it_rolls_only_totals_with_odds(dice: list[int], difficulty: int, seed: int) -> None:
    check = ogs.ActionCheck(tuple(dice), reroll_ones=True)
    result = ogs.roll_check(check, difficulty=difficulty, rng=random.Random(seed))
    assert ogs.check_odds(check, difficulty).totals[result.total] > 0
    assert result.stages == (ogs.stages_of(result.total, difficulty))


# --- bad input -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: ogs.ActionCheck(("d7", "d8")), InvalidChoice),  # type: ignore[arg-type]  # refused in __post_init__
        (lambda: ogs.ActionCheck(("d20", "d8")), InvalidChoice),  # type: ignore[arg-type]  # refused in __post_init__
        (lambda: ogs.ActionCheck(("8",)), InvalidChoice),  # type: ignore[arg-type]  # refused in __post_init__
        (lambda: ogs.ActionCheck((8,)), InvalidScore),
        (lambda: ogs.ActionCheck((8, 8), flat=1.5), InvalidScore),  # type: ignore[arg-type]  # the wrong type on purpose
        (lambda: ogs.roll_check(ogs.ActionCheck((8, 8)), values=[1]), DiceError),
        (lambda: ogs.roll_check(ogs.ActionCheck((8, 8)), values=[1, 9]), DiceError),
        (lambda: ogs.roll_check(ogs.ActionCheck((8, 8)), values=[0, 2]), DiceError),
        (lambda: ogs.roll_check(ogs.ActionCheck((8, 8))), DiceError),
        (
            lambda: ogs.roll_check(ogs.ActionCheck((8, 8, 6), reroll_ones=True), values=[2, 2, 1]),
            DiceError,
        ),
        (
            lambda: ogs.roll_check(ogs.ActionCheck((8, 8, 6)), values=[2, 2, 1], rerolls=[3]),
            DiceError,
        ),
        (
            lambda: ogs.roll_check(ogs.ActionCheck((8, 8)), values=[1, 2], difficulty=-1),
            InvalidScore,
        ),
        (lambda: ogs.increase(["d8"], -1), InvalidScore),
        (lambda: ogs.increase(["d8", "d6"], 1, target=2), InvalidScore),
        (lambda: ogs.increase(["d8"], 1, open_roll=True, target=0), InvalidChoice),
        (lambda: ogs.increase([], 1), InvalidScore),
        (lambda: ogs.roll_open([], values=[]), InvalidScore),
        (lambda: ogs.parse_dice("d8"), InvalidChoice),
    ],
)
def test_it_rejects_bad_input(call: object, error: type[RulesError]) -> None:
    with pytest.raises(error) as info:
        call()  # type: ignore[operator]  # a lambda of the table
    assert str(info.value)


def test_it_asks_for_more_rolloffs_when_still_tied() -> None:
    a = ogs.roll_check(ogs.ActionCheck((6, 6)), values=[3, 4])
    with pytest.raises(DiceError, match="roll-offs"):
        ogs.opposed(a, a, rolloffs=[(4, 4)])
    with pytest.raises(DiceError, match="d12"):
        ogs.opposed(a, a, rolloffs=[(13, 4)])


def test_it_keeps_its_docstring_examples_true() -> None:
    assert doctest.testmod(ogs).failed == 0


def test_it_serialises_results_and_odds_for_json() -> None:
    a = ogs.roll_check(ogs.ActionCheck((4, 8, 8)), difficulty=8, values=[1, 4, 6])
    b = ogs.roll_check(ogs.ActionCheck((6, 6, 6)), values=[1, 4, 6])
    out = ogs.opposed(a, b).as_dict()
    assert (out["winner"], out["decided_by"]) == ("a", "sizes")
    assert a.as_dict()["dice"] == ["d4", "d8", "d8"]
    assert a.as_dict()["stages"] == 1
    exact = ogs.check_odds(ogs.ActionCheck((4, 8, 8)), 8).as_dict(exact=True)
    assert exact["success"] == "111/128"
    assert ogs.opposed_odds(ogs.ActionCheck((6, 6)), ogs.ActionCheck((6, 6))).as_dict()["a"] == 0.5
    json.dumps([out, exact, ogs.roll_open(["d6"], values=[3]).as_dict()])


def test_it_works_out_opposed_odds_at_eight_dice_a_side() -> None:
    a = ogs.ActionCheck((4, 6, 8, 10, 12, 12, 12, 12), flat=1, reroll_ones=True)
    b = ogs.ActionCheck((12,) * 8, reroll_ones=True)
    odds, mirror = ogs.opposed_odds(a, b), ogs.opposed_odds(b, a)
    assert odds.a + odds.b == 1
    assert (odds.a, odds.b) == (mirror.b, mirror.a)
    assert sum(odds.decided_by.values()) == 1
    assert odds.decided_by == mirror.decided_by
    assert odds.b > odds.a > 0


def test_it_limits_exact_opposed_odds_to_eight_dice_a_side() -> None:
    with pytest.raises(InvalidScore, match="up to 8 dice"):
        ogs.opposed_odds(ogs.ActionCheck((4,) * 9), ogs.ActionCheck((4, 4)))
