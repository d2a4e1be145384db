"""Checks outside combat: an aptitude, a discipline (with its aptitude) or a composite rolled
from the sheet against the GM's difficulty, read from the character's side.

Four kinds (seed 000, "How Proficiency is determined" and "Composite Attribute"; the readings
are in docs/rules.md, "Checks outside combat"):

- ``aptitude``: PRO from the aptitude alone, against a DIF (5..50);
- ``discipline``: PRO from aptitude + discipline, against a DIF; a discipline at 0 (the sheet
  lacks it) is the aptitude alone, an undisciplined check;
- ``composite``: the composite (2..10) as a PRO "test", against a DIF;
- ``save``: 5 x the composite as the character's DIF, against the opposing PRO (55..100). The
  roll is read as usual, then turned to the character's side: the save holds when the opposing
  action fails.

>>> spec = sheet_check("discipline", aptitude=4, discipline=3, against=30)
>>> spec.pro, spec.dif, spec.level
(85, 30, 3)
>>> r = resolve(spec, 85)
>>> r.degree.abbr, r.exp, r.fate, r.exp_on
('EpS', 1, 1, 'discipline')
>>> save = sheet_check("save", composite=7, against=70)
>>> save.pro, save.dif, resolve(save, 35).degree.abbr, resolve(save, 50).success
(70, 35, 'EpS', False)
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from types import MappingProxyType

from rules.engine import dice
from rules.engine.errors import InvalidChoice
from rules.engine.omg_character import MAX_RANK
from rules.engine.omg_check import (
    DIF_MAX,
    DIF_MIN,
    PRO_MAX,
    PRO_MIN,
    CheckResult,
    Degree,
    check,
    checked_degree,
    composite_dif,
    composite_pro,
    pro,
    score,
)
from rules.engine.omg_data import DIFFICULTY_CATEGORIES, PROFICIENCY_TIERS

__all__ = [
    "CheckKind",
    "SheetCheck",
    "SheetCheckResult",
    "against_value",
    "resolve",
    "save_degree",
    "sheet_check",
    "sheet_check_odds",
]


class CheckKind(StrEnum):
    APTITUDE = "aptitude"
    DISCIPLINE = "discipline"
    COMPOSITE = "composite"
    SAVE = "save"


# The opposing roll's degree read from the saver's side (docs/rules.md, "Saves").
_SAVE: dict[Degree, Degree] = {
    Degree.EPIC_SUCCESS: Degree.EPIC_FAILURE,
    Degree.EPIC_FAILURE: Degree.EPIC_SUCCESS,
    Degree.DRAMATIC_SUCCESS: Degree.DRAMATIC_FAILURE,
    Degree.DRAMATIC_FAILURE: Degree.DRAMATIC_SUCCESS,
    Degree.SUCCESS: Degree.FAILURE,
    Degree.FAILURE: Degree.SUCCESS,
    Degree.SUCCESS_WITH_SACRIFICE: Degree.FAILURE,
}


def save_degree(opposing: Degree) -> Degree:
    """The saver's degree when the opposing action rolled ``opposing``.

    >>> save_degree(Degree.EPIC_FAILURE).abbr, save_degree(Degree.SUCCESS_WITH_SACRIFICE).value
    ('EpS', 'failure')
    """
    return _SAVE[opposing]


@dataclass(frozen=True, slots=True)
class SheetCheck:
    """What is rolled: the PvD and whose numbers they are. ``level`` is the discipline's level
    (0 for every check that uses none); ``save`` says the PRO is the opposing side's."""

    kind: CheckKind
    pro: int
    dif: int
    level: int = 0

    @property
    def save(self) -> bool:
        return self.kind is CheckKind.SAVE

    @property
    def disciplined(self) -> bool:
        return self.kind is CheckKind.DISCIPLINE and self.level > 0


def against_value(kind: CheckKind | str, against: int | str) -> int:
    """The number a check is rolled against: a DIF (5..50, or a Difficulty Category by name)
    for a test, the opposing PRO (55..100, or a proficiency tier by name) for a save.

    >>> against_value("aptitude", "Ambitious"), against_value("save", "adept")
    (30, 70)
    """
    k = _kind(kind)
    if isinstance(against, str):
        table = (
            {t.name.lower(): t.pro for t in PROFICIENCY_TIERS}
            if k is CheckKind.SAVE
            else {c.name.lower(): c.dif for c in DIFFICULTY_CATEGORIES}
        )
        try:
            return table[against.strip().lower()]
        except KeyError:
            names = ", ".join(n.capitalize() for n in table)
            raise InvalidChoice(f"against must be one of {names}, or a number") from None
    if k is CheckKind.SAVE:
        return dice.require_int("against (the opposing PRO)", against, PRO_MIN, PRO_MAX)
    return dice.require_int("against (the DIF)", against, DIF_MIN, DIF_MAX)


def _kind(kind: CheckKind | str) -> CheckKind:
    try:
        return CheckKind(kind)
    except ValueError:
        names = ", ".join(k.value for k in CheckKind)
        raise InvalidChoice(f"kind must be one of {names}, got {kind!r}") from None


def sheet_check(
    kind: CheckKind | str,
    *,
    against: int | str,
    aptitude: int | None = None,
    discipline: int = 0,
    composite: int | None = None,
) -> SheetCheck:
    """The PvD of a check of ``kind`` (see the module's docstring).

    >>> sheet_check("aptitude", aptitude=3, against="Moderate")
    SheetCheck(kind=<CheckKind.APTITUDE: 'aptitude'>, pro=65, dif=20, level=0)
    >>> sheet_check("discipline", aptitude=3, discipline=0, against=20).pro  # undisciplined
    65
    >>> sheet_check("composite", composite=6, against=40).pro
    80
    """
    k = _kind(kind)
    value = against_value(k, against)
    if k in (CheckKind.APTITUDE, CheckKind.DISCIPLINE):
        if aptitude is None:
            raise InvalidChoice(f"a {k.value} check needs an aptitude")
        level = discipline if k is CheckKind.DISCIPLINE else 0
        level = dice.require_int("discipline", level, 0, MAX_RANK)
        return SheetCheck(k, pro(score(aptitude, level)), value, level)
    if composite is None:
        raise InvalidChoice(f"a {k.value} needs a composite")
    if k is CheckKind.COMPOSITE:
        return SheetCheck(k, composite_pro(composite), value)
    return SheetCheck(k, value, composite_dif(composite))


@dataclass(frozen=True, slots=True)
class SheetCheckResult:
    """A check's reading from the character's side.

    ``exp`` is the EXP mark earned (1 on an epic roll, none on a discipline already at 5);
    ``exp_on`` where it goes: ``"discipline"`` (the one used) or ``"general"`` (the sheet's
    own marks, for a check without a discipline), ``None`` when none was earned. ``fate`` is
    the change to the character's Fate (-1, 0, +1; never below 0 once applied)."""

    spec: SheetCheck
    roll: int
    check: CheckResult
    degree: Degree

    @property
    def success(self) -> bool:
        return self.degree.success

    @property
    def epic(self) -> bool:
        return self.degree in (Degree.EPIC_SUCCESS, Degree.EPIC_FAILURE)

    @property
    def exp(self) -> int:
        if not self.epic or self.spec.level >= MAX_RANK:
            return 0
        return 1

    @property
    def exp_on(self) -> str | None:
        if not self.exp:
            return None
        return "discipline" if self.spec.disciplined else "general"

    @property
    def fate(self) -> int:
        return {Degree.EPIC_SUCCESS: 1, Degree.EPIC_FAILURE: -1}.get(self.degree, 0)


def resolve(
    spec: SheetCheck, roll: int | None = None, *, rng: random.Random | None = None
) -> SheetCheckResult:
    """Read ``roll`` (1..100, or one rolled with ``rng``) for ``spec``.

    >>> spec = sheet_check("discipline", aptitude=3, discipline=5, against=20)
    >>> r = resolve(spec, 90)
    >>> r.degree.abbr, r.exp, r.fate  # the PRO rolled at discipline 5: only Fate moves
    ('EpS', 0, 1)
    >>> resolve(spec, rng=random.Random(7)).roll
    42
    """
    result = check(spec.pro, spec.dif, roll, rng=rng)
    degree = save_degree(result.degree) if spec.save else result.degree
    return SheetCheckResult(spec, result.roll, result, degree)


def sheet_check_odds(spec: SheetCheck) -> Mapping[Degree, int]:
    """Faces of 100 giving each degree, from the character's side.

    >>> o = sheet_check_odds(sheet_check("save", composite=4, against=70))
    >>> o[Degree.EPIC_SUCCESS], o[Degree.SUCCESS], sum(o.values())
    (1, 44, 100)
    """
    return _odds(spec.pro, spec.dif, spec.save)


@cache
def _odds(p: int, d: int, save: bool) -> Mapping[Degree, int]:
    counts = dict.fromkeys(Degree, 0)
    for r in dice.D100_FACES:
        degree = checked_degree(r, p, d)
        counts[save_degree(degree) if save else degree] += 1
    return MappingProxyType(counts)
