"""OMG scores and the d100 check: Proficiency versus Difficulty.

A score (aptitude + discipline, 1..10) becomes a Proficiency ``PRO = 50 + 5 x score`` to roll
at or under, or a Difficulty ``DIF = 5 x score`` to roll over. The degree of a roll follows the
ordered reading in docs/rules.md, "Scores and the degree of a roll":

>>> r = check(70, 20, 43)
>>> r.degree, r.abbr, r.success, r.sum
(<Degree.SUCCESS: 'success'>, None, True, 7)
>>> check(70, 20, 70).abbr, check(70, 20, 11).abbr, check(70, 20, 88).abbr
('EpS', 'DrF', 'SwS')
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from rules.engine import dice
from rules.engine.errors import InvalidScore, RulesError
from rules.engine.omg_data import DIFFICULTY_CATEGORIES, PROFICIENCY_TIERS
from rules.engine.omg_guards import require_flag, require_rng

__all__ = [
    "DIF_MAX",
    "DIF_MIN",
    "PRO_MAX",
    "PRO_MIN",
    "CheckResult",
    "Degree",
    "SecondHit",
    "apply_fate",
    "check",
    "composite_dif",
    "composite_pro",
    "degree_of",
    "difficulty_category",
    "dif",
    "pro",
    "proficiency_tier",
    "score",
    "second_hit",
]

PRO_MIN, PRO_MAX = 55, 100
DIF_MIN, DIF_MAX = 5, 50


class Degree(StrEnum):
    """The degree of result of a d100 check."""

    SUCCESS = "success"
    FAILURE = "failure"
    DRAMATIC_SUCCESS = "dramatic_success"
    DRAMATIC_FAILURE = "dramatic_failure"
    EPIC_SUCCESS = "epic_success"
    EPIC_FAILURE = "epic_failure"
    SUCCESS_WITH_SACRIFICE = "success_with_sacrifice"

    @property
    def abbr(self) -> str | None:
        """``DrS``, ``DrF``, ``EpS``, ``EpF``, ``SwS``; ``None`` for a plain result."""
        return _ABBR[self]

    @property
    def success(self) -> bool:
        """True for every kind of success, success with sacrifice included."""
        return self in _SUCCESSES

    @property
    def label(self) -> str:
        """Human label: ``"Dramatic success"``."""
        return self.value.replace("_", " ").capitalize()


_ABBR: dict[Degree, str | None] = {
    Degree.SUCCESS: None,
    Degree.FAILURE: None,
    Degree.DRAMATIC_SUCCESS: "DrS",
    Degree.DRAMATIC_FAILURE: "DrF",
    Degree.EPIC_SUCCESS: "EpS",
    Degree.EPIC_FAILURE: "EpF",
    Degree.SUCCESS_WITH_SACRIFICE: "SwS",
}
_SUCCESSES = frozenset(
    {
        Degree.SUCCESS,
        Degree.DRAMATIC_SUCCESS,
        Degree.EPIC_SUCCESS,
        Degree.SUCCESS_WITH_SACRIFICE,
    }
)


def score(apt: int, dsc: int = 0) -> int:
    """Aptitude (1..5) plus discipline (0..5, 0 = untrained), clamped to 1..10.

    >>> score(3, 3), score(4, 0)
    (6, 4)
    """
    apt = dice.require_int("APT", apt, 1, 5)
    dsc = dice.require_int("DSC", dsc, 0, 5)
    return max(1, min(10, apt + dsc))


def pro(value: int) -> int:
    """Proficiency of a score: ``50 + 5 x score`` (55..100).

    >>> pro(score(3, 3)), pro(score(4, 3)), pro(score(5, 3))
    (80, 85, 90)
    """
    return 50 + 5 * dice.require_int("score", value, 1, 10)


def dif(value: int) -> int:
    """Difficulty of a score: ``5 x score`` (5..50).

    >>> dif(score(3, 2)), dif(score(4, 2)), dif(score(5, 2))
    (25, 30, 35)
    """
    return 5 * dice.require_int("score", value, 1, 10)


def composite_pro(composite: int) -> int:
    """A composite (2..10) used as a test: its PRO. ``composite_pro(7) == 85``."""
    return pro(dice.require_int("composite", composite, 2, 10))


def composite_dif(composite: int) -> int:
    """A composite (2..10) used as a save: its DIF. ``composite_dif(7) == 35``."""
    return dif(dice.require_int("composite", composite, 2, 10))


def proficiency_tier(pro_value: int) -> str:
    """Name of the highest tier reached by a PRO (``65`` is still ``"Capable"``).

    >>> proficiency_tier(55), proficiency_tier(65), proficiency_tier(95), proficiency_tier(100)
    ('Inept', 'Capable', 'Expert', 'Master')
    """
    pro_value = dice.require_int("PRO", pro_value, PRO_MIN, PRO_MAX)
    return [t.name for t in PROFICIENCY_TIERS if t.pro <= pro_value][-1]


def difficulty_category(dif_value: int) -> str | None:
    """Name of the GM category whose DIF this is, ``None`` between categories.

    >>> difficulty_category(20), difficulty_category(25)
    ('Moderate', None)
    """
    dif_value = dice.require_int("DIF", dif_value, DIF_MIN, DIF_MAX)
    return next((c.name for c in DIFFICULTY_CATEGORIES if c.dif == dif_value), None)


def _require_pvd(pro_value: object, dif_value: object) -> tuple[int, int]:
    return (
        dice.require_int("PRO", pro_value, PRO_MIN, PRO_MAX),
        dice.require_int("DIF", dif_value, DIF_MIN, DIF_MAX),
    )


def checked_degree(r: int, p: int, d: int) -> Degree:
    """:func:`degree_of` for numbers already checked (the odds' hot loops)."""
    # The ordered rule of RULES.md: epic beats doubles, doubles beat plain.
    if r == p:
        return Degree.EPIC_SUCCESS
    if r == d:
        return Degree.EPIC_FAILURE
    if r == 100 or r % 11 == 0:
        if r < d:
            return Degree.DRAMATIC_FAILURE
        if r <= p:
            return Degree.DRAMATIC_SUCCESS
        return Degree.SUCCESS_WITH_SACRIFICE
    if d < r <= p:
        return Degree.SUCCESS
    return Degree.FAILURE


def degree_of(roll: int, pro_value: int, dif_value: int) -> Degree:
    """Degree of ``roll`` against ``pro_value`` v ``dif_value``.

    >>> [degree_of(r, 70, 20).abbr for r in (11, 20, 44, 70, 77, 100)]
    ['DrF', 'EpF', 'DrS', 'EpS', 'SwS', 'SwS']
    """
    p, d = _require_pvd(pro_value, dif_value)
    return checked_degree(dice.require_roll(roll), p, d)


def checked_second_hit(r: int, p: int, d: int) -> tuple[int, bool]:
    """The reversed roll and whether it hits (:func:`second_hit`), for numbers already
    checked."""
    rev = (r % 10 * 10 + r % 100 // 10) or 100
    return rev, checked_degree(r, p, d).success and d < rev <= p


def second_hit(roll: int, pro_value: int, dif_value: int) -> SecondHit:
    """The fast strike's second attack, read from the reversed roll.

    It is a plain hit or miss (never epic, never dramatic) and it follows only a successful
    first attack, which is how 70v20 lands a second hit on 25 rolls in 100
    (docs/rules.md, "Fast strike").

    >>> second_hit(43, 70, 20)
    SecondHit(roll=34, hit=True)
    >>> second_hit(82, 70, 20)  # the first attack missed, so there is no second
    SecondHit(roll=28, hit=False)
    """
    p, d = _require_pvd(pro_value, dif_value)
    rev, hit = checked_second_hit(dice.require_roll(roll), p, d)
    return SecondHit(rev, hit)


@dataclass(frozen=True, slots=True)
class SecondHit:
    """The reversed reading of a disciplined fast strike."""

    roll: int
    hit: bool


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The full reading of one d100 roll against a PvD.

    ``exp`` is the EXP mark earned on the discipline used (0 or 1); ``fate`` the change to the
    roller's Fate (-1, 0 or +1; apply it with :func:`apply_fate`, which never goes below 0).
    ``second`` is set only when the check was read as a fast strike.
    """

    roll: int
    pro: int
    dif: int
    degree: Degree
    sum: int
    second: SecondHit | None = None

    @property
    def abbr(self) -> str | None:
        return self.degree.abbr

    @property
    def success(self) -> bool:
        return self.degree.success

    @property
    def epic(self) -> bool:
        return self.degree in (Degree.EPIC_SUCCESS, Degree.EPIC_FAILURE)

    @property
    def exp(self) -> int:
        return 1 if self.epic else 0

    @property
    def fate(self) -> int:
        if self.degree is Degree.EPIC_SUCCESS:
            return 1
        if self.degree is Degree.EPIC_FAILURE:
            return -1
        return 0

    @property
    def pvd(self) -> str:
        """``"70v20"``."""
        return f"{self.pro}v{self.dif}"

    def as_dict(self) -> dict[str, object]:
        """JSON-ready, with the field names of the check endpoint.

        >>> check(70, 20, 43, fast=True).as_dict()["second"]
        {'roll': 34, 'hit': True}
        """
        out: dict[str, object] = {
            "roll": self.roll,
            "pro": self.pro,
            "dif": self.dif,
            "degree": self.degree.value,
            "abbr": self.abbr,
            "success": self.success,
            "exp": self.exp,
            "fate": self.fate,
            "sum": self.sum,
        }
        if self.second is not None:
            out["second"] = {"roll": self.second.roll, "hit": self.second.hit}
        return out


def check(
    pro_value: int,
    dif_value: int,
    roll: int | None = None,
    *,
    rng: random.Random | None = None,
    fast: bool = False,
) -> CheckResult:
    """Resolve a d100 roll (given, or rolled with ``rng``) against ``pro_value`` v ``dif_value``.

    With ``fast=True`` the reversed roll is read too, as a disciplined fast strike's second
    attack.

    >>> r = check(70, 20, 43, fast=True)
    >>> r.degree.value, r.success, r.exp, r.fate, r.sum, r.second
    ('success', True, 0, 0, 7, SecondHit(roll=34, hit=True))
    >>> r = check(70, 20, 20)
    >>> r.abbr, r.success, r.exp, r.fate
    ('EpF', False, 1, -1)
    >>> check(70, 20, rng=random.Random(7)).roll
    42
    """
    # The hot path (a given roll, plain ints in range): checked inline and answered from a
    # bounded cache of the immutable results; anything else takes the full validation below.
    if (
        rng is None
        and type(roll) is int
        and type(pro_value) is int
        and type(dif_value) is int
        and (fast is False or fast is True)
        and 1 <= roll <= 100
        and PRO_MIN <= pro_value <= PRO_MAX
        and DIF_MIN <= dif_value <= DIF_MAX
    ):
        return _given(pro_value, dif_value, roll, fast)
    p, d = _require_pvd(pro_value, dif_value)
    fast = require_flag("fast", fast)
    return _read(p, d, resolve_roll(roll, rng), fast)


def _read(p: int, d: int, r: int, fast: bool) -> CheckResult:
    second = SecondHit(*checked_second_hit(r, p, d)) if fast else None
    return CheckResult(r, p, d, checked_degree(r, p, d), dice.digit_sum(r), second)


# At most 46 PROs x 46 DIFs x 100 rolls x 2 readings exist; the table keeps the recent ones.
_given = lru_cache(maxsize=8192)(_read)


def resolve_roll(roll: int | None, rng: random.Random | None) -> int:
    """The d100 a check reads: ``roll`` when the dice were rolled at the table (checked to be
    1..100), else one rolled with ``rng``."""
    rng = require_rng(rng)
    if roll is not None:
        return dice.require_roll(roll)
    if rng is None:
        raise RulesError("give either the roll (1..100) or a random generator to roll with")
    return dice.roll_d100(rng)


def apply_fate(current: int, change: int) -> int:
    """Add a Fate change (-1, 0 or +1, as :attr:`CheckResult.fate`) to a Fate total, never
    going below 0.

    >>> apply_fate(0, -1), apply_fate(2, 1)
    (0, 3)
    """
    if isinstance(current, bool) or not isinstance(current, int) or current < 0:
        raise InvalidScore(f"Fate must be a whole number of 0 or more, got {current!r}")
    change = dice.require_int("Fate change", change, -1, 1)
    return max(0, current + change)
