"""Simple Die System: a skill die sized by the skill, a d20 flag die, against the GM's die.

A skill of 8 rolls a d8; every +1 of bonus is one die size (+2) up, never below a d4. Sizes with
no physical die are rolled on the next standard die and capped. The flag d20 marks a critical
(1), a tremendous result (19) or a heroic chain (10 or 20: x10, and roll the flag again).
The player's result beats the GM's difficulty die (or a fixed "Hard X"); a tie on an even
number goes to the player, on an odd number to the GM. See docs/rules.md, "Simple Die System".

>>> stack_bonus(mod=2, self_buff=2), stack_bonus(mod=2, self_buff=3)
(3, 4)
>>> SkillCheck(8, mod=1).effective_skill
10
>>> r = check(SkillCheck(8), Difficulty(die=10), skill_rolls=[5], flag_rolls=[10, 20, 3], gm_roll=7)
>>> r.result, r.multiplier, r.flags, r.winner
(500, 100, ('heroic',), 'player')
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
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
    "STANDARD_DICE",
    "CheckOdds",
    "Difficulty",
    "FlagResult",
    "SdsResult",
    "SkillCheck",
    "check",
    "check_odds",
    "dice_to_roll",
    "physical_die",
    "read_flag",
    "roll_flag",
    "stack_bonus",
]

#: The physical dice a table owns.
STANDARD_DICE: tuple[int, ...] = (4, 6, 8, 10, 12, 20, 100)
#: Largest skill or difficulty die: nothing bigger than a d100 exists to roll it on.
MAX_SIZE = 100
#: The largest Hard difficulty accepted.
MAX_HARD = 10_000

Flag = Literal["critical", "tremendous", "heroic"]
Winner = Literal["player", "gm"]


def stack_bonus(
    mod: int = 0, self_buff: int = 0, party_buff: int = 0, focus: int = 0, penalty: int = 0
) -> int:
    """The bonus for one roll: the largest of mod / self buff / party buff in full, each other
    non-zero one as +1, then focus in full, then penalties off.

    Seed examples: a +2 mod ring with a +2 buff is +3; with a +3 buff it is +4.

    >>> stack_bonus(mod=2, self_buff=2), stack_bonus(mod=2, self_buff=3)
    (3, 4)
    >>> stack_bonus(mod=1, self_buff=4, party_buff=2, focus=2, penalty=1)
    7
    """
    stacked = sorted((whole("mod", mod, 0, 50), whole("self buff", self_buff, 0, 50)), reverse=True)
    stacked = sorted((*stacked, whole("party buff", party_buff, 0, 50)), reverse=True)
    whole("focus", focus, 0, 50)
    whole("penalty", penalty, 0, 50)
    return stacked[0] + sum(1 for b in stacked[1:] if b) + focus - penalty


def physical_die(size: int) -> int:
    """The die a size is rolled on: itself if it exists, else the next standard die up.

    >>> physical_die(8), physical_die(14), physical_die(18), physical_die(22)
    (8, 20, 20, 100)
    """
    whole("die size", size, 1, MAX_SIZE)
    return next(d for d in STANDARD_DICE if d >= size)


def _even_size(name: str, size: int) -> int:
    whole(name, size, 4, MAX_SIZE)
    if size % 2:
        raise InvalidScore(f"{name} goes in even steps (4, 6, 8, ...), got {size}")
    return size


@dataclass(frozen=True)
class SkillCheck:
    """The player's side of a skill roll before any die is thrown."""

    skill: int
    mod: int = 0
    self_buff: int = 0
    party_buff: int = 0
    focus: int = 0
    penalty: int = 0
    unskilled: bool = False

    def __post_init__(self) -> None:
        _even_size("skill", self.skill)
        if not isinstance(self.unskilled, bool):
            raise InvalidChoice(f"unskilled must be true or false, got {self.unskilled!r}")
        if self.effective_skill > MAX_SIZE:
            raise InvalidScore(
                f"skill {self.skill} with a +{self.bonus} bonus is past a d{MAX_SIZE}, "
                "the largest die there is to roll it on"
            )

    @property
    def bonus(self) -> int:
        return stack_bonus(self.mod, self.self_buff, self.party_buff, self.focus, self.penalty)

    @property
    def effective_skill(self) -> int:
        """Skill after bonuses (+2 per step), never below 4.

        >>> SkillCheck(6, penalty=3).effective_skill
        4
        """
        return max(4, self.skill + 2 * self.bonus)

    @property
    def die(self) -> int:
        return physical_die(self.effective_skill)


@dataclass(frozen=True)
class Difficulty:
    """The GM's difficulty: a die to roll (``die``) or a fixed ``hard`` number, not both."""

    die: int | None = None
    hard: int | None = None

    def __post_init__(self) -> None:
        if (self.die is None) == (self.hard is None):
            raise InvalidChoice("a difficulty is either a die or a Hard number, exactly one")
        if self.die is not None:
            _even_size("difficulty die", self.die)
        if self.hard is not None:
            whole("Hard difficulty", self.hard, 1, MAX_HARD)

    @property
    def physical(self) -> int | None:
        return None if self.die is None else physical_die(self.die)


@dataclass(frozen=True)
class FlagResult:
    """The flag die read out; the rolls after the first only extend a heroic chain."""

    rolls: tuple[int, ...]
    flags: tuple[Flag, ...]
    multiplier: int


def read_flag(rolls: Sequence[int]) -> FlagResult:
    """Read the flag d20 and its heroic re-rolls.

    >>> read_flag([19]).flags, read_flag([1]).flags, read_flag([7]).multiplier
    (('tremendous',), ('critical',), 1)
    >>> r = read_flag([20, 10, 19]); r.flags, r.multiplier
    (('heroic',), 100)
    """
    if isinstance(rolls, str | bytes) or not isinstance(rolls, Sequence) or not rolls:
        raise DiceError("flag_rolls must list the flag d20 and any heroic re-rolls")
    got = tuple(face(f"flag_rolls[{i}]", v, 20) for i, v in enumerate(rolls))
    first = got[0]
    if first not in (10, 20):
        if len(got) > 1:
            raise DiceError(f"the flag showed {first}: no re-roll is made, got {len(got)} rolls")
        flags: tuple[Flag, ...] = (
            ("critical",) if first == 1 else ("tremendous",) if first == 19 else ()
        )
        return FlagResult(got, flags, 1)
    chain = 1
    while chain < len(got) and got[chain] in (10, 20):
        chain += 1
    if chain == len(got):
        raise DiceError(
            f"the flag showed {got[-1]}: roll it again and add the re-roll to flag_rolls"
        )
    if chain + 1 != len(got):
        raise DiceError(f"the heroic chain ended at re-roll {got[chain]}; drop the later rolls")
    return FlagResult(got, ("heroic",), 10**chain)


def roll_flag(rng: random.Random) -> FlagResult:
    """Roll the flag d20, re-rolling for as long as the heroic chain goes on."""
    rolls = [rng.randint(1, 20)]
    if rolls[0] in (10, 20):
        while True:
            rolls.append(rng.randint(1, 20))
            if rolls[-1] not in (10, 20):
                break
    return read_flag(rolls)


@dataclass(frozen=True)
class SdsResult:
    """A skill roll read out and compared with the difficulty."""

    effective_skill: int
    die: int
    skill_rolls: tuple[int, ...]
    skill_result: int
    flag: FlagResult
    multiplier: int
    result: int
    flags: tuple[Flag, ...]
    gm_die: int | None
    gm_roll: int | None
    gm_result: int | None
    winner: Winner | None
    diceless: bool

    def as_dict(self) -> dict[str, object]:
        """JSON-ready, with the check endpoint's field names (dice as ``"d20"``).

        >>> check(SkillCheck(18), skill_rolls=[19], flag_rolls=[10, 3]).as_dict()["result"]
        180
        """
        return {
            "effective_skill": self.effective_skill,
            "die": f"d{self.die}",
            "skill_rolls": list(self.skill_rolls),
            "skill_result": self.skill_result,
            "flag_rolls": list(self.flag.rolls),
            "multiplier": self.multiplier,
            "result": self.result,
            "flags": list(self.flags),
            "gm_die": None if self.gm_die is None else f"d{self.gm_die}",
            "gm_roll": self.gm_roll,
            "gm_result": self.gm_result,
            "winner": self.winner,
            "diceless": self.diceless,
        }


def _beats(result: int, gm_result: int) -> Winner:
    if result != gm_result:
        return "player" if result > gm_result else "gm"
    return "player" if gm_result % 2 == 0 else "gm"


def _all_typed(
    skill: SkillCheck,
    difficulty: Difficulty | None,
    skill_rolls: Sequence[int] | None,
    flag_rolls: Sequence[int] | None,
    gm_roll: int | None,
) -> None:
    """Refuse a roll typed in only in part: the rest would be generated and pass as thrown."""
    why = "the other dice are typed in, and typed-in dice are never topped up with server dice"
    if skill_rolls is None:
        twice = " (twice: unskilled)" if skill.unskilled else ""
        raise DiceError(f"skill_rolls: type the skill d{skill.die} face{twice} too; {why}")
    if flag_rolls is None:
        raise DiceError(f"flag_rolls: type the flag d20 and any heroic re-rolls too; {why}")
    if gm_roll is None and difficulty is not None and difficulty.physical is not None:
        raise DiceError(f"gm_roll: type the face of the GM's d{difficulty.physical} too; {why}")


def check(
    skill: SkillCheck,
    difficulty: Difficulty | None = None,
    *,
    skill_rolls: Sequence[int] | None = None,
    flag_rolls: Sequence[int] | None = None,
    gm_roll: int | None = None,
    rng: random.Random | None = None,
    diceless: bool = False,
) -> SdsResult:
    """Roll (or read) a skill roll and settle it against the difficulty.

    ``skill_rolls`` are the faces on the physical skill die (two when unskilled; the lower is
    kept); ``flag_rolls`` the flag d20 and its heroic re-rolls; ``gm_roll`` the face on the
    GM's physical die. Either every die needed is typed in, or none is and ``rng`` rolls them
    all: typed-in dice are never topped up with generated ones (docs/rules.md, "Simple Die
    System"). ``diceless`` records that the player threw every die (the GM's too); the
    arithmetic is the same.

    >>> r = check(SkillCheck(18), Difficulty(hard=8), skill_rolls=[19], flag_rolls=[4])
    >>> r.die, r.skill_result, r.winner
    (20, 18, 'player')
    >>> r = check(SkillCheck(8), Difficulty(die=10), skill_rolls=[7], flag_rolls=[2], gm_roll=7)
    >>> r.winner
    'gm'
    >>> check(SkillCheck(8, unskilled=True), skill_rolls=[6, 3], flag_rolls=[5]).skill_result
    3
    """
    if not isinstance(diceless, bool):
        raise InvalidChoice(f"diceless must be true or false, got {diceless!r}")
    size = skill.effective_skill
    die = skill.die
    count = 2 if skill.unskilled else 1
    typed = skill_rolls is not None or flag_rolls is not None or gm_roll is not None
    if typed:
        _all_typed(skill, difficulty, skill_rolls, flag_rolls, gm_roll)
    rolls = given_or_rolled("skill_rolls", skill_rolls, (die,) * count, rng)
    skill_result = min(min(rolls), size)
    if flag_rolls is not None:
        flag = read_flag(flag_rolls)
    elif rng is not None:
        flag = roll_flag(rng)
    else:
        raise DiceError("flag_rolls: give the flag die's faces or a random generator")
    result = skill_result * flag.multiplier

    gm_die = gm_face = gm_result = None
    winner: Winner | None = None
    if difficulty is not None:
        if difficulty.die is not None:
            gm_die = physical_die(difficulty.die)
            gm_face = given_or_rolled(
                "gm_roll", None if gm_roll is None else [gm_roll], (gm_die,), rng
            )[0]
            gm_result = min(gm_face, difficulty.die)
        else:
            if gm_roll is not None:
                raise DiceError("a Hard difficulty is not rolled: leave gm_roll out")
            gm_result = difficulty.hard
        assert gm_result is not None
        winner = _beats(result, gm_result)
    elif gm_roll is not None:
        raise DiceError("gm_roll given without a difficulty die")
    return SdsResult(
        effective_skill=size,
        die=die,
        skill_rolls=rolls,
        skill_result=skill_result,
        flag=flag,
        multiplier=flag.multiplier,
        result=result,
        flags=flag.flags,
        gm_die=gm_die,
        gm_roll=gm_face,
        gm_result=gm_result,
        winner=winner,
        diceless=diceless,
    )


def dice_to_roll(skill: SkillCheck, difficulty: Difficulty | None = None) -> tuple[str, ...]:
    """The dice a diceless-GM player picks up, in reading order: skill die (twice if unskilled),
    the difficulty die, then the flag d20. When skill and difficulty share a die size the one die
    is thrown again; the player's throws always come first.

    >>> dice_to_roll(SkillCheck(8), Difficulty(die=10))
    ('d8', 'd10', 'd20')
    >>> dice_to_roll(SkillCheck(8), Difficulty(die=8))
    ('d8', 'd8', 'd20')
    """
    dice = [f"d{skill.die}"] * (2 if skill.unskilled else 1)
    if difficulty is not None and difficulty.physical is not None:
        dice.append(f"d{difficulty.physical}")
    return (*dice, "d20")


# ---------------------------------------------------------------------------------------------
# Exact odds


@dataclass(frozen=True)
class CheckOdds:
    """Exact odds of a skill roll: its skill die, its flag and who wins."""

    skill_result: Mapping[int, Fraction]
    flags: Mapping[str, Fraction]
    #: Chance the result is multiplied at least 10**k times, for k = 1, 2, 3.
    heroic_at_least: Mapping[int, Fraction]
    gm_result: Mapping[int, Fraction]
    player: Fraction | None
    gm: Fraction | None

    def as_dict(self, exact: bool = False) -> dict[str, object]:
        """JSON-ready; probabilities as floats, or as ``"n/d"`` strings when ``exact``."""
        return {
            "skill_result": probabilities(self.skill_result, exact),
            "flags": probabilities(self.flags, exact),
            "heroic_at_least": probabilities(self.heroic_at_least, exact),
            "gm_result": probabilities(self.gm_result, exact),
            "player": None if self.player is None else probability(self.player, exact),
            "gm": None if self.gm is None else probability(self.gm, exact),
        }


def _capped_weights(size: int, twice_lower: bool) -> tuple[dict[int, int], int]:
    """Weights of a size-``size`` result rolled on its physical die (lower of two if asked)."""
    die = physical_die(size)
    at_least = {r: die - r + 1 if r < size else die - size + 1 for r in range(1, size + 1)}
    if not twice_lower:
        weights = dict.fromkeys(range(1, size), 1)
        weights[size] = die - size + 1
        return weights, die
    # P(min >= r) = P(X >= r)**2; a weight is the difference of consecutive squares.
    weights = {
        r: at_least[r] ** 2 - (at_least[r + 1] ** 2 if r < size else 0) for r in range(1, size + 1)
    }
    return weights, die * die


# Bounded: Hard difficulties alone give ten thousand inputs, and the API is public.
@lru_cache(maxsize=4096)
def _odds(size: int, unskilled: bool, gm_die: int | None, hard: int | None) -> CheckOdds:
    skill_w, skill_den = _capped_weights(size, unskilled)
    skill_dist = frozen_map((r, Fraction(w, skill_den)) for r, w in skill_w.items())
    flags = frozen_map(
        {
            "critical": Fraction(1, 20),
            "tremendous": Fraction(1, 20),
            "heroic": Fraction(1, 10),
            "none": Fraction(4, 5),
        }
    )
    heroic = frozen_map({k: Fraction(1, 10**k) for k in (1, 2, 3)})
    if gm_die is None and hard is None:
        return CheckOdds(skill_dist, flags, heroic, frozen_map({}), None, None)
    if gm_die is not None:
        gm_w, gm_den = _capped_weights(gm_die, False)
    else:
        assert hard is not None
        gm_w, gm_den = {hard: 1}, 1
    gm_values = sorted(gm_w)
    below = [0, *accumulate(gm_w[g] for g in gm_values)]
    top = gm_values[-1]

    def beaten_by(x: int) -> int:
        """GM weight the player's result x beats (strictly above, or an even tie)."""
        lower = below[bisect.bisect_left(gm_values, x)]
        return lower + (gm_w.get(x, 0) if x % 2 == 0 else 0)

    # The heroic chain is endless, but once 10**k passes the GM's highest result every
    # longer chain wins outright, so the tail (1/10)**k is added whole.
    k_stop = 0
    while 10**k_stop <= top:
        k_stop += 1
    player = Fraction(0)
    for k in range(k_stop):
        p_k = Fraction(9, 10) * Fraction(1, 10**k)
        wins = sum(w * beaten_by(r * 10**k) for r, w in skill_w.items())
        player += p_k * Fraction(wins, skill_den * gm_den)
    player += Fraction(1, 10**k_stop)
    gm_dist = frozen_map((g, Fraction(gm_w[g], gm_den)) for g in gm_values)
    return CheckOdds(skill_dist, flags, heroic, gm_dist, player, 1 - player)


def check_odds(skill: SkillCheck, difficulty: Difficulty | None = None) -> CheckOdds:
    """Exact chance that the player beats the difficulty, heroic chains included.

    Seed note: against a Hard 8 a skill of 4 or 6 wins only through a heroic flag.

    >>> check_odds(SkillCheck(4), Difficulty(hard=8)).player
    Fraction(1, 10)
    >>> o = check_odds(SkillCheck(8), Difficulty(die=8))
    >>> o.player + o.gm
    Fraction(1, 1)
    """
    if difficulty is None:
        return _odds(skill.effective_skill, skill.unskilled, None, None)
    return _odds(skill.effective_skill, skill.unskilled, difficulty.die, difficulty.hard)
