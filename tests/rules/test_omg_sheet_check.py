"""The engine's checks outside combat (rules/engine/omg_sheet_check.py)."""

from __future__ import annotations

import doctest
import random

import pytest

from rules.engine import RulesError, omg, omg_sheet_check
from rules.engine.odds import check_odds


def test_it_passes_its_doctests():
    assert doctest.testmod(omg_sheet_check).failed == 0


@pytest.mark.parametrize("kind", ["aptitude", "discipline", "composite", "save"])
def test_its_odds_add_up_to_100_and_match_the_rolls(kind):
    for against in (5, 20, 37, 50) if kind != "save" else (55, 70, 90, 100):
        spec = omg.sheet_check(kind, aptitude=3, discipline=2, composite=6, against=against)
        odds = omg.sheet_check_odds(spec)
        assert sum(odds.values()) == 100
        counted = dict.fromkeys(omg.Degree, 0)
        for r in range(1, 101):
            counted[omg.resolve(spec, r).degree] += 1
        assert counted == dict(odds)


def test_a_tests_odds_are_the_checks_odds():
    spec = omg.sheet_check("discipline", aptitude=4, discipline=3, against="Formidable")
    assert dict(omg.sheet_check_odds(spec)) == dict(check_odds(85, 40).counts)


def test_a_save_holds_exactly_when_the_opposing_roll_fails():
    spec = omg.sheet_check("save", composite=8, against=70)
    for r in range(1, 101):
        assert omg.resolve(spec, r).success is not omg.check(70, 40, r).success


@pytest.mark.parametrize(
    ("kind", "against"),
    [("aptitude", 4), ("aptitude", 51), ("save", 50), ("save", 101), ("aptitude", "Hard")],
)
def test_it_refuses_what_is_out_of_range(kind, against):
    with pytest.raises(RulesError):
        omg.sheet_check(kind, aptitude=3, composite=6, against=against)


def test_it_rolls_with_the_generator_given():
    spec = omg.sheet_check("aptitude", aptitude=3, against=20)
    assert omg.resolve(spec, rng=random.Random(3)).roll == random.Random(3).randint(1, 100)
