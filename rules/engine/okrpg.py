"""OK RPG: the rank scale, damage points, conditions, recovery, Tide of Battle, action points.

Ranks run Pth, Def, Avg, Gd, Grt, Ext, Her, Leg, Mth, each with a half-rank above it ("Grt+").
Internally a rank is a count of half-ranks from Average (Avg = 0, Avg+ = 1, Gd = 2, Def = -2).
Every half-rank has a number on a scale that grows tenfold every three full ranks; damage,
recovery and healing all read that scale. See docs/rules.md, section "OK RPG".

>>> parse_rank("Grt").number, parse_rank("Avg+").number, parse_rank("Def").number
(Fraction(5, 1), Fraction(3, 2), Fraction(1, 2))
>>> r = damage("Grt", "Avg+", "cutting")
>>> r.points, r.rounded_up, r.lethal, r.nonlethal
(3, False, 2, 1)
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import cache
from typing import Literal

from rules.engine._sibling_dice import (
    face,
    frozen_map,
    given_or_rolled,
    probabilities,
    probability,
    whole,
)
from rules.engine.errors import InvalidChoice, InvalidScore, RulesError

__all__ = [
    "DEFENSE_BONUS",
    "LETHALITY",
    "RANK_NAMES",
    "ActiveDefense",
    "Combatant",
    "DamagePoints",
    "DamageResult",
    "Health",
    "Mook",
    "Rank",
    "RoundPlan",
    "RoundState",
    "TideOdds",
    "TideResult",
    "act",
    "begin_round",
    "damage",
    "damage_points",
    "damage_resistance",
    "defend",
    "defense_bonus",
    "dying_time",
    "end_round",
    "halved",
    "healing_rate",
    "mook_hit",
    "mook_rally",
    "mook_table",
    "next_up",
    "parse_rank",
    "read_tide",
    "recover",
    "recovery_rate",
    "roll_tide",
    "run_round",
    "scale_number",
    "shift_lethality",
    "take_damage",
    "tide_odds",
]

#: The named full ranks, low to high; Avg sits at 0 half-ranks.
RANK_NAMES: tuple[str, ...] = ("Pth", "Def", "Avg", "Gd", "Grt", "Ext", "Her", "Leg", "Mth")
_AVG = RANK_NAMES.index("Avg")
_ALIASES = {
    "pathetic": "Pth",
    "deficient": "Def",
    "average": "Avg",
    "good": "Gd",
    "great": "Grt",
    "gt": "Grt",
    "extraordinary": "Ext",
    "heroic": "Her",
    "legendary": "Leg",
    "mythic": "Mth",
}
#: The scale's mantissas for the six half-ranks of each tenfold step, Avg (1) upward.
_MANTISSA = (
    Fraction(1),
    Fraction(3, 2),
    Fraction(2),
    Fraction(3),
    Fraction(5),
    Fraction(7),
)


def scale_number(half_ranks: int) -> Fraction:
    """The scale's number at ``half_ranks`` from Average (x10 every six half-ranks).

    >>> [str(scale_number(h)) for h in range(-6, 8)]
    ['1/10', '3/20', '1/5', '3/10', '1/2', '7/10', '1', '3/2', '2', '3', '5', '7', '10', '15']
    """
    whole("half-ranks", half_ranks, -60, 60)
    decade, step = divmod(half_ranks, 6)
    return _MANTISSA[step] * Fraction(10) ** decade


@dataclass(frozen=True, order=True)
class Rank:
    """A rank on the scale, counted in half-ranks from Average (Avg = 0, Gd = 2, Def+ = -1)."""

    half: int

    def __post_init__(self) -> None:
        whole("rank", self.half, -60, 60)

    @property
    def name(self) -> str:
        """``"Grt"``, ``"Avg+"``; ranks off the named scale read as half-ranks from Avg."""
        full, plus = divmod(self.half, 2)
        index = _AVG + full
        if 0 <= index < len(RANK_NAMES):
            return RANK_NAMES[index] + ("+" if plus else "")
        return f"Avg{self.half:+d}HR"

    @property
    def number(self) -> Fraction:
        return scale_number(self.half)

    def __str__(self) -> str:
        return self.name


def parse_rank(rank: Rank | str | int) -> Rank:
    """Read a rank: a :class:`Rank`, a name such as ``"Grt+"`` or ``"great"``, or half-ranks.

    >>> parse_rank("Grt+").half, parse_rank("avg").half, parse_rank("Def+").half, parse_rank(3).name
    (5, 0, -1, 'Gd+')
    """
    if isinstance(rank, Rank):
        return rank
    if isinstance(rank, int) and not isinstance(rank, bool):
        return Rank(rank)
    if not isinstance(rank, str):
        raise InvalidChoice(f"a rank is a name such as 'Grt' or 'Avg+', got {rank!r}")
    text = rank.strip()
    plus = text.endswith("+")
    base = text[:-1].strip() if plus else text
    base = _ALIASES.get(base.lower(), base)
    names = {n.lower(): i for i, n in enumerate(RANK_NAMES)}
    if base.lower() not in names:
        raise InvalidChoice(
            f"unknown rank {rank!r}: use {', '.join(RANK_NAMES)}, optionally with '+'"
        )
    return Rank((names[base.lower()] - _AVG) * 2 + plus)


def halved(rank: Rank | str | int) -> Rank:
    """The halved rank (half as far from Average), rounded down on an odd half-rank count.

    >>> [halved(r).name for r in ("Def", "Avg", "Gd", "Grt", "Ext", "Mth", "Gd+")]
    ['Def+', 'Avg', 'Avg+', 'Gd', 'Gd+', 'Ext', 'Avg+']
    """
    return Rank(parse_rank(rank).half // 2)


def damage_resistance(attribute: Rank | str | int) -> Rank:
    """DR is the halved rank of the toughness attribute (Grt -> Gd)."""
    return halved(attribute)


def recovery_rate(attribute: Rank | str | int) -> Fraction:
    """Nonlethal points recovered each round: the number of (halved attribute - 1 rank).

    >>> [str(recovery_rate(r)) for r in ("Def", "Avg", "Gd", "Grt", "Her", "Mth")]
    ['3/10', '1/2', '7/10', '1', '2', '5']
    """
    return scale_number(halved(attribute).half - 2)


def healing_rate(attribute: Rank | str | int) -> Fraction:
    """Lethal points healed each week: the recovery rate's rank plus a half-rank.

    >>> [str(healing_rate(r)) for r in ("Def", "Gd", "Grt", "Mth")]
    ['1/2', '1', '3/2', '7']
    """
    return scale_number(halved(attribute).half - 1)


# ---------------------------------------------------------------------------------------------
# Damage

#: Lethality rows, most lethal first, as the fraction of points that are lethal.
LETHALITY: Mapping[str, Fraction] = frozen_map(
    {
        "deep_puncturing": Fraction(1),
        "cutting": Fraction(2, 3),
        "vicious_bashing": Fraction(1, 2),
        "less_vicious_bashing": Fraction(1, 3),
        "regular_bashing": Fraction(1, 5),
        "allegedly_nonlethal": Fraction(1, 7),
        "really_nonlethal": Fraction(1, 10),
    }
)
_LETHALITY_ROWS = tuple(LETHALITY)


def _lethality(kind: str) -> Fraction:
    if kind not in LETHALITY:
        raise InvalidChoice(f"unknown lethality {kind!r}: use one of {', '.join(LETHALITY)}")
    return LETHALITY[kind]


def shift_lethality(kind: str, successes: int) -> str:
    """Move an attack's lethality a full rank (two rows) per success spent; + is more lethal.

    >>> shift_lethality("regular_bashing", 1), shift_lethality("cutting", 3)
    ('vicious_bashing', 'deep_puncturing')
    >>> shift_lethality("cutting", -1)
    'less_vicious_bashing'
    """
    _lethality(kind)
    whole("successes", successes, -10, 10)
    row = _LETHALITY_ROWS.index(kind) - 2 * successes
    return _LETHALITY_ROWS[min(max(row, 0), len(_LETHALITY_ROWS) - 1)]


@dataclass(frozen=True)
class DamagePoints:
    """Points from net damage (damage rank - DR rank); ``rounded_up`` is the table's asterisk."""

    net: int
    points: int
    rounded_up: bool


def damage_points(damage_rank: Rank | str | int, dr: Rank | str | int) -> DamagePoints:
    """Points of damage: the scale number at (damage - DR), rounded to nearest, halves up.

    Seed table (net in half-ranks): -1 rank 1*, even 1, +1 HR 2*, +1 rank 2, +3 HR 3,
    +2 ranks 5, +5 HR 7, +3 ranks 10, +7 HR 15; lower than -1 rank does nothing.

    >>> [(p.points, p.rounded_up) for p in (damage_points(n, 0) for n in (-3, -2, 0, 1, 2, 7))]
    [(0, False), (1, True), (1, False), (2, True), (2, False), (15, False)]
    """
    net = parse_rank(damage_rank).half - parse_rank(dr).half
    if net < -2:
        return DamagePoints(net, 0, False)
    exact = scale_number(net)
    points = int(exact + Fraction(1, 2))  # nearest, halves up (exact > 0)
    return DamagePoints(net, points, points > exact)


@dataclass(frozen=True)
class DamageResult:
    """One hit's points split into lethal and nonlethal."""

    net: int
    points: int
    rounded_up: bool
    lethality: str
    lethal: int
    nonlethal: int

    def as_dict(self) -> dict[str, object]:
        """JSON-ready, with the damage endpoint's field names.

        >>> damage("Grt", "Avg+", "cutting").as_dict()["lethal"]
        2
        """
        return {
            "net": self.net,
            "points": self.points,
            "rounded_up": self.rounded_up,
            "lethality": self.lethality,
            "lethal": self.lethal,
            "nonlethal": self.nonlethal,
        }


def damage(
    damage_rank: Rank | str | int,
    dr: Rank | str | int,
    lethality: str = "deep_puncturing",
) -> DamageResult:
    """Points of a hit and their lethal / nonlethal split (docs/rules.md, "OK RPG").

    Lethal points are the lethality fraction of the points, rounded to nearest (halves up);
    when the points were rounded up at least one of them is nonlethal, even for a bullet.

    >>> r = damage("Avg", "Gd", "deep_puncturing")
    >>> r.points, r.rounded_up, r.lethal, r.nonlethal
    (1, True, 0, 1)
    >>> r = damage("Ext+", "Avg", "cutting")
    >>> r.points, r.lethal, r.nonlethal
    (15, 10, 5)
    """
    fraction = _lethality(lethality)
    pts = damage_points(damage_rank, dr)
    lethal = int(pts.points * fraction + Fraction(1, 2))
    if pts.rounded_up and lethal == pts.points:
        lethal -= 1
    return DamageResult(
        net=pts.net,
        points=pts.points,
        rounded_up=pts.rounded_up,
        lethality=lethality,
        lethal=lethal,
        nonlethal=pts.points - lethal,
    )


# Seconds left to a dying character at 10..15 lethal points (seed: an hour and a half, then
# twenty minutes, five minutes, a minute, two rounds, half a round; a round is 5 seconds).
_DYING_SECONDS = (
    Fraction(5400),
    Fraction(1200),
    Fraction(300),
    Fraction(60),
    Fraction(10),
    Fraction(5, 2),
)


def dying_time(lethal: int) -> Fraction | None:
    """Seconds a dying character has left, or None below 10 lethal points.

    Past 15 points each further point divides the time by five (two full ranks).

    >>> [dying_time(n) for n in (9, 10, 13)]
    [None, Fraction(5400, 1), Fraction(60, 1)]
    >>> dying_time(16)
    Fraction(1, 2)
    """
    whole("lethal points", lethal, 0)
    if lethal < 10:
        return None
    if lethal - 10 < len(_DYING_SECONDS):
        return _DYING_SECONDS[lethal - 10]
    return _DYING_SECONDS[-1] / Fraction(5) ** (lethal - 15)


Status = Literal["fine", "impaired", "down", "out"]


@dataclass(frozen=True)
class Health:
    """A major character's damage track.

    ``recovered`` counts the fraction of a point recovered so far (the seed's counters), so
    a slow recovery rate of 3/10 removes a point every few rounds.
    """

    lethal: int = 0
    nonlethal: int = 0
    recovered: Fraction = Fraction(0)

    def __post_init__(self) -> None:
        whole("lethal points", self.lethal, 0, 1000)
        whole("nonlethal points", self.nonlethal, 0, 1000)
        if not isinstance(self.recovered, Fraction | int) or not 0 <= self.recovered < 1:
            raise InvalidScore(f"recovered must be a fraction in [0, 1), got {self.recovered!r}")

    @property
    def total(self) -> int:
        return self.lethal + self.nonlethal

    @property
    def impaired(self) -> bool:
        """5+ points: a full rank off every action, initiative included."""
        return self.total >= 5

    @property
    def down(self) -> bool:
        """7+ points: no action points now or in later rounds."""
        return self.total >= 7

    @property
    def out(self) -> bool:
        return self.total >= 10

    @property
    def dying(self) -> bool:
        return self.lethal >= 10

    @property
    def status(self) -> Status:
        if self.out:
            return "out"
        if self.down:
            return "down"
        return "impaired" if self.impaired else "fine"

    @property
    def penalty_ranks(self) -> int:
        """Full ranks off actions and initiative (1 while Impaired)."""
        return 1 if self.impaired else 0

    @property
    def time_left(self) -> Fraction | None:
        """Seconds until death while dying, else None."""
        return dying_time(self.lethal)

    def as_dict(self) -> dict[str, object]:
        left = self.time_left
        return {
            "lethal": self.lethal,
            "nonlethal": self.nonlethal,
            "recovered": str(self.recovered),
            "total": self.total,
            "status": self.status,
            "dying": self.dying,
            "penalty_ranks": self.penalty_ranks,
            "time_left_seconds": None if left is None else float(left),
        }


def take_damage(health: Health, hit: DamageResult) -> Health:
    """Add a hit's lethal and nonlethal points.

    >>> h = take_damage(Health(), damage("Grt", "Avg", "cutting"))
    >>> h.lethal, h.nonlethal, h.status
    (3, 2, 'impaired')
    """
    return replace(
        health, lethal=health.lethal + hit.lethal, nonlethal=health.nonlethal + hit.nonlethal
    )


def recover(health: Health, rate: Fraction | int, tide: int | None = None) -> Health:
    """Beginning-of-round recovery of nonlethal points at ``rate`` per round.

    A Tide of Battle 6 for the side doubles it; a 1 cancels it. Fractions of a point carry over
    between rounds, but are dropped once no nonlethal damage is left.

    >>> h = Health(nonlethal=3)
    >>> h = recover(h, Fraction(1, 2)); (h.nonlethal, h.recovered)
    (3, Fraction(1, 2))
    >>> h = recover(h, Fraction(1, 2)); (h.nonlethal, h.recovered)
    (2, Fraction(0, 1))
    >>> h = Health(nonlethal=3)
    >>> recover(h, 1, tide=6).nonlethal, recover(h, 1, tide=1).nonlethal
    (1, 3)
    """
    if not isinstance(rate, Fraction | int) or isinstance(rate, bool) or rate < 0:
        raise InvalidScore(f"recovery rate must be a non-negative number, got {rate!r}")
    times = 1 if tide is None else _TIDE_RECOVERIES[face("tide", tide, 6)]
    gained = health.recovered + Fraction(rate) * times
    points = int(gained)
    nonlethal = max(0, health.nonlethal - points)
    left = gained - points if nonlethal else Fraction(0)
    return replace(health, nonlethal=nonlethal, recovered=left)


# ---------------------------------------------------------------------------------------------
# Tide of Battle

TideMode = Literal["normal", "worse", "better"]
_TIDE_RECOVERIES = {1: 0, 2: 1, 3: 1, 4: 1, 5: 1, 6: 2}


@dataclass(frozen=True)
class TideResult:
    """A side's Tide of Battle die: 6 is an edge and a second recovery, 1 a setback and none."""

    mode: TideMode
    dice: tuple[int, ...]
    value: int
    recoveries: int
    edge: bool
    setback: bool

    def as_dict(self) -> dict[str, object]:
        return {
            "mode": self.mode,
            "dice": list(self.dice),
            "value": self.value,
            "recoveries": self.recoveries,
            "edge": self.edge,
            "setback": self.setback,
        }


def _tide_dice(mode: str) -> int:
    if mode not in ("normal", "worse", "better"):
        raise InvalidChoice(f"tide mode must be normal, worse or better, got {mode!r}")
    return 1 if mode == "normal" else 2


def read_tide(dice: Sequence[int], mode: TideMode = "normal") -> TideResult:
    """Read a side's Tide die (two dice, worse or better kept, for a cursed or blessed side).

    >>> r = read_tide([6, 2], "worse")
    >>> r.value, r.recoveries, r.edge, r.setback
    (2, 1, False, False)
    """
    count = _tide_dice(mode)
    got = given_or_rolled("tide dice", dice, (6,) * count, None)
    value = min(got) if mode == "worse" else max(got)
    return TideResult(mode, got, value, _TIDE_RECOVERIES[value], value == 6, value == 1)


def roll_tide(
    mode: TideMode = "normal",
    *,
    dice: Sequence[int] | None = None,
    rng: random.Random | None = None,
) -> TideResult:
    """Roll (or read) one side's Tide of Battle.

    >>> roll_tide(dice=[1]).setback
    True
    """
    got = given_or_rolled("tide dice", dice, (6,) * _tide_dice(mode), rng)
    return read_tide(got, mode)


@dataclass(frozen=True)
class TideOdds:
    values: Mapping[int, Fraction]
    edge: Fraction
    setback: Fraction

    def as_dict(self, exact: bool = False) -> dict[str, object]:
        return {
            "values": probabilities(self.values, exact),
            "edge": probability(self.edge, exact),
            "setback": probability(self.setback, exact),
        }


@cache
def tide_odds(mode: TideMode = "normal") -> TideOdds:
    """Exact Tide odds: the seed's 17% becomes 11/36 for a 1 when the worse die is kept.

    >>> o = tide_odds("worse"); o.setback, o.edge
    (Fraction(11, 36), Fraction(1, 36))
    """
    count = _tide_dice(mode)
    values: dict[int, Fraction] = {v: Fraction(0) for v in range(1, 7)}
    if count == 1:
        values = {v: Fraction(1, 6) for v in range(1, 7)}
    else:
        for x in range(1, 7):
            for y in range(1, 7):
                values[min(x, y) if mode == "worse" else max(x, y)] += Fraction(1, 36)
    return TideOdds(frozen_map(values), values[6], values[1])


# ---------------------------------------------------------------------------------------------
# Action points


@dataclass(frozen=True)
class Combatant:
    """Initiative successes this round and the points carried (negative = last round's debt)."""

    name: str
    successes: int
    carry: int = 0
    down: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise InvalidChoice("every combatant needs a name")
        whole(f"{self.name} successes", self.successes, 0, 100)
        whole(f"{self.name} carry", self.carry, -100, 3)

    @property
    def points(self) -> int:
        """Action points to start the round: successes + carry, never below zero; 0 when Down."""
        return 0 if self.down else max(0, self.successes + self.carry)


@dataclass(frozen=True)
class RoundState:
    """Action points during a round, in the order the combatants were listed."""

    names: tuple[str, ...]
    points: tuple[int, ...]
    #: (name, "act" | "hold" | "defend") in the order they happened.
    log: tuple[tuple[str, str], ...] = field(default=())

    def points_of(self, name: str) -> int:
        return self.points[self._index(name)]

    def _index(self, name: str) -> int:
        if name not in self.names:
            raise InvalidChoice(f"no combatant named {name!r} in this round")
        return self.names.index(name)


def begin_round(combatants: Sequence[Combatant]) -> RoundState:
    """Start a round: each combatant's successes plus carry-over.

    >>> begin_round([Combatant("A", 4, 2), Combatant("B", 2, -3)]).points
    (6, 0)
    """
    names = [c.name for c in combatants]
    if len(set(names)) != len(names):
        raise InvalidChoice("combatant names must be different")
    return RoundState(tuple(names), tuple(c.points for c in combatants))


def next_up(state: RoundState) -> tuple[str, ...]:
    """Who may act now: everyone tied for the most points, if that is 3 or more; else nobody.

    >>> next_up(begin_round([Combatant("A", 4), Combatant("B", 4), Combatant("C", 2)]))
    ('A', 'B')
    """
    if not state.points:
        return ()
    most = max(state.points)
    if most < 3:
        return ()
    return tuple(n for n, p in zip(state.names, state.points, strict=True) if p == most)


def act(state: RoundState, name: str, *, hold: bool = False) -> RoundState:
    """``name`` acts (-3 points) or declares a hold (-1); only someone in :func:`next_up` may."""
    up = next_up(state)
    if name not in up:
        i = state._index(name)
        why = "the round is over" if not up else f"{', '.join(up)} has the most action points"
        raise RulesError(f"{name} cannot act now ({state.points[i]} points): {why}")
    i = state._index(name)
    points = list(state.points)
    points[i] -= 1 if hold else 3
    return RoundState(state.names, tuple(points), (*state.log, (name, "hold" if hold else "act")))


def defend(state: RoundState, name: str) -> RoundState:
    """An out-of-turn defensive action when attacked: -3 points, which may go below zero."""
    i = state._index(name)
    points = list(state.points)
    points[i] -= 3
    return RoundState(state.names, tuple(points), (*state.log, (name, "defend")))


def end_round(state: RoundState) -> Mapping[str, int]:
    """Points carried to next round: at most 3; a negative count is next round's penalty.

    >>> dict(end_round(RoundState(("A", "B", "C"), (5, 2, -2))))
    {'A': 3, 'B': 2, 'C': -2}
    """
    return frozen_map({n: min(p, 3) for n, p in zip(state.names, state.points, strict=True)})


@dataclass(frozen=True)
class RoundPlan:
    """A whole round with everyone acting whenever able; ties go in the order listed."""

    start: Mapping[str, int]
    order: tuple[str, ...]
    carry: Mapping[str, int]

    def as_dict(self) -> dict[str, object]:
        """JSON-ready, with the round endpoint's field names."""
        return {"start": dict(self.start), "order": list(self.order), "carry": dict(self.carry)}


def run_round(combatants: Sequence[Combatant]) -> RoundPlan:
    """Play out a round in which everybody acts as soon as they may.

    >>> plan = run_round([Combatant("A", 7), Combatant("B", 4, 2), Combatant("C", 2)])
    >>> plan.order, dict(plan.carry)
    (('A', 'B', 'A', 'B'), {'A': 1, 'B': 0, 'C': 2})
    """
    state = begin_round(combatants)
    start = frozen_map(dict(zip(state.names, state.points, strict=True)))
    order: list[str] = []
    while up := next_up(state):
        order.append(up[0])
        state = act(state, up[0])
    return RoundPlan(start, tuple(order), end_round(state))


# ---------------------------------------------------------------------------------------------
# Active defense

DEFENSE_BONUS: Mapping[str, int] = frozen_map({"one": 3, "group": 2, "all": 1})
DefenseScope = Literal["one", "group", "all"]


@dataclass(frozen=True)
class ActiveDefense:
    """An active defense against one foe, a group you can point at, or everyone."""

    scope: DefenseScope
    foes: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if self.scope not in DEFENSE_BONUS:
            raise InvalidChoice(
                f"active defense scope must be one, group or all, got {self.scope!r}"
            )
        object.__setattr__(self, "foes", frozenset(self.foes))
        if self.scope == "one" and len(self.foes) != 1:
            raise InvalidChoice("an active defense against one foe names exactly one foe")
        if self.scope == "group" and not self.foes:
            raise InvalidChoice("an active defense against a group names the foes in it")
        if self.scope == "all" and self.foes:
            raise InvalidChoice("an active defense against all foes names none")

    @property
    def bonus(self) -> int:
        return DEFENSE_BONUS[self.scope]

    def covers(self, attacker: str) -> bool:
        return self.scope == "all" or attacker in self.foes


def defense_bonus(defenses: Iterable[ActiveDefense], attacker: str) -> int:
    """The defense bonus against ``attacker``: the best defense covering it; never summed.

    Seed example: defenses against everyone, the bikers, and their leader give +3 against the
    leader, +2 against the other bikers and +1 against the ninja in the ducts.

    >>> ds = [ActiveDefense("all"), ActiveDefense("group", frozenset({"biker", "leader"})),
    ...       ActiveDefense("one", frozenset({"leader"}))]
    >>> defense_bonus(ds, "leader"), defense_bonus(ds, "biker"), defense_bonus(ds, "ninja")
    (3, 2, 1)
    """
    return max((d.bonus for d in defenses if d.covers(attacker)), default=0)


# ---------------------------------------------------------------------------------------------
# Mooks


@dataclass(frozen=True)
class Mook:
    """The simplified track: points only, Down at 5, Out at 7, no recovery in a fight."""

    points: int = 0

    def __post_init__(self) -> None:
        whole("mook points", self.points, 0, 1000)

    @property
    def down(self) -> bool:
        return self.points >= 5

    @property
    def out(self) -> bool:
        return self.points >= 7

    @property
    def status(self) -> Status:
        return "out" if self.out else "down" if self.down else "fine"


def mook_hit(mook: Mook, damage_rank: Rank | str | int, dr: Rank | str | int) -> Mook:
    """A hit on a mook: the usual points, no lethal / nonlethal split.

    >>> mook_hit(Mook(), "Grt", "Avg").status
    'down'
    """
    return Mook(mook.points + damage_points(damage_rank, dr).points)


def mook_rally(mook: Mook) -> Mook:
    """A Downed (not Out) mook gets back up on its side's Tide 6, two points lighter.

    >>> mook_rally(Mook(6)).points, mook_rally(Mook(8)).points, mook_rally(Mook(3)).points
    (4, 8, 3)
    """
    if mook.down and not mook.out:
        return Mook(max(0, mook.points - 2))
    return mook


def mook_table(dr: Rank | str | int) -> tuple[tuple[Rank, int], ...]:
    """The note on the mooks' scrap of paper: the lowest damage rank for 1, 2, 3, 5 and 7 points.

    >>> [(r.name, p) for r, p in mook_table("Avg")]
    [('Def', 1), ('Avg+', 2), ('Gd+', 3), ('Grt', 5), ('Grt+', 7)]
    """
    base = parse_rank(dr)
    rows: list[tuple[Rank, int]] = []
    for net in range(-2, 6):
        pts = damage_points(base.half + net, base.half).points
        if not rows or pts > rows[-1][1]:
            rows.append((Rank(base.half + net), pts))
    return tuple(rows)
