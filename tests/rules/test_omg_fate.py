"""Fate: re-roll or revoke the latest roll on an immutable history."""

from __future__ import annotations

import random

import pytest

from rules import omg
from rules.engine.errors import FateError, InvalidChoice
from rules.engine.omg import RollHistory


def history() -> RollHistory:
    return (
        RollHistory()
        .record("a", omg.check(70, 20, 43), roller="Ada")
        .record("b", omg.check(80, 25, 11, fast=True), roller="Orc")
    )


def test_it_revokes_the_latest_roll() -> None:
    before = history()
    out = omg.spend_fate(before, "b", fate=1, action="revoke")
    assert out.fate == 0
    assert out.replacement is None
    assert out.revoked.check.abbr == "DrF"
    assert [(r.key, r.revoked) for r in out.history.records] == [("a", False), ("b", True)]
    assert [r.revoked for r in before.records] == [False, False]  # the input is untouched


def test_it_rerolls_the_latest_roll_with_the_same_pvd() -> None:
    out = omg.spend_fate(history(), "b", fate=3, action="reroll", new_roll=43, new_key="c")
    assert out.replacement is not None
    assert (out.replacement.key, out.replacement.roller) == ("c", "Orc")
    assert out.replacement.check.pvd == "80v25"
    assert out.replacement.check.second is not None  # a fast strike stays a fast strike
    assert out.history.latest == out.replacement
    assert out.fate == 2


def test_it_rerolls_with_an_injected_generator() -> None:
    a = omg.spend_fate(history(), "b", fate=1, action="reroll", rng=random.Random(9))
    b = omg.spend_fate(history(), "b", fate=1, action="reroll", rng=random.Random(9))
    assert a == b


def test_it_lets_a_reroll_be_rerolled_by_someone_else() -> None:
    first = omg.spend_fate(history(), "b", fate=1, action="reroll", new_roll=50)
    second = omg.spend_fate(first.history, "b/reroll", fate=1, action="revoke")
    assert second.history.records[-1].revoked


@pytest.mark.parametrize(
    ("key", "fate", "action", "error", "message"),
    [
        ("b", 0, "revoke", FateError, "no Fate left to spend"),
        ("a", 1, "revoke", FateError, "'a' is no longer the latest roll: 'b' came after it"),
        ("zz", 1, "revoke", FateError, "'zz' is not in the history"),
        ("b", 1, "undo", InvalidChoice, "fate action must be reroll or revoke"),
        ("b", -1, "revoke", FateError, "Fate must be a whole number"),
    ],
)
def test_it_refuses_a_fate_spend_the_rules_forbid(
    key: str, fate: int, action: str, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        omg.spend_fate(history(), key, fate=fate, action=action, new_roll=5)


def test_it_refuses_to_revoke_twice() -> None:
    out = omg.spend_fate(history(), "b", fate=2, action="revoke")
    with pytest.raises(FateError, match="already been revoked"):
        omg.spend_fate(out.history, "b", fate=1, action="revoke")


def test_it_refuses_duplicate_keys() -> None:
    with pytest.raises(InvalidChoice, match="already in the history"):
        history().record("a", omg.check(70, 20, 1))
