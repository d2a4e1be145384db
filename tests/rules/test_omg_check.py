"""Scores, the d100 check and the dice readings of the OMG System."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rules import RulesError, dice, omg
from rules.engine.errors import InvalidScore
from rules.engine.omg import Degree

DRS = Degree.DRAMATIC_SUCCESS

# The seed's own 70v20 table (docs/rules.md, "Scores and the degree of a roll").
SEVENTY_V_TWENTY = {
    11: Degree.DRAMATIC_FAILURE,
    20: Degree.EPIC_FAILURE,
    22: DRS,
    33: DRS,
    44: DRS,
    55: DRS,
    66: DRS,
    70: Degree.EPIC_SUCCESS,
    77: Degree.SUCCESS_WITH_SACRIFICE,
    88: Degree.SUCCESS_WITH_SACRIFICE,
    99: Degree.SUCCESS_WITH_SACRIFICE,
    100: Degree.SUCCESS_WITH_SACRIFICE,
}


def test_it_reads_the_seventy_v_twenty_table() -> None:
    got = {r: omg.degree_of(r, 70, 20) for r in range(1, 101)}
    special = {r: d for r, d in got.items() if d.abbr is not None}
    assert special == SEVENTY_V_TWENTY
    plain = [d for d in got.values() if d.abbr is None]
    assert plain.count(Degree.SUCCESS) == 44
    assert plain.count(Degree.FAILURE) == 44


@pytest.mark.parametrize(
    ("roll", "abbr", "success", "exp", "fate"),
    [
        (11, "DrF", False, 0, 0),
        (20, "EpF", False, 1, -1),
        (21, None, True, 0, 0),
        (44, "DrS", True, 0, 0),
        (70, "EpS", True, 1, 1),
        (71, None, False, 0, 0),
        (77, "SwS", True, 0, 0),
        (100, "SwS", True, 0, 0),
        (1, None, False, 0, 0),
    ],
)
def test_it_reports_abbr_success_exp_and_fate(
    roll: int, abbr: str | None, success: bool, exp: int, fate: int
) -> None:
    result = omg.check(70, 20, roll)
    assert (result.abbr, result.success, result.exp, result.fate) == (abbr, success, exp, fate)


def test_it_lets_epic_beat_doubles() -> None:
    # 55v... : the PRO itself is doubles; rule 1 (epic) wins over rule 3 (doubles).
    assert omg.degree_of(55, 55, 20) is Degree.EPIC_SUCCESS
    assert omg.degree_of(44, 60, 44) is Degree.EPIC_FAILURE
    assert omg.degree_of(100, 100, 50) is Degree.EPIC_SUCCESS
    assert omg.degree_of(33, 80, 40) is Degree.DRAMATIC_FAILURE


@pytest.mark.parametrize(("roll", "total"), [(43, 7), (70, 17), (5, 15), (100, 20), (10, 11)])
def test_it_sums_the_digits_with_zero_as_ten(roll: int, total: int) -> None:
    assert dice.digit_sum(roll) == total
    assert omg.check(70, 20, roll).sum == total


@pytest.mark.parametrize(
    ("roll", "rev"), [(43, 34), (70, 7), (10, 1), (5, 50), (100, 100), (1, 10), (99, 99)]
)
def test_it_reverses_the_roll(roll: int, rev: int) -> None:
    assert dice.reverse(roll) == rev


def test_it_reverses_as_a_bijection() -> None:
    assert sorted(dice.reverse(r) for r in range(1, 101)) == list(range(1, 101))


def test_it_lands_the_fast_second_hit_on_25_rolls_at_70v20() -> None:
    hits = [r for r in range(1, 101) if omg.check(70, 20, r, fast=True).second.hit]
    assert len(hits) == 25
    assert {22, 33, 44, 55, 66} <= set(hits)  # doubles: dramatic first, plain second
    assert 82 not in hits  # 28 would hit, but the first attack missed


def test_it_never_reads_the_second_hit_as_epic() -> None:
    # 70 reversed is 07, 20 reversed is 02: neither is epic, both miss.
    assert omg.second_hit(70, 70, 20).hit is False
    assert omg.second_hit(20, 70, 20).hit is False


def test_it_omits_the_second_reading_unless_fast() -> None:
    assert omg.check(70, 20, 43).second is None
    assert omg.check(70, 20, 43, fast=True).as_dict()["second"] == {"roll": 34, "hit": True}


@pytest.mark.parametrize(
    ("apt", "dsc", "pro", "dif"),
    [
        (3, 3, 80, 30),
        (4, 3, 85, 35),
        (5, 3, 90, 40),
        (3, 2, 75, 25),
        (4, 2, 80, 30),
        (5, 2, 85, 35),
    ],
)
def test_it_turns_scores_into_pro_and_dif(apt: int, dsc: int, pro: int, dif: int) -> None:
    assert omg.pro(omg.score(apt, dsc)) == pro
    assert omg.dif(omg.score(apt, dsc)) == dif


def test_it_names_tiers_and_categories() -> None:
    assert [omg.proficiency_tier(p) for p in (55, 60, 70, 85, 90, 100)] == [
        "Inept",
        "Capable",
        "Adept",
        "Adept",
        "Expert",
        "Master",
    ]
    assert [omg.difficulty_category(d) for d in (10, 20, 30, 40, 50, 15)] == [
        "Casual",
        "Moderate",
        "Ambitious",
        "Formidable",
        "Supreme",
        None,
    ]


def test_it_rolls_with_an_injected_generator() -> None:
    a = [omg.check(70, 20, rng=random.Random(42)).roll for _ in range(3)]
    assert len(set(a)) == 1
    rng = random.Random(1)
    rolls = [omg.check(70, 20, rng=rng).roll for _ in range(500)]
    assert min(rolls) >= 1
    assert max(rolls) <= 100


def test_it_applies_fate_never_below_zero() -> None:
    assert omg.apply_fate(0, -1) == 0
    assert omg.apply_fate(1, -1) == 0
    assert omg.apply_fate(1, 1) == 2


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: omg.check(70, 20, 0), "roll must be between 1 and 100, got 0"),
        (lambda: omg.check(70, 20, 101), "roll must be between 1 and 100"),
        (lambda: omg.check(70, 20, "43"), "roll must be a whole number, got '43'"),  # type: ignore[arg-type]  # the wrong type on purpose
        (lambda: omg.check(70, 20, True), "roll must be a whole number"),
        (lambda: omg.check(50, 20, 43), "PRO must be between 55 and 100, got 50"),
        (lambda: omg.check(70, 55, 43), "DIF must be between 5 and 50, got 55"),
        (lambda: omg.check(70, 20, 10**30), "roll must be between 1 and 100"),
        (lambda: omg.check(70, 20), "give either the roll"),
        (lambda: omg.score(6, 0), "APT must be between 1 and 5, got 6"),
        (lambda: omg.score(3, -1), "DSC must be between 0 and 5, got -1"),
        (lambda: omg.pro(11), "score must be between 1 and 10, got 11"),
        (lambda: omg.composite_pro(1), "composite must be between 2 and 10"),
        (lambda: omg.apply_fate(-1, 1), "Fate must be a whole number"),
        (lambda: dice.from_faces(10, 0), "tens die must be between 0 and 9"),
    ],
)
def test_it_refuses_bad_input_with_a_clear_message(call: object, message: str) -> None:
    with pytest.raises(RulesError, match=message.replace("(", r"\(")):
        call()  # type: ignore[operator]  # a lambda of the table


def test_it_raises_invalid_score_subclass() -> None:
    with pytest.raises(InvalidScore):
        omg.check(70, 20, 0)


def test_it_reads_two_d10_faces() -> None:
    assert [dice.from_faces(t, u) for t, u in ((4, 3), (0, 5), (7, 0), (0, 0))] == [43, 5, 70, 100]


@given(st.integers(55, 100), st.integers(5, 50), st.integers(1, 100))
def test_it_classifies_every_roll_consistently(pro: int, dif: int, roll: int) -> None:
    result = omg.check(pro, dif, roll, fast=True)
    assert result.success == (dif < roll <= pro or (dice.is_doubles(roll) and roll > pro))
    assert result.exp == (1 if roll in (pro, dif) else 0)
    assert 2 <= result.sum <= 20
    assert result.second is not None
    if result.second.hit:
        assert result.success
        assert dif < result.second.roll <= pro
