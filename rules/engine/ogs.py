"""OGS: polyhedral action checks, opposed checks, open rolls and die increases.

Dice are d4..d12, written as their size (``8``) or by name (``"d8"``). An action check rolls a
stat die, a skill (or force) die and an enhancement pool of zero or more dice, adds a flat bonus,
and succeeds when the total reaches the difficulty. Every two points past the difficulty is a
stage of critical success. See docs/rules.md, section "OGS", for the readings chosen here.

>>> r = roll_check(ActionCheck((4, 8, 8)), difficulty=8, values=[1, 4, 6])
>>> r.total, r.success, r.stages
(11, True, 1)
>>> increase((6,) * 10, 2, open_roll=True) == (10,) * 10
True
>>> dice_names(increase((12,), 2))
('d8', 'd8')
"""

from __future__ import annotations

import bisect
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from itertools import accumulate
from typing import Literal

from rules.engine._sibling_dice import (
    face,
    frozen_map,
    given_or_rolled,
    probabilities,
    probability,
    whole,
)
from rules.engine.errors import DiceError, InvalidChoice, InvalidScore

__all__ = [
    "DIE_SIZES",
    "MAX_DICE",
    "MAX_OPPOSED_ODDS_DICE",
    "ActionCheck",
    "CheckOdds",
    "CheckResult",
    "OpenResult",
    "OpposedOdds",
    "OpposedResult",
    "check_odds",
    "dice_names",
    "increase",
    "increase_die",
    "open_odds",
    "opposed",
    "opposed_odds",
    "parse_dice",
    "parse_die",
    "roll_check",
    "roll_open",
    "stages_of",
]

#: The dice the OGS uses, smallest first.
DIE_SIZES: tuple[int, ...] = (4, 6, 8, 10, 12)

#: Dice past the last are refused: enough for a dragon's strength check many times over.
MAX_DICE = 20
#: Exact opposed odds track every sorted set of faces, which grows fast; this many dice a side
#: (75,582 sets of faces for 8d12) stays well under a second cold.
MAX_OPPOSED_ODDS_DICE = 8

Side = Literal["a", "b"]
DecidedBy = Literal["total", "values", "sizes", "rolloff"]


def parse_die(die: object) -> int:
    """Read one die, given as its size or its name.

    >>> parse_die("d10"), parse_die(6), parse_die("D12")
    (10, 6, 12)
    """
    size = die
    if isinstance(die, str):
        text = die.strip().lower()
        # isdigit() alone lets through '²' (int() then fails) and other scripts' digits.
        if not text.startswith("d") or not (text[1:].isascii() and text[1:].isdigit()):
            raise InvalidChoice(f"a die is written like 'd8', got {die!r}")
        size = int(text[1:])
    if isinstance(size, bool) or not isinstance(size, int) or size not in DIE_SIZES:
        raise InvalidChoice(f"OGS dice are d4, d6, d8, d10 and d12, got {die!r}")
    return size


def parse_dice(dice: Sequence[object]) -> tuple[int, ...]:
    """Read a list of dice (sizes or names) into sizes.

    >>> parse_dice(["d4", "d8", 8])
    (4, 8, 8)
    """
    if isinstance(dice, str | bytes) or not isinstance(dice, Sequence):
        raise InvalidChoice(f"dice must be a list such as ['d4', 'd8'], got {dice!r}")
    if len(dice) > MAX_DICE:
        raise InvalidScore(f"at most {MAX_DICE} dice in one roll, got {len(dice)}")
    return tuple(parse_die(d) for d in dice)


def dice_names(dice: Sequence[int]) -> tuple[str, ...]:
    """Names of dice sizes: ``(8, 6)`` -> ``('d8', 'd6')``."""
    return tuple(f"d{size}" for size in dice)


def stages_of(total: int, difficulty: int) -> int:
    """Stages of critical success: one for every two points the total passes the difficulty.

    >>> stages_of(16, 8), stages_of(10, 8), stages_of(9, 8), stages_of(5, 8)
    (4, 1, 0, 0)
    """
    return max(0, (total - difficulty) // 2)


# ---------------------------------------------------------------------------------------------
# Action checks and open rolls


@dataclass(frozen=True)
class ActionCheck:
    """What is rolled: stat die, skill (or force) die, then the enhancement pool, plus a flat bonus.

    ``reroll_ones`` re-rolls each enhancement die that shows 1, once (docs/rules.md, "OGS").
    Sizes may be given as names; they are stored as ints.

    >>> ActionCheck(("d4", "d8", "d8")).dice
    (4, 8, 8)
    >>> ActionCheck((4, 8)).enhancement
    ()
    """

    dice: tuple[int, ...]
    flat: int = 0
    reroll_ones: bool = False

    def __post_init__(self) -> None:
        dice = parse_dice(self.dice)
        if len(dice) < 2:
            raise InvalidScore("an action check needs a stat die and a skill (or force) die")
        object.__setattr__(self, "dice", dice)
        whole("flat bonus", self.flat, -100, 100)
        if not isinstance(self.reroll_ones, bool):
            raise InvalidChoice(f"reroll_ones must be true or false, got {self.reroll_ones!r}")

    @property
    def stat(self) -> int:
        return self.dice[0]

    @property
    def skill(self) -> int:
        return self.dice[1]

    @property
    def enhancement(self) -> tuple[int, ...]:
        return self.dice[2:]


@dataclass(frozen=True)
class CheckResult:
    """An action check read out: the kept value of every die (after any re-roll of ones)."""

    check: ActionCheck
    values: tuple[int, ...]
    #: Indexes (into ``check.dice``) of enhancement dice that showed 1 and were re-rolled.
    rerolled: tuple[int, ...]
    #: The first faces of the re-rolled dice, in the order of ``rerolled``.
    first_faces: tuple[int, ...]
    total: int
    difficulty: int | None
    success: bool | None
    stages: int

    def as_dict(self) -> dict[str, object]:
        """JSON-ready, with the check endpoint's field names.

        >>> roll_check(ActionCheck((4, 8, 8)), difficulty=8, values=[1, 4, 6]).as_dict()["total"]
        11
        """
        return {
            "dice": list(dice_names(self.check.dice)),
            "values": list(self.values),
            "flat": self.check.flat,
            "reroll_ones": self.check.reroll_ones,
            "rerolled": list(self.rerolled),
            "first_faces": list(self.first_faces),
            "total": self.total,
            "difficulty": self.difficulty,
            "success": self.success,
            "stages": self.stages,
        }


def roll_check(
    check: ActionCheck,
    *,
    difficulty: int | None = None,
    values: Sequence[int] | None = None,
    rerolls: Sequence[int] | None = None,
    rng: random.Random | None = None,
) -> CheckResult:
    """Roll (or read) an action check and compare it with the difficulty.

    ``values`` are the faces as first rolled, one per die in ``check.dice`` order. With
    ``reroll_ones`` every enhancement die showing 1 is rolled again once: give those new faces
    in ``rerolls`` (in dice order). ``rng`` rolls only when ``values`` are left out; dice typed
    in at the table are never topped up with generated ones, so a typed-in 1 without its
    re-roll is an error.

    Seed example: an attack at difficulty 8 totalling 16 is a four-stage critical success.

    >>> r = roll_check(ActionCheck((6, 8, 10)), difficulty=8, values=[4, 5, 7])
    >>> r.total, r.success, r.stages
    (16, True, 4)
    >>> r = roll_check(ActionCheck((4, 6, 8), reroll_ones=True), values=[1, 1, 1], rerolls=[5])
    >>> r.values, r.total
    ((1, 1, 5), 7)
    """
    if difficulty is not None:
        whole("difficulty", difficulty, 0, 1000)
    if rerolls is not None and values is None:
        raise DiceError("rerolls: typed-in re-rolls need the values they re-roll; give values too")
    first = given_or_rolled("values", values, check.dice, rng)
    kept = list(first)
    ones = [i for i in range(2, len(first)) if first[i] == 1] if check.reroll_ones else []
    if rerolls is not None:
        if not check.reroll_ones and len(rerolls) > 0:
            raise DiceError("rerolls given, but this check does not re-roll ones")
        if len(rerolls) != len(ones):
            raise DiceError(
                f"rerolls: {len(ones)} enhancement die/dice showed 1, got {len(rerolls)} re-roll(s)"
            )
        new = [
            face(f"rerolls[{n}]", v, check.dice[i])
            for n, (i, v) in enumerate(zip(ones, rerolls, strict=True))
        ]
    elif ones:
        if values is not None or rng is None:
            at = ", ".join(str(i + 1) for i in ones)
            which = f"die at position {at}" if len(ones) == 1 else f"dice at positions {at}"
            raise DiceError(
                f"rerolls: the enhancement {which} showed 1; type the re-roll "
                "(dice typed in are never topped up with server dice)"
            )
        new = [rng.randint(1, check.dice[i]) for i in ones]
    else:
        new = []
    for i, v in zip(ones, new, strict=True):
        kept[i] = v
    total = sum(kept) + check.flat
    success = None if difficulty is None else total >= difficulty
    return CheckResult(
        check=check,
        values=tuple(kept),
        rerolled=tuple(ones),
        first_faces=tuple(first[i] for i in ones),
        total=total,
        difficulty=difficulty,
        success=success,
        stages=0 if difficulty is None else stages_of(total, difficulty),
    )


@dataclass(frozen=True)
class OpenResult:
    """An open roll (damage and the like): any dice, simply totalled, plus a flat bonus."""

    dice: tuple[int, ...]
    values: tuple[int, ...]
    flat: int
    total: int

    def as_dict(self) -> dict[str, object]:
        return {
            "dice": list(dice_names(self.dice)),
            "values": list(self.values),
            "flat": self.flat,
            "total": self.total,
        }


def roll_open(
    dice: Sequence[int | str],
    *,
    flat: int = 0,
    values: Sequence[int] | None = None,
    rng: random.Random | None = None,
) -> OpenResult:
    """Roll (or read) an open roll.

    >>> roll_open(["d6"] * 3, flat=2, values=[1, 5, 6]).total
    14
    """
    sizes = parse_dice(dice)
    if not sizes:
        raise InvalidScore("an open roll needs at least one die")
    whole("flat bonus", flat, -100, 100)
    got = given_or_rolled("values", values, sizes, rng)
    return OpenResult(dice=sizes, values=got, flat=flat, total=sum(got) + flat)


# ---------------------------------------------------------------------------------------------
# Opposed checks


def _sort_key(values: Sequence[int]) -> tuple[int, ...]:
    # Highest first; a side with fewer dice runs out first and loses that comparison
    # (docs/rules.md, "OGS": a missing die counts lower than any die).
    return tuple(sorted(values, reverse=True))


@dataclass(frozen=True)
class OpposedResult:
    """Who wins an opposed check and which step of the tie-break settled it."""

    a: CheckResult
    b: CheckResult
    winner: Side
    decided_by: DecidedBy
    #: The d12 roll-offs used, as (a, b) pairs; empty unless ``decided_by == "rolloff"``.
    rolloffs: tuple[tuple[int, int], ...] = field(default=())

    def as_dict(self) -> dict[str, object]:
        """JSON-ready, with the opposed endpoint's field names."""
        return {
            "winner": self.winner,
            "decided_by": self.decided_by,
            "rolloffs": [list(pair) for pair in self.rolloffs],
            "a": self.a.as_dict(),
            "b": self.b.as_dict(),
        }


def opposed(
    a: CheckResult,
    b: CheckResult,
    *,
    rolloffs: Sequence[Sequence[int]] | None = None,
    rng: random.Random | None = None,
) -> OpposedResult:
    """Settle an opposed check: total, then values high to low, then sizes, then d12 roll-offs.

    ``rolloffs`` are (a, b) pairs of d12 faces, used only when everything else ties; pairs are
    read until one differs. When they run out (or were not given) ``rng`` rolls more; without
    ``rng`` (physical dice, never topped up with generated ones) that is an error.

    Seed example: Michael (d4, d8, d8 rolling 1, 4, 6) against the guardsman (3d6 rolling
    1, 4, 6): totals 11 and 11, the same values, and Michael's d8 beats the guard's d6.

    >>> michael = roll_check(ActionCheck((4, 8, 8)), values=[1, 4, 6])
    >>> guard = roll_check(ActionCheck((6, 6, 6)), values=[1, 4, 6])
    >>> r = opposed(michael, guard)
    >>> r.winner, r.decided_by
    ('a', 'sizes')
    """
    if a.total != b.total:
        return OpposedResult(a, b, "a" if a.total > b.total else "b", "total")
    va, vb = _sort_key(a.values), _sort_key(b.values)
    if va != vb:
        return OpposedResult(a, b, "a" if va > vb else "b", "values")
    sa, sb = _sort_key(a.check.dice), _sort_key(b.check.dice)
    if sa != sb:
        return OpposedResult(a, b, "a" if sa > sb else "b", "sizes")
    used: list[tuple[int, int]] = []
    if rolloffs is not None:
        for n, pair in enumerate(rolloffs):
            if isinstance(pair, str | bytes) or not isinstance(pair, Sequence) or len(pair) != 2:
                raise DiceError(f"rolloffs[{n}] must be a pair of d12 faces (a, b), got {pair!r}")
            x = face(f"rolloffs[{n}][0]", pair[0], 12)
            y = face(f"rolloffs[{n}][1]", pair[1], 12)
            used.append((x, y))
            if x != y:
                return OpposedResult(a, b, "a" if x > y else "b", "rolloff", tuple(used))
    if rng is None:
        if used:
            raise DiceError("rolloffs: still tied after the roll-offs given; type another pair")
        raise DiceError("rolloffs: tied on total, values and sizes; type a pair of d12 roll-offs")
    while True:
        x, y = rng.randint(1, 12), rng.randint(1, 12)
        used.append((x, y))
        if x != y:
            return OpposedResult(a, b, "a" if x > y else "b", "rolloff", tuple(used))


# ---------------------------------------------------------------------------------------------
# Die increases

_NEXT = {4: 6, 6: 8, 8: 10, 10: 12}


def increase_die(size: int | str, stages: int) -> tuple[int, ...]:
    """Raise one die by ``stages`` steps of a single effect.

    Past d12 the die becomes d8 + d6; the later stages raise the newest die, and each time it
    passes d12 it stays a d12 and a new d6 joins (docs/rules.md, "OGS").

    >>> [dice_names(increase_die(4, n)) for n in (1, 2, 4)]
    [('d6',), ('d8',), ('d12',)]
    >>> [dice_names(increase_die(12, n)) for n in (1, 2, 4, 5)]
    [('d8', 'd6'), ('d8', 'd8'), ('d8', 'd12'), ('d8', 'd12', 'd6')]
    """
    die = parse_die(size)
    whole("stages", stages, 0, 100)
    done: list[int] = []
    for _ in range(stages):
        if die < 12:
            die = _NEXT[die]
        elif not done:
            done.append(8)
            die = 6
        else:
            done.append(12)
            die = 6
    return (*done, die)


def increase(
    dice: Sequence[int | str],
    stages: int,
    *,
    open_roll: bool = False,
    target: int | None = None,
) -> tuple[int, ...]:
    """Apply one die-increase effect of ``stages`` to a list of dice.

    On an open roll every die is raised. Otherwise one die is: ``target`` (an index), by default
    the last die, which is the enhancement die of a stat + skill + enhancement check.

    >>> increase(["d4", "d8", "d12"], 1)
    (4, 8, 8, 6)
    >>> increase(["d8", "d6"], 1, target=1)
    (8, 8)
    >>> increase(["d12", "d4"], 1, open_roll=True)
    (8, 6, 6)
    """
    sizes = parse_dice(dice)
    if not sizes:
        raise InvalidScore("a die increase needs at least one die")
    whole("stages", stages, 0, 100)
    if open_roll:
        if target is not None:
            raise InvalidChoice("an increase on an open roll raises every die; leave target out")
        result = tuple(d for size in sizes for d in increase_die(size, stages))
    else:
        index = len(sizes) - 1 if target is None else whole("target", target, 0, len(sizes) - 1)
        grown = increase_die(sizes[index], stages)
        result = (*sizes[:index], *grown, *sizes[index + 1 :])
    if len(result) > MAX_DICE:
        raise InvalidScore(
            f"at most {MAX_DICE} dice in one roll: this increase makes {len(result)} dice"
        )
    return result


# ---------------------------------------------------------------------------------------------
# Exact odds


def _die_weights(size: int, reroll_ones: bool) -> tuple[tuple[int, int], ...]:
    """(face, weight) pairs of one die; the weights share the denominator ``size`` (or size**2)."""
    if not reroll_ones:
        return tuple((v, 1) for v in range(1, size + 1))
    # A 1 stands only when the re-roll shows 1 again.
    return ((1, 1), *((v, size + 1) for v in range(2, size + 1)))


def _dice_spec(check: ActionCheck) -> tuple[tuple[int, bool], ...]:
    return tuple((size, check.reroll_ones and i >= 2) for i, size in enumerate(check.dice))


# Bounded caches: the API is public and dice lists have many combinations.
@lru_cache(maxsize=1024)
def _total_weights(spec: tuple[tuple[int, bool], ...]) -> tuple[dict[int, int], int]:
    dist = {0: 1}
    denominator = 1
    for size, reroll in spec:
        weights = _die_weights(size, reroll)
        denominator *= size * size if reroll else size
        new: defaultdict[int, int] = defaultdict(int)
        for total, w in dist.items():
            for v, wv in weights:
                new[total + v] += w * wv
        dist = dict(new)
    return dist, denominator


# An outcome of a side (its total and the multiset of its kept faces) as one int, so that
# comparing two outcomes is one int comparison, in the order of the tie-break: the total
# first, then the faces sorted high to low. Below the total sits the count of each face in
# base _COUNT_BASE, face 12 the most significant digit. Two multisets compare as their
# sorted faces do: at the highest face whose count differs, the side with more of it is
# ahead at that position of the sorted faces (or still has a die where the other has run
# out, and a missing die counts lower than any die).
_COUNT_BASE = MAX_DICE + 1
_TOTAL_UNIT = _COUNT_BASE ** max(DIE_SIZES)
_FACE_STEP = {v: v * _TOTAL_UNIT + _COUNT_BASE ** (v - 1) for v in range(1, max(DIE_SIZES) + 1)}


# Each entry can hold ~75,000 outcomes (8d12), so only a few are kept.
@lru_cache(maxsize=16)
def _sorted_weights(spec: tuple[tuple[int, bool], ...]) -> tuple[dict[int, int], int]:
    """Weights of every (total, multiset of kept faces) outcome, keyed as described above."""
    dist: dict[int, int] = {0: 1}
    denominator = 1
    for size, reroll in spec:
        steps = [(_FACE_STEP[v], wv) for v, wv in _die_weights(size, reroll)]
        denominator *= size * size if reroll else size
        new: defaultdict[int, int] = defaultdict(int)
        for key, w in dist.items():
            for step, wv in steps:
                new[key + step] += w * wv
        dist = dict(new)
    return dist, denominator


@dataclass(frozen=True)
class CheckOdds:
    """Exact odds of an action check (or open roll) against a difficulty.

    ``stages`` maps each stage count (1 and up) to its probability; a success without a
    critical is ``success - sum(stages.values())``.
    """

    totals: Mapping[int, Fraction]
    difficulty: int | None
    success: Fraction | None
    stages: Mapping[int, Fraction]

    def as_dict(self, exact: bool = False) -> dict[str, object]:
        """JSON-ready; probabilities as floats, or as ``"n/d"`` strings when ``exact``."""
        return {
            "totals": probabilities(self.totals, exact),
            "difficulty": self.difficulty,
            "success": None if self.success is None else probability(self.success, exact),
            "stages": probabilities(self.stages, exact),
        }


def _odds_from(dist: dict[int, int], denominator: int, difficulty: int | None) -> CheckOdds:
    totals = frozen_map((t, Fraction(w, denominator)) for t, w in sorted(dist.items()))
    if difficulty is None:
        return CheckOdds(totals, None, None, frozen_map({}))
    success = sum((p for t, p in totals.items() if t >= difficulty), Fraction(0))
    stages: defaultdict[int, Fraction] = defaultdict(Fraction)
    for t, p in totals.items():
        s = stages_of(t, difficulty)
        if s:
            stages[s] += p
    return CheckOdds(totals, difficulty, success, frozen_map(sorted(stages.items())))


@lru_cache(maxsize=4096)
def _check_odds(spec: tuple[tuple[int, bool], ...], flat: int, difficulty: int | None) -> CheckOdds:
    dist, denominator = _total_weights(tuple(sorted(spec)))
    return _odds_from({t + flat: w for t, w in dist.items()}, denominator, difficulty)


def check_odds(check: ActionCheck, difficulty: int | None = None) -> CheckOdds:
    """Exact distribution of an action check's total, chance of success and of each stage.

    >>> odds = check_odds(ActionCheck((4, 8, 8)), difficulty=8)
    >>> odds.success
    Fraction(111, 128)
    >>> sum(odds.totals.values())
    Fraction(1, 1)
    """
    if difficulty is not None:
        whole("difficulty", difficulty, 0, 1000)
    return _check_odds(_dice_spec(check), check.flat, difficulty)


def open_odds(dice: Sequence[int | str], flat: int = 0) -> CheckOdds:
    """Exact distribution of an open roll's total.

    >>> open_odds(["d6", "d6"]).totals[7]
    Fraction(1, 6)
    """
    sizes = parse_dice(dice)
    if not sizes:
        raise InvalidScore("an open roll needs at least one die")
    whole("flat bonus", flat, -100, 100)
    return _check_odds(tuple((s, False) for s in sizes), flat, None)


@dataclass(frozen=True)
class OpposedOdds:
    """Exact chances in an opposed check, and how often each tie-break step settles it."""

    a: Fraction
    b: Fraction
    decided_by: Mapping[DecidedBy, Fraction]

    def as_dict(self, exact: bool = False) -> dict[str, object]:
        """JSON-ready; probabilities as floats, or as ``"n/d"`` strings when ``exact``."""
        return {
            "a": probability(self.a, exact),
            "b": probability(self.b, exact),
            "decided_by": probabilities(self.decided_by, exact),
        }


@lru_cache(maxsize=1024)
def _opposed_odds(
    spec_a: tuple[tuple[int, bool], ...],
    flat_a: int,
    spec_b: tuple[tuple[int, bool], ...],
    flat_b: int,
) -> OpposedOdds:
    dist_a, den_a = _sorted_weights(tuple(sorted(spec_a)))
    dist_b, den_b = _sorted_weights(tuple(sorted(spec_b)))
    # Flat bonuses only move the totals: shift a's outcomes by the difference.
    shift = (flat_a - flat_b) * _TOTAL_UNIT
    keys_b = sorted(dist_b)
    below_b = [0, *accumulate(dist_b[k] for k in keys_b)]
    a_ahead = tied_values = 0
    for key, w in dist_a.items():
        k = key + shift
        at = bisect.bisect_left(keys_b, k)
        a_ahead += w * below_b[at]
        if at < len(keys_b) and keys_b[at] == k:
            tied_values += w * dist_b[k]
    # The "total" step alone, from each side's distribution of totals.
    totals_a: defaultdict[int, int] = defaultdict(int)
    totals_b: defaultdict[int, int] = defaultdict(int)
    for key, w in dist_a.items():
        totals_a[(key + shift) // _TOTAL_UNIT] += w
    for key, w in dist_b.items():
        totals_b[key // _TOTAL_UNIT] += w
    a_total = b_total = 0
    for ta, wa in totals_a.items():
        for tb, wb in totals_b.items():
            if ta > tb:
                a_total += wa * wb
            elif tb > ta:
                b_total += wa * wb
    a_values = a_ahead - a_total
    b_values = den_a * den_b - a_ahead - tied_values - b_total

    denominator = den_a * den_b
    sizes_a = _sort_key([s for s, _ in spec_a])
    sizes_b = _sort_key([s for s, _ in spec_b])
    tied = Fraction(tied_values, denominator)
    a_sizes = tied if sizes_a > sizes_b else Fraction(0)
    b_sizes = tied if sizes_b > sizes_a else Fraction(0)
    rolloff = tied if sizes_a == sizes_b else Fraction(0)
    # Roll-offs are symmetric d12s repeated until they differ: an even split.
    a = Fraction(a_total + a_values, denominator) + a_sizes + rolloff / 2
    b = Fraction(b_total + b_values, denominator) + b_sizes + rolloff / 2
    decided_by: dict[DecidedBy, Fraction] = {
        "total": Fraction(a_total + b_total, denominator),
        "values": Fraction(a_values + b_values, denominator),
        "sizes": a_sizes + b_sizes,
        "rolloff": rolloff,
    }
    return OpposedOdds(a=a, b=b, decided_by=frozen_map(decided_by))


def opposed_odds(a: ActionCheck, b: ActionCheck) -> OpposedOdds:
    """Exact chance that each side wins an opposed check, with the full tie-break.

    >>> odds = opposed_odds(ActionCheck((4, 8, 8)), ActionCheck((6, 6, 6)))
    >>> odds.a + odds.b
    Fraction(1, 1)
    """
    for side in (a, b):
        if len(side.dice) > MAX_OPPOSED_ODDS_DICE:
            raise InvalidScore(
                f"exact opposed odds are offered for up to {MAX_OPPOSED_ODDS_DICE} dice a side, "
                f"got {len(side.dice)}"
            )
    return _opposed_odds(_dice_spec(a), a.flat, _dice_spec(b), b.flat)
