"""Fate: re-roll or revoke the most recent roll, as a pure operation on a roll history.

Anyone (self, friend or foe) may spend 1 Fate on the latest roll of the table while no later
roll has been made. Revoking marks the roll void; its effects (wounds, wear, EXP, Fate) are
for the caller to undo, and :attr:`FateOutcome.revoked` carries what to undo. A re-roll
revokes the same way and appends a fresh roll with the same PvD.

>>> h = RollHistory().record("r1", check(70, 20, 70), roller="Ada")
>>> out = spend_fate(h, "r1", fate=2, action="reroll", new_roll=43)
>>> out.fate, out.revoked.check.abbr, out.replacement.check.degree.value
(1, 'EpS', 'success')
>>> [(r.key, r.revoked) for r in out.history.records]
[('r1', True), ('r1/reroll', False)]
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from enum import StrEnum

from rules.engine.errors import FateError, InvalidChoice
from rules.engine.omg_check import CheckResult, check, resolve_roll

__all__ = ["FateAction", "FateOutcome", "RollHistory", "RollRecord", "spend_fate"]


class FateAction(StrEnum):
    REROLL = "reroll"
    REVOKE = "revoke"


@dataclass(frozen=True, slots=True)
class RollRecord:
    """One roll made at the table; ``key`` is the caller's id for it (unique in the history)."""

    key: str
    check: CheckResult
    roller: str = ""
    revoked: bool = False


@dataclass(frozen=True, slots=True)
class RollHistory:
    """The table's rolls, oldest first. Immutable: every change returns a new history."""

    records: tuple[RollRecord, ...] = ()

    @property
    def latest(self) -> RollRecord | None:
        return self.records[-1] if self.records else None

    def record(self, key: str, result: CheckResult, *, roller: str = "") -> RollHistory:
        """A new history with ``result`` appended as the latest roll."""
        if any(r.key == key for r in self.records):
            raise InvalidChoice(f"roll {key!r} is already in the history")
        return RollHistory((*self.records, RollRecord(key, result, roller)))


@dataclass(frozen=True, slots=True)
class FateOutcome:
    """The history after the spend, the spender's Fate left, the voided roll and (for a
    re-roll) the roll that replaced it."""

    history: RollHistory
    fate: int
    revoked: RollRecord
    replacement: RollRecord | None


def spend_fate(
    history: RollHistory,
    key: str,
    *,
    fate: int,
    action: FateAction | str,
    new_roll: int | None = None,
    rng: random.Random | None = None,
    new_key: str | None = None,
) -> FateOutcome:
    """Spend 1 of the spender's ``fate`` to re-roll or revoke roll ``key``.

    Raises :class:`FateError` if the spender has no Fate, the roll is unknown, already
    revoked, or not the latest roll.

    >>> h = RollHistory().record("a", check(70, 20, 43)).record("b", check(60, 30, 12))
    >>> spend_fate(h, "a", fate=1, action="revoke")
    Traceback (most recent call last):
    ...
    rules.engine.errors.FateError: roll 'a' is no longer the latest roll: 'b' came after it
    """
    try:
        act = FateAction(action)
    except ValueError:
        raise InvalidChoice(f"fate action must be reroll or revoke, got {action!r}") from None
    if isinstance(fate, bool) or not isinstance(fate, int) or fate < 0:
        raise FateError(f"Fate must be a whole number of 0 or more, got {fate!r}")
    if fate < 1:
        raise FateError("no Fate left to spend")
    latest = history.latest
    if latest is None or all(r.key != key for r in history.records):
        raise FateError(f"roll {key!r} is not in the history")
    if latest.key != key:
        raise FateError(f"roll {key!r} is no longer the latest roll: {latest.key!r} came after it")
    if latest.revoked:
        raise FateError(f"roll {key!r} has already been revoked")
    revoked = replace(latest, revoked=True)
    records = (*history.records[:-1], revoked)
    replacement: RollRecord | None = None
    if act is FateAction.REROLL:
        old = latest.check
        result = check(old.pro, old.dif, resolve_roll(new_roll, rng), fast=old.second is not None)
        replacement = RollRecord(new_key or f"{key}/reroll", result, latest.roller)
        if any(r.key == replacement.key for r in records):
            raise InvalidChoice(f"roll {replacement.key!r} is already in the history")
        records = (*records, replacement)
    return FateOutcome(RollHistory(records), fate - 1, revoked, replacement)
