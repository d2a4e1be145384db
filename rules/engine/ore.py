"""ORE (One-Roll Engine): d10 pools read as sets of matching dice, width x height.

A pool is stat + skill (+ extras), never more than 10 dice rolled; penalties come off the dice
above 10 first. A set's width is how many dice match (speed), its height the face they show
(quality and hit location). One special die may join a pool: an expert die set before the roll,
or a master die set after it. See docs/rules.md, section "ORE".

>>> r = read_dice([3, 4, 4, 4, 6, 8, 10])
>>> str(r.best), r.loose, r.location
('3x4', (3, 6, 8, 10), 'left arm')
>>> OrePool(12, penalty=2).resolve().rolled
10
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import cache, lru_cache
from typing import Any, Literal

import icepool

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
    "LOCATIONS",
    "MAX_DICE",
    "ContestOdds",
    "ContestResult",
    "OreOdds",
    "OrePool",
    "OreRoll",
    "OreSet",
    "ResolvedPool",
    "SetCountOdds",
    "assign_sets",
    "best_set",
    "contest",
    "contest_odds",
    "cooperate",
    "find_sets",
    "gobble",
    "hit_location",
    "multiple_action_penalty",
    "pool_odds",
    "read_dice",
    "roll",
    "sets_odds",
    "team_best",
]

#: Never more than this many dice are rolled.
MAX_DICE = 10

#: Hit location by height, index 1..10.
LOCATIONS: tuple[str, ...] = (
    "",
    "left leg",
    "right leg",
    "left arm",
    "left arm",
    "right arm",
    "right arm",
    "torso",
    "torso",
    "torso",
    "head",
)

Side = Literal["a", "b"]


def hit_location(height: int) -> str:
    """Where a set of this height hits.

    >>> [hit_location(h) for h in (1, 2, 4, 6, 8, 10)]
    ['left leg', 'right leg', 'left arm', 'right arm', 'torso', 'head']
    """
    return LOCATIONS[whole("height", height, 1, 10)]


@dataclass(frozen=True, order=True)
class OreSet:
    """A set of matching dice. Ordered as in a dynamic contest: wider first, then taller."""

    width: int
    height: int

    def __post_init__(self) -> None:
        whole("set width", self.width, 2, 11)
        whole("set height", self.height, 1, 10)

    @property
    def location(self) -> str:
        return hit_location(self.height)

    def as_dict(self) -> dict[str, int]:
        return {"width": self.width, "height": self.height}

    def __str__(self) -> str:
        return f"{self.width}x{self.height}"


def _set_dict(s: OreSet | None) -> dict[str, int] | None:
    return None if s is None else s.as_dict()


def find_sets(faces: Sequence[int]) -> tuple[tuple[OreSet, ...], tuple[int, ...]]:
    """Sets (widest first, then tallest) and loose dice (ascending) among d10 faces.

    >>> sets, loose = find_sets([1, 5, 7, 7, 8])
    >>> [str(s) for s in sets], loose
    (['2x7'], (1, 5, 8))
    """
    counts = Counter(faces)
    sets = sorted((OreSet(n, h) for h, n in counts.items() if n >= 2), reverse=True)
    loose = tuple(sorted(h for h, n in counts.items() if n == 1))
    return tuple(sets), loose


def best_set(sets: Sequence[OreSet], difficulty: int = 0) -> OreSet | None:
    """The widest (then tallest) set at least as tall as the difficulty, if any."""
    return max((s for s in sets if s.height >= difficulty), default=None)


# ---------------------------------------------------------------------------------------------
# Pools


@dataclass(frozen=True)
class ResolvedPool:
    """What is actually on the table once the cap and penalties are applied."""

    #: Dice in the pool after the cap and penalties, special die included (Master Li: 10).
    rolled: int
    #: Normal dice to roll (an expert die that bought off a penalty is one of these).
    normal: int
    expert: int | None
    master: bool
    #: Penalty dice soaked up by dice above the cap of 10.
    absorbed: int
    expert_bought_off: bool
    master_dropped: bool


@dataclass(frozen=True)
class OrePool:
    """A pool before the roll. ``pool`` counts every die, an expert or master die included.

    ``expert`` is the face the expert die is set to (1..10), or None; ``master`` adds a master
    die. Only one of the two may be used.
    """

    pool: int
    penalty: int = 0
    expert: int | None = None
    master: bool = False

    def __post_init__(self) -> None:
        whole("pool", self.pool, 0, 100)
        whole("penalty", self.penalty, 0, 100)
        if self.expert is not None:
            whole("expert die", self.expert, 1, 10)
        if not isinstance(self.master, bool):
            raise InvalidChoice(f"master must be true or false, got {self.master!r}")
        if self.expert is not None and self.master:
            raise InvalidChoice("a pool holds one special die: an expert die or a master die")
        if (self.expert is not None or self.master) and self.pool < 1:
            raise InvalidScore("a special die counts toward the pool, so the pool needs 1+ dice")

    def resolve(self) -> ResolvedPool:
        """Apply the cap and penalties (docs/rules.md, "ORE").

        Penalties come off the dice above 10 first; then an expert die buys off one penalty die
        by being rolled as a normal die; then a master die is dropped before normal dice.

        Seed example: Master Li's 12 dice with -2 still roll 10.

        >>> OrePool(12, penalty=2).resolve().rolled
        10
        >>> r = OrePool(6, penalty=2, expert=10).resolve()
        >>> r.rolled, r.normal, r.expert, r.expert_bought_off
        (5, 5, None, True)
        >>> r = OrePool(6, penalty=2, master=True).resolve()
        >>> r.rolled, r.normal, r.master, r.master_dropped
        (4, 4, False, True)
        """
        excess = max(0, self.pool - MAX_DICE)
        absorbed = min(excess, self.penalty)
        penalty = self.penalty - absorbed
        dice = min(self.pool, MAX_DICE)
        expert, master = self.expert, self.master
        bought_off = dropped = False
        if expert is not None and penalty:
            expert, bought_off = None, True
            penalty -= 1
        if master and penalty:
            master, dropped = False, True
            penalty -= 1
            dice -= 1
        dice = max(0, dice - penalty)
        special = 1 if (expert is not None or master) else 0
        return ResolvedPool(
            rolled=dice,
            normal=dice - special,
            expert=expert,
            master=master,
            absorbed=absorbed,
            expert_bought_off=bought_off,
            master_dropped=dropped,
        )


def multiple_action_penalty(actions: int) -> int:
    """Dice off the pool for declaring several actions: one per action after the first.

    This follows the seed's Master Li example (three actions, -2d); the table may waive it
    (docs/rules.md, "ORE").

    >>> multiple_action_penalty(1), multiple_action_penalty(3)
    (0, 2)
    """
    return whole("actions", actions, 1, 10) - 1


def cooperate(pools: Sequence[OrePool]) -> OrePool:
    """Two or more characters pool their dice for one roll of the same stat + skill.

    Dice and penalties add up (the roll still caps at 10). One special die survives: a master
    die if anyone has one, else the first expert die; the others are rolled as normal dice.

    >>> cooperate([OrePool(4, expert=10), OrePool(5, master=True)])
    OrePool(pool=9, penalty=0, expert=None, master=True)
    """
    if not pools:
        raise InvalidScore("cooperation needs at least one pool")
    master = any(p.master for p in pools)
    expert = None if master else next((p.expert for p in pools if p.expert is not None), None)
    return OrePool(
        pool=sum(p.pool for p in pools),
        penalty=sum(p.penalty for p in pools),
        expert=expert,
        master=master,
    )


# ---------------------------------------------------------------------------------------------
# Rolls


@dataclass(frozen=True)
class OreRoll:
    """A roll read out. ``faces`` holds every die on the table (special die included)."""

    dice: tuple[int, ...]
    expert: int | None
    master_value: int | None
    faces: tuple[int, ...]
    sets: tuple[OreSet, ...]
    loose: tuple[int, ...]
    difficulty: int
    best: OreSet | None
    success: bool
    location: str | None
    #: Dice on the table, special die included: the resolved pool's, or the dice read.
    rolled: int
    #: Faces removed by gobbling, in the order they were taken.
    gobbled: tuple[int, ...] = ()

    def as_dict(self) -> dict[str, object]:
        """JSON-ready, with the roll endpoint's field names.

        >>> read_dice([3, 4, 4, 4, 6, 8, 10]).as_dict()["sets"]
        [{'width': 3, 'height': 4}]
        """
        return {
            "rolled": self.rolled,
            "dice": list(self.dice),
            "expert": self.expert,
            "master_value": self.master_value,
            "faces": list(self.faces),
            "sets": [s.as_dict() for s in self.sets],
            "loose": list(self.loose),
            "difficulty": self.difficulty,
            "best": _set_dict(self.best),
            "success": self.success,
            "location": self.location,
            "gobbled": list(self.gobbled),
        }


def _master_value(dice: Sequence[int], expert: int | None, difficulty: int) -> int:
    """The face that makes the best set: widen the widest (then tallest) group it can join."""
    counts = Counter(dice)
    if expert is not None:
        counts[expert] += 1
    choices = [(n + 1, h) for h, n in counts.items() if h >= difficulty]
    if choices:
        return max(choices)[1]
    # No die at or over the difficulty: no set can succeed, so make the widest set anyway.
    return max(((n + 1, h) for h, n in counts.items()), default=(1, 10))[1]


def _read(
    dice: tuple[int, ...],
    expert: int | None,
    master_value: int | None,
    difficulty: int,
    rolled: int,
    gobbled: tuple[int, ...] = (),
    faces: tuple[int, ...] | None = None,
) -> OreRoll:
    if faces is None:
        extra = tuple(v for v in (expert, master_value) if v is not None)
        faces = tuple(sorted((*dice, *extra)))
    sets, loose = find_sets(faces)
    best = best_set(sets, difficulty)
    return OreRoll(
        dice=dice,
        expert=expert,
        master_value=master_value,
        faces=faces,
        sets=sets,
        loose=loose,
        difficulty=difficulty,
        best=best,
        success=best is not None,
        location=None if best is None else best.location,
        rolled=rolled,
        gobbled=gobbled,
    )


def read_dice(
    dice: Sequence[int],
    *,
    expert: int | None = None,
    master: bool = False,
    difficulty: int = 0,
) -> OreRoll:
    """Read normal d10 faces, plus an expert die's set face or a master die.

    The master die takes the face giving the best set that meets the difficulty. ``rolled``
    counts the dice read, the special die included.

    Seed example: John Doe's 3, 4, 4, 4, 6, 8, 10 is a 3x4 to the left arm.

    >>> read_dice([3, 4, 4, 4, 6, 8, 10]).best
    OreSet(width=3, height=4)
    >>> r = read_dice([2, 5, 9], master=True)
    >>> r.master_value, str(r.best)
    (9, '2x9')
    >>> read_dice([2, 5, 9], expert=5, difficulty=6).success
    False
    >>> read_dice([2, 5, 9], expert=5).rolled
    4
    """
    whole("difficulty", difficulty, 0, 10)
    if isinstance(dice, str | bytes) or not isinstance(dice, Sequence):
        raise DiceError(f"dice must be a list of d10 faces, got {dice!r}")
    if len(dice) > MAX_DICE:
        raise DiceError(f"never more than {MAX_DICE} dice are rolled, got {len(dice)}")
    got = tuple(face(f"dice[{i}]", v, 10) for i, v in enumerate(dice))
    if expert is not None:
        whole("expert die", expert, 1, 10)
        if master:
            raise InvalidChoice("a pool holds one special die: an expert die or a master die")
    if not isinstance(master, bool):
        raise InvalidChoice(f"master must be true or false, got {master!r}")
    if len(got) + (expert is not None or master) > MAX_DICE:
        raise DiceError(f"a special die counts toward the {MAX_DICE}-dice limit")
    special = expert is not None or master
    master_value = _master_value(got, expert, difficulty) if master else None
    return _read(got, expert, master_value, difficulty, rolled=len(got) + special)


def roll(
    pool: OrePool,
    *,
    difficulty: int = 0,
    dice: Sequence[int] | None = None,
    rng: random.Random | None = None,
) -> OreRoll:
    """Roll (or read) a pool: ``dice`` lists only the normal dice, one per normal die.

    >>> roll(OrePool(5), dice=[1, 5, 7, 7, 8]).best
    OreSet(width=2, height=7)
    >>> roll(OrePool(7), difficulty=3, rng=random.Random(7)).rolled
    7
    """
    resolved = pool.resolve()
    got = given_or_rolled("dice", dice, (10,) * resolved.normal, rng)
    result = read_dice(got, expert=resolved.expert, master=resolved.master, difficulty=difficulty)
    return replace(result, rolled=resolved.rolled)


def gobble(result: OreRoll, dice: int = 1) -> OreRoll:
    """A damaging hit takes one die from the target's tallest set, per hit.

    Seed example: John's hit takes a die from the mugger's 2x7, which leaves no set.

    >>> mugger = read_dice([1, 5, 7, 7, 8])
    >>> after = gobble(mugger)
    >>> after.best, after.gobbled, after.loose
    (None, (7,), (1, 5, 7, 8))
    """
    whole("dice gobbled", dice, 0, MAX_DICE)
    faces = list(result.faces)
    gobbled = list(result.gobbled)
    for _ in range(dice):
        sets, _loose = find_sets(faces)
        if not sets:
            break
        tallest = max(s.height for s in sets)
        faces.remove(tallest)
        gobbled.append(tallest)
    return _read(
        result.dice,
        result.expert,
        result.master_value,
        result.difficulty,
        result.rolled,
        tuple(gobbled),
        tuple(faces),
    )


def assign_sets(result: OreRoll, actions: int) -> tuple[OreSet | None, ...]:
    """Hand one set to each declared action, best set first; None where no set is left.

    The player may reorder them; this is the default the engine suggests.

    >>> assign_sets(read_dice([2, 2, 6, 6, 6, 9]), 3)
    (OreSet(width=3, height=6), OreSet(width=2, height=2), None)
    """
    whole("actions", actions, 1, MAX_DICE)
    usable = [s for s in result.sets if s.height >= result.difficulty]
    return tuple(usable[i] if i < len(usable) else None for i in range(actions))


def team_best(results: Sequence[OreRoll], difficulty: int = 0) -> OreSet | None:
    """Timed cooperation: each rolls alone and the dice are read together for the best set.

    The attempt fails unless at least one character rolled a set alone.

    >>> team_best([read_dice([3, 3, 7]), read_dice([7, 1])])
    OreSet(width=2, height=7)
    >>> team_best([read_dice([3, 7]), read_dice([7, 1])]) is None
    True
    """
    whole("difficulty", difficulty, 0, 10)
    if not any(r.sets for r in results):
        return None
    sets, _ = find_sets([f for r in results for f in r.faces])
    return best_set(sets, difficulty)


@dataclass(frozen=True)
class ContestResult:
    """Who acts first in a dynamic contest: the wider set, then the taller one."""

    first: Side | None
    #: Both best sets exactly equal: they land at the same moment.
    simultaneous: bool
    a_best: OreSet | None
    b_best: OreSet | None

    def as_dict(self) -> dict[str, object]:
        """JSON-ready, with the contest endpoint's field names."""
        return {
            "first": self.first,
            "simultaneous": self.simultaneous,
            "a": {"best": _set_dict(self.a_best)},
            "b": {"best": _set_dict(self.b_best)},
        }


def contest(a: OreRoll, b: OreRoll) -> ContestResult:
    """Order two rolls in a dynamic contest.

    Seed example: John's 3x4 beats the mugger's 2x7 to the punch; a 2x4 would not.

    >>> contest(read_dice([3, 4, 4, 4, 6, 8, 10]), read_dice([1, 5, 7, 7, 8])).first
    'a'
    >>> contest(read_dice([4, 4, 6]), read_dice([1, 5, 7, 7, 8])).first
    'b'
    """
    first: Side | None
    if a.best is None and b.best is None:
        first = None
    elif b.best is None or (a.best is not None and a.best > b.best):
        first = "a"
    elif a.best is None or b.best > a.best:
        first = "b"
    else:
        first = None
    simultaneous = a.best is not None and a.best == b.best
    return ContestResult(first, simultaneous, a.best, b.best)


# ---------------------------------------------------------------------------------------------
# Exact odds


class _BestSet(icepool.MultisetEvaluator):  # type: ignore[misc]  # icepool is untyped
    """Best (width, height) among d10 faces, as an icepool state machine over the outcomes.

    The expert die adds one to its face's count; a master die adds one to whichever count makes
    the best set. (0, 0) stands for "no set"; icepool outcomes cannot be None.
    """

    def __init__(self, expert: int, master: bool, difficulty: int) -> None:
        self.expert = expert
        self.master = master
        self.difficulty = difficulty

    def next_state(
        self, state: tuple[int, int] | None, order: Any, outcome: int, count: int
    ) -> tuple[int, int]:
        best = state or (0, 0)
        if outcome == self.expert:
            count += 1
        if outcome < self.difficulty:
            return best
        width = count + 1 if self.master and count >= 1 else count
        return (width, outcome) if width >= 2 and (width, outcome) > best else best

    def extra_outcomes(self, outcomes: Sequence[int]) -> range:
        # The expert face must be seen even when no normal die shows it.
        return range(1, 11)

    def final_outcome(
        self, final_state: tuple[int, int] | None, order: Any, outcomes: Any, *sizes: Any
    ) -> tuple[int, int]:
        return final_state or (0, 0)

    @property
    def next_state_key(self) -> Hashable:
        # A stable key lets icepool reuse its per-state cache between calls instead of keying
        # it by id(self), which would grow with every new evaluator.
        return (type(self), self.expert, self.master, self.difficulty)


@dataclass(frozen=True)
class OreOdds:
    """Exact distribution of the best set (None = no set meeting the difficulty)."""

    normal: int
    expert: int | None
    master: bool
    difficulty: int
    best: Mapping[OreSet | None, Fraction]
    success: Fraction
    width: Mapping[int, Fraction]
    height: Mapping[int, Fraction]
    location: Mapping[str, Fraction]

    def as_dict(self, exact: bool = False) -> dict[str, object]:
        """JSON-ready; ``best`` is a list of ``{"width", "height", "p"}`` (no set: width 0)."""
        return {
            "normal": self.normal,
            "expert": self.expert,
            "master": self.master,
            "difficulty": self.difficulty,
            "best": [
                {
                    "width": 0 if s is None else s.width,
                    "height": 0 if s is None else s.height,
                    "p": probability(p, exact),
                }
                for s, p in self.best.items()
            ],
            "success": probability(self.success, exact),
            "width": probabilities(self.width, exact),
            "height": probabilities(self.height, exact),
            "location": probabilities(self.location, exact),
        }


@cache
def _best_odds(normal: int, expert: int | None, master: bool, difficulty: int) -> OreOdds:
    if normal == 0:
        # No normal die: an expert or master die alone never makes a set.
        dist: dict[tuple[int, int], Fraction] = {(0, 0): Fraction(1)}
    else:
        die = _BestSet(expert or 0, master, difficulty).evaluate(icepool.d10.pool(normal))
        denominator = die.denominator()
        dist = {k: Fraction(die.quantity(k), denominator) for k in die.outcomes()}
    best: dict[OreSet | None, Fraction] = {}
    width: dict[int, Fraction] = {}
    height: dict[int, Fraction] = {}
    location: dict[str, Fraction] = {}
    for (w, h), p in sorted(dist.items()):
        if p == 0:
            continue
        if w == 0:
            best[None] = p
            continue
        best[OreSet(w, h)] = p
        width[w] = width.get(w, Fraction(0)) + p
        height[h] = height.get(h, Fraction(0)) + p
        loc = hit_location(h)
        location[loc] = location.get(loc, Fraction(0)) + p
    return OreOdds(
        normal=normal,
        expert=expert,
        master=master,
        difficulty=difficulty,
        best=frozen_map(best),
        success=1 - best.get(None, Fraction(0)),
        width=frozen_map(width),
        height=frozen_map(height),
        location=frozen_map(location),
    )


def pool_odds(pool: OrePool, difficulty: int = 0) -> OreOdds:
    """Exact odds of a pool's best set (widest, then tallest, meeting the difficulty).

    >>> odds = pool_odds(OrePool(10))
    >>> odds.best[None]
    Fraction(567, 1562500)
    >>> pool_odds(OrePool(2)).success
    Fraction(1, 10)
    """
    whole("difficulty", difficulty, 0, 10)
    r = pool.resolve()
    return _best_odds(r.normal, r.expert, r.master, difficulty)


class _SetCount(icepool.MultisetEvaluator):  # type: ignore[misc]  # icepool is untyped
    """How many sets meet the difficulty, as an icepool state machine over the outcomes.

    The state is (sets so far, whether any die reaches the difficulty). The expert die adds
    one to its face's count. A master die follows :func:`_master_value`: it widens a set when
    there is one (the count stays), and otherwise pairs with a loose die at or over the
    difficulty, which makes one set.
    """

    def __init__(self, expert: int, master: bool, difficulty: int) -> None:
        self.expert = expert
        self.master = master
        self.difficulty = difficulty

    def next_state(
        self, state: tuple[int, bool] | None, order: Any, outcome: int, count: int
    ) -> tuple[int, bool]:
        sets, usable = state or (0, False)
        if outcome == self.expert:
            count += 1
        if outcome < self.difficulty or count == 0:
            return sets, usable
        return (sets + 1 if count >= 2 else sets), True

    def extra_outcomes(self, outcomes: Sequence[int]) -> range:
        return range(1, 11)

    def final_outcome(
        self, final_state: tuple[int, bool] | None, order: Any, outcomes: Any, *sizes: Any
    ) -> int:
        sets, usable = final_state or (0, False)
        if self.master and sets == 0 and usable:
            return 1
        return sets

    @property
    def next_state_key(self) -> Hashable:
        # As for _BestSet: one icepool cache entry per kind of pool, not per evaluator.
        return (type(self), self.expert, self.master, self.difficulty)


@dataclass(frozen=True)
class SetCountOdds:
    """Exact distribution of how many sets meeting the difficulty a pool rolls.

    ``at_least[k]`` is the chance of k sets or more, so with k declared actions it is the chance
    that every action gets a set of its own (:func:`assign_sets`).
    """

    normal: int
    expert: int | None
    master: bool
    difficulty: int
    sets: Mapping[int, Fraction]
    at_least: Mapping[int, Fraction]

    def all_actions(self, actions: int) -> Fraction:
        """The chance that each of ``actions`` declared actions gets a set."""
        whole("actions", actions, 1, MAX_DICE)
        return self.at_least.get(actions, Fraction(0))

    def as_dict(self, exact: bool = False) -> dict[str, object]:
        return {
            "normal": self.normal,
            "expert": self.expert,
            "master": self.master,
            "difficulty": self.difficulty,
            "sets": probabilities(self.sets, exact),
            "at_least": probabilities(self.at_least, exact),
        }


@cache
def _sets_odds(normal: int, expert: int | None, master: bool, difficulty: int) -> SetCountOdds:
    if normal == 0:
        dist: dict[int, Fraction] = {0: Fraction(1)}
    else:
        die = _SetCount(expert or 0, master, difficulty).evaluate(icepool.d10.pool(normal))
        denominator = die.denominator()
        dist = {k: Fraction(die.quantity(k), denominator) for k in die.outcomes()}
    sets = {k: p for k, p in sorted(dist.items()) if p}
    at_least = {k: sum((p for n, p in sets.items() if n >= k), Fraction(0)) for k in range(1, 6)}
    return SetCountOdds(
        normal=normal,
        expert=expert,
        master=master,
        difficulty=difficulty,
        sets=frozen_map(sets),
        at_least=frozen_map({k: p for k, p in at_least.items() if p}),
    )


def sets_odds(pool: OrePool, difficulty: int = 0) -> SetCountOdds:
    """Exact odds of the number of sets meeting the difficulty (for multiple actions).

    Ten dice can hold at most five sets.

    >>> odds = sets_odds(OrePool(2))
    >>> odds.sets[1], odds.all_actions(2)
    (Fraction(1, 10), Fraction(0, 1))
    >>> sets_odds(OrePool(3, master=True)).at_least[1]
    Fraction(1, 1)
    """
    whole("difficulty", difficulty, 0, 10)
    r = pool.resolve()
    return _sets_odds(r.normal, r.expert, r.master, difficulty)


@dataclass(frozen=True)
class ContestOdds:
    """Exact chances in a dynamic contest of who lands first."""

    a_first: Fraction
    b_first: Fraction
    simultaneous: Fraction
    neither: Fraction

    def as_dict(self, exact: bool = False) -> dict[str, object]:
        return {
            "a_first": probability(self.a_first, exact),
            "b_first": probability(self.b_first, exact),
            "simultaneous": probability(self.simultaneous, exact),
            "neither": probability(self.neither, exact),
        }


@lru_cache(maxsize=4096)
def _contest_odds(
    a_pool: tuple[int, int | None, bool], b_pool: tuple[int, int | None, bool]
) -> ContestOdds:
    a, b = _best_odds(*a_pool, 0), _best_odds(*b_pool, 0)
    a_first = b_first = same = neither = Fraction(0)
    for sa, pa in a.best.items():
        for sb, pb in b.best.items():
            p = pa * pb
            if sa is None and sb is None:
                neither += p
            elif sb is None or (sa is not None and sa > sb):
                a_first += p
            elif sa is None or sb > sa:
                b_first += p
            else:
                same += p
    return ContestOdds(a_first, b_first, same, neither)


def contest_odds(a: OrePool, b: OrePool) -> ContestOdds:
    """Exact chances that each side's set comes first in a dynamic contest.

    >>> o = contest_odds(OrePool(7), OrePool(5))
    >>> o.a_first + o.b_first + o.simultaneous + o.neither
    Fraction(1, 1)
    """
    ra, rb = a.resolve(), b.resolve()
    return _contest_odds((ra.normal, ra.expert, ra.master), (rb.normal, rb.expert, rb.master))
