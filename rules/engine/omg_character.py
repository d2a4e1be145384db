"""OMG characters: aptitudes, composites, derived attributes, initiative, creation,
advancement at the daily rest, and the reserve roll.

The seed's example fighter (Speed 3, Skill 4, Vigor 5):

>>> apts = Aptitudes(foc=2, spd=3, skl=4, vgr=5, nrv=3, chr=2, svy=3)
>>> c = composites(apts)
>>> c.agility, c.strength, c.stamina
(7, 9, 8)
>>> d = derived(apts, bzf=12, itv_d10=6)
>>> d.vit, d.mna, d.chi, d.enc, d.mov, d.itv
(10, 10, 14, 108, 6, 14)
"""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from rules.engine import dice
from rules.engine.errors import CreationError, FateError, InvalidChoice, InvalidScore, RulesError
from rules.engine.omg_data import (
    APTITUDE_ABBRS,
    ARCHETYPES,
    ARCHETYPES_BY_KEY,
    SECONDARY_LISTS,
    WEAPON_CATEGORIES_BY_NUMERAL,
    WEAPON_MASTERY,
    Archetype,
    weapon_discipline,
)
from rules.engine.omg_guards import (
    require_flag,
    require_instance,
    require_mapping,
    require_names,
    require_rng,
    require_sequence,
    require_text,
)

__all__ = [
    "APTITUDE_RAISE_COST",
    "CREATION_MAX_RANK",
    "CREATION_POINTS",
    "MAX_APTITUDE",
    "MAX_EXP_MARKS",
    "MAX_RANK",
    "AptitudeMethod",
    "AptitudeRoll",
    "Aptitudes",
    "BzfRoll",
    "Composites",
    "CreationSummary",
    "Derived",
    "DisciplineState",
    "InitiativeEntry",
    "ReserveResult",
    "RestResult",
    "RestState",
    "aptitudes_from_2d6",
    "aptitudes_from_7d6",
    "buy_aptitude_raise",
    "bzf_from_weight",
    "composites",
    "creation_cost",
    "daily_rest",
    "derived",
    "free_disciplines",
    "initiative_order",
    "manual_aptitudes",
    "on_alert",
    "reserve_roll",
    "roll_aptitudes_2d6",
    "roll_aptitudes_7d6",
    "roll_bzf",
    "roll_itv",
    "validate_creation",
]

MAX_APTITUDE = 5
MAX_RANK = 5
#: Unspent EXP marks on one discipline that a rest accepts: far more than a session awards.
MAX_EXP_MARKS = 1_000
CREATION_POINTS = 7
CREATION_MAX_RANK = 3
APTITUDE_RAISE_COST = 3
_MAX_WEIGHT = 100_000
_MAX_ORDER = 1_000_000


@dataclass(frozen=True, slots=True)
class Aptitudes:
    """The seven core aptitudes, each 1..5."""

    foc: int
    spd: int
    skl: int
    vgr: int
    nrv: int
    chr: int
    svy: int

    def __post_init__(self) -> None:
        for abbr in APTITUDE_ABBRS:
            dice.require_int(abbr, getattr(self, abbr.lower()), 1, MAX_APTITUDE)

    def __getitem__(self, abbr: str) -> int:
        """``apts["SPD"]``: read an aptitude by its abbreviation."""
        key = _apt_key(abbr)
        value: int = getattr(self, key)
        return value

    def as_dict(self) -> dict[str, int]:
        """``{"FOC": 2, "SPD": 3, ...}`` in sheet order."""
        return {abbr: self[abbr] for abbr in APTITUDE_ABBRS}

    @classmethod
    def from_mapping(cls, values: Mapping[str, int]) -> Aptitudes:
        """Build from ``{"FOC": 2, ...}`` (abbreviations, any case); all seven are required."""
        require_mapping("aptitudes", values, InvalidScore)
        given = {k.upper(): v for k, v in values.items()}
        unknown = sorted(set(given) - set(APTITUDE_ABBRS))
        if unknown:
            raise InvalidChoice(f"unknown aptitude(s): {', '.join(unknown)}")
        missing = [a for a in APTITUDE_ABBRS if a not in given]
        if missing:
            raise InvalidScore(f"missing aptitude(s): {', '.join(missing)}")
        return cls(**{a.lower(): given[a] for a in APTITUDE_ABBRS})


def _apt_key(abbr: str) -> str:
    upper = abbr.upper() if isinstance(abbr, str) else None
    if upper not in APTITUDE_ABBRS:
        raise InvalidChoice(f"aptitude must be one of {', '.join(APTITUDE_ABBRS)}, got {abbr!r}")
    assert upper is not None
    return upper.lower()


@dataclass(frozen=True, slots=True)
class Composites:
    """The six composites (2..10 each)."""

    agility: int
    strength: int
    stamina: int
    spirit: int
    insight: int
    wit: int

    def as_dict(self) -> dict[str, int]:
        """``{"AGL": 7, "STR": 9, ...}``."""
        return {
            "AGL": self.agility,
            "STR": self.strength,
            "STM": self.stamina,
            "SPR": self.spirit,
            "INS": self.insight,
            "WIT": self.wit,
        }


def composites(apts: Aptitudes) -> Composites:
    """AGL = SPD+SKL, STR = SKL+VGR, STM = NRV+VGR, SPR = NRV+CHR, INS = CHR+SVY,
    WIT = SVY+SPD."""
    apts = require_instance("aptitudes", apts, Aptitudes)
    return Composites(
        agility=apts.spd + apts.skl,
        strength=apts.skl + apts.vgr,
        stamina=apts.nrv + apts.vgr,
        spirit=apts.nrv + apts.chr,
        insight=apts.chr + apts.svy,
        wit=apts.svy + apts.spd,
    )


def bzf_from_weight(weight: int) -> int:
    """Body Zone Factor from body weight in pounds: ``weight // 14``.

    >>> bzf_from_weight(168), bzf_from_weight(181)
    (12, 12)
    """
    weight = dice.require_int("weight", weight, 14, _MAX_WEIGHT)
    return weight // 14


@dataclass(frozen=True, slots=True)
class BzfRoll:
    """BZF rolled at creation (6 + 2d6) and the body weight it implies (BZF x 14)."""

    dice: tuple[int, int]
    bzf: int
    weight: int


def roll_bzf(
    *, rng: random.Random | None = None, dice_values: tuple[int, int] | None = None
) -> BzfRoll:
    """Roll BZF as 6 + 2d6 (or read two given d6).

    >>> roll_bzf(dice_values=(3, 4))
    BzfRoll(dice=(3, 4), bzf=13, weight=182)
    """
    rng = require_rng(rng)
    if dice_values is None:
        if rng is None:
            raise RulesError("give the two d6 or a random generator to roll with")
        dice_values = (dice.roll_d6(rng), dice.roll_d6(rng))
    given = require_sequence("BZF dice", dice_values, InvalidScore)
    if len(given) != 2:
        raise InvalidScore(f"BZF is rolled with two d6, got {len(given)} dice")
    a, b = (dice.require_int("d6", v, 1, 6) for v in given)
    bzf = 6 + a + b
    return BzfRoll((a, b), bzf, bzf * 14)


def roll_itv(apts: Aptitudes, *, rng: random.Random | None = None, d10: int | None = None) -> int:
    """Daily initiative: FOC + SPD + SVY + d10 (given, or rolled with ``rng``).

    >>> roll_itv(Aptitudes(2, 3, 4, 5, 3, 2, 3), d10=6)
    14
    """
    apts = require_instance("aptitudes", apts, Aptitudes)
    rng = require_rng(rng)
    if d10 is None:
        if rng is None:
            raise RulesError("give the d10 or a random generator to roll with")
        d10 = dice.roll_d10(rng)
    return apts.foc + apts.spd + apts.svy + dice.require_int("d10", d10, 1, 10)


def on_alert(itv: int) -> int:
    """A character on alert counts double initiative for the encounter."""
    return 2 * dice.require_int("ITV", itv, 0, 1_000)


@dataclass(frozen=True, slots=True)
class Derived:
    """Derived attributes. ``carry`` and ``lift`` are 2x and 4x ENC; ``itv`` is ``None``
    when no d10 was given."""

    vit: int
    mna: int
    chi: int
    bzf: int
    weight: int
    enc: int
    carry: int
    lift: int
    mov: int
    itv: int | None


def derived(
    apts: Aptitudes,
    *,
    bzf: int,
    yards_per_height: int = 2,
    itv_d10: int | None = None,
) -> Derived:
    """VIT = FOC+NRV+VGR, MNA = FOC+SVY+CHR+NRV, CHI = FOC+SPD+SKL+VGR, ENC = STR x BZF,
    MOV = SPD x yards per height, ITV = FOC+SPD+SVY+d10 (when ``itv_d10`` is given)."""
    apts = require_instance("aptitudes", apts, Aptitudes)
    bzf = dice.require_int("BZF", bzf, 1, _MAX_WEIGHT // 14)
    yards_per_height = dice.require_int("yards per height", yards_per_height, 1, 100)
    enc = (apts.skl + apts.vgr) * bzf
    return Derived(
        vit=apts.foc + apts.nrv + apts.vgr,
        mna=apts.foc + apts.svy + apts.chr + apts.nrv,
        chi=apts.foc + apts.spd + apts.skl + apts.vgr,
        bzf=bzf,
        weight=bzf * 14,
        enc=enc,
        carry=2 * enc,
        lift=4 * enc,
        mov=apts.spd * yards_per_height,
        itv=None if itv_d10 is None else roll_itv(apts, d10=itv_d10),
    )


@dataclass(frozen=True, slots=True)
class InitiativeEntry:
    """One participant for :func:`initiative_order`; ``gm_order`` breaks the last ties
    (lower goes first)."""

    key: Any
    itv: int
    spd: int
    foc: int
    gm_order: int = 0

    def __post_init__(self) -> None:
        # Wide bounds: these only order the table (a doubled ITV, a GM's running number).
        for name in ("itv", "spd", "foc", "gm_order"):
            dice.require_int(name.replace("_", " "), getattr(self, name), 0, _MAX_ORDER)


def initiative_order(entries: Sequence[InitiativeEntry]) -> tuple[InitiativeEntry, ...]:
    """Highest ITV first; ties go to higher SPD, then higher FOC, then the GM's order.

    >>> es = [InitiativeEntry("a", 12, 3, 2), InitiativeEntry("b", 12, 4, 1),
    ...       InitiativeEntry("c", 15, 1, 1)]
    >>> [e.key for e in initiative_order(es)]
    ['c', 'b', 'a']
    """
    require_sequence("initiative entries", entries, RulesError)
    for entry in entries:
        require_instance("an initiative entry", entry, InitiativeEntry)
    return tuple(sorted(entries, key=lambda e: (-e.itv, -e.spd, -e.foc, e.gm_order)))


# --- Creation -----------------------------------------------------------------------------


class AptitudeMethod(StrEnum):
    ROLL_2D6 = "2d6"
    ASSIGN_7D6 = "7d6"
    MANUAL = "manual"


@dataclass(frozen=True, slots=True)
class AptitudeRoll:
    """Aptitudes from a creation method, the dice behind them and the Fate the sixes gave."""

    method: AptitudeMethod
    aptitudes: Aptitudes
    fate: int
    dice: tuple[int, ...] = ()


def _cap_six(value: int) -> tuple[int, int]:
    # One Fate per aptitude that would have been a 6 (docs/rules.md, "Creation").
    return (5, 1) if value == 6 else (value, 0)


def aptitudes_from_2d6(pairs: Sequence[Sequence[int]]) -> AptitudeRoll:
    """Method (a): seven pairs of d6 in sheet order (FOC..SVY), each keeping the higher die;
    a kept 6 becomes 5 and gives +1 Fate (once per aptitude, even on double sixes).

    >>> r = aptitudes_from_2d6([(3, 1), (6, 2), (4, 4), (6, 6), (1, 1), (2, 5), (3, 3)])
    >>> r.aptitudes.as_dict(), r.fate
    ({'FOC': 3, 'SPD': 5, 'SKL': 4, 'VGR': 5, 'NRV': 1, 'CHR': 5, 'SVY': 3}, 2)
    """
    require_sequence("method 2d6 dice", pairs, CreationError)
    if len(pairs) != len(APTITUDE_ABBRS):
        raise CreationError(f"method 2d6 needs seven pairs of dice, got {len(pairs)}")
    values: list[int] = []
    fate = 0
    flat: list[int] = []
    for abbr, pair in zip(APTITUDE_ABBRS, pairs, strict=True):
        require_sequence(f"{abbr} dice", pair, CreationError)
        if len(pair) != 2:
            raise CreationError(f"{abbr} needs exactly two d6")
        a, b = (dice.require_int(f"{abbr} die", v, 1, 6) for v in pair)
        flat += [a, b]
        value, bonus = _cap_six(max(a, b))
        values.append(value)
        fate += bonus
    apts = Aptitudes(*values)
    return AptitudeRoll(AptitudeMethod.ROLL_2D6, apts, fate, tuple(flat))


def roll_aptitudes_2d6(rng: random.Random) -> AptitudeRoll:
    """Method (a) rolled with ``rng``."""
    rng = _require_generator(rng)
    return aptitudes_from_2d6([(dice.roll_d6(rng), dice.roll_d6(rng)) for _ in APTITUDE_ABBRS])


def roll_aptitudes_7d6(rng: random.Random) -> tuple[int, ...]:
    """Method (b), first half: the seven d6 the player then assigns."""
    rng = _require_generator(rng)
    return tuple(dice.roll_d6(rng) for _ in APTITUDE_ABBRS)


def aptitudes_from_7d6(rolled: Sequence[int], assignment: Mapping[str, int]) -> AptitudeRoll:
    """Method (b): the player places each of the seven rolled d6 on an aptitude.

    ``assignment`` maps every aptitude to one of the rolled values, using each die once;
    sixes become 5 with +1 Fate each.

    >>> r = aptitudes_from_7d6([6, 1, 3, 4, 2, 5, 3],
    ...     {"FOC": 3, "SPD": 6, "SKL": 5, "VGR": 4, "NRV": 3, "CHR": 2, "SVY": 1})
    >>> r.aptitudes.spd, r.fate
    (5, 1)
    """
    require_sequence("method 7d6 dice", rolled, CreationError)
    if len(rolled) != len(APTITUDE_ABBRS):
        raise CreationError(f"method 7d6 needs seven d6, got {len(rolled)}")
    dice_values = [dice.require_int("d6", v, 1, 6) for v in rolled]
    require_mapping("placement", assignment, CreationError)
    placed = {k.upper(): v for k, v in assignment.items()}
    if set(placed) != set(APTITUDE_ABBRS):
        raise CreationError("method 7d6 places one die on each of the seven aptitudes")
    placed_values = {abbr: dice.require_int(abbr, v, 1, 6) for abbr, v in placed.items()}
    if sorted(placed_values.values()) != sorted(dice_values):
        raise CreationError(
            f"the placed values {sorted(placed_values.values())} are not the rolled dice "
            f"{sorted(dice_values)}"
        )
    values: list[int] = []
    fate = 0
    for abbr in APTITUDE_ABBRS:
        value, bonus = _cap_six(placed_values[abbr])
        values.append(value)
        fate += bonus
    return AptitudeRoll(AptitudeMethod.ASSIGN_7D6, Aptitudes(*values), fate, tuple(dice_values))


def manual_aptitudes(values: Mapping[str, int]) -> AptitudeRoll:
    """Method (c): aptitudes typed in (1..5 each) with the GM's approval; no Fate."""
    return AptitudeRoll(AptitudeMethod.MANUAL, Aptitudes.from_mapping(values), 0)


def _archetype(key: str) -> Archetype:
    found = ARCHETYPES_BY_KEY.get(key.lower()) if isinstance(key, str) else None
    if found is None:
        allowed = ", ".join(ARCHETYPES_BY_KEY)
        raise InvalidChoice(f"archetype must be one of {allowed}, got {key!r}")
    return found


def _require_generator(rng: random.Random) -> random.Random:
    checked = require_rng(rng)
    if checked is None:
        raise RulesError("give a random generator to roll with")
    return checked


def free_disciplines(archetype: str, weapon_category: str | None = None) -> tuple[str, ...]:
    """The seven disciplines an archetype starts at rank 1. A Warrior names the weapon
    category (``"I"``..``"IX"``) of the weapon discipline it starts with.

    >>> free_disciplines("warrior", "II")[-1]
    'Weapon Mastery II (single edged sword)'
    """
    arch = _archetype(archetype)
    if WEAPON_MASTERY not in arch.disciplines:
        return arch.disciplines
    if weapon_category is None:
        raise CreationError("a Warrior chooses the weapon category (I..IX) of its weapon mastery")
    if not isinstance(weapon_category, str) or weapon_category not in WEAPON_CATEGORIES_BY_NUMERAL:
        allowed = ", ".join(WEAPON_CATEGORIES_BY_NUMERAL)
        raise InvalidChoice(f"weapon category must be one of {allowed}, got {weapon_category!r}")
    mastery = weapon_discipline(weapon_category)
    return tuple(mastery if d == WEAPON_MASTERY else d for d in arch.disciplines)


_SECONDARY: frozenset[str] = frozenset(d for names in SECONDARY_LISTS.values() for d in names)
_ALL_ARCHETYPE_POOLS: frozenset[str] = frozenset(d for a in ARCHETYPES for d in a.pool)


def creation_cost(archetype: str, discipline: str, *, extra_secondary: Collection[str] = ()) -> int:
    """Points one creation rank of ``discipline`` costs an ``archetype``: 1 in its own list
    or a secondary list (or any GM-approved ``extra_secondary`` discipline), 2 in another
    archetype's list; a Monk always pays 1.

    >>> creation_cost("wizard", "Archery"), creation_cost("monk", "Archery")
    (2, 1)
    >>> creation_cost("ranger", "Cartography")
    1
    """
    arch = _archetype(archetype)
    require_text("discipline", discipline)
    extra_secondary = require_names("extra secondary disciplines", extra_secondary)
    # A discipline in several lists costs the cheapest price (docs/rules.md, "Creation").
    if discipline in arch.pool or discipline in _SECONDARY or discipline in extra_secondary:
        return 1
    if discipline not in _ALL_ARCHETYPE_POOLS:
        raise InvalidChoice(f"unknown discipline {discipline!r} (a GM can approve it as extra)")
    return 1 if arch.key == "monk" else 2


@dataclass(frozen=True, slots=True)
class CreationSummary:
    """A valid creation build: final ranks, what each discipline cost, points spent and left."""

    archetype: str
    ranks: Mapping[str, int]
    costs: Mapping[str, int]
    spent: int
    remaining: int

    @property
    def complete(self) -> bool:
        """True when all creation points are spent."""
        return self.remaining == 0


def validate_creation(
    archetype: str,
    ranks: Mapping[str, int],
    *,
    weapon_category: str | None = None,
    extra_secondary: Collection[str] = (),
    points: int = CREATION_POINTS,
) -> CreationSummary:
    """Check the disciplines of a new character and price them.

    ``ranks`` holds the final rank of every discipline (the free rank 1s included; a free
    discipline left out counts at rank 1). Every rank above the free one costs
    :func:`creation_cost`; no discipline may exceed 3 and the total may not exceed ``points``.
    Unspent points are allowed and reported as ``remaining``.

    >>> s = validate_creation("ranger", {"Archery": 3, "Cartography": 2, "Dancing": 1})
    >>> s.spent, s.remaining, s.ranks["Scouting/Recon"]
    (6, 1, 1)
    >>> validate_creation("ranger", {"Archery": 4})
    Traceback (most recent call last):
    ...
    rules.engine.errors.CreationError: Archery: at most 3 ranks at creation, got 4
    """
    dice.require_int("creation points", points, 0, 100)
    free = free_disciplines(archetype, weapon_category)
    require_names("extra secondary disciplines", extra_secondary)
    if not isinstance(ranks, Mapping):
        raise CreationError(f"ranks must map each discipline to its rank, got {ranks!r}")
    final: dict[str, int] = dict.fromkeys(free, 1)
    for name, rank in ranks.items():
        if not isinstance(name, str) or not name.strip():
            raise InvalidChoice(f"discipline names must be text, got {name!r}")
        if isinstance(rank, bool) or not isinstance(rank, int):
            raise InvalidScore(f"{name}: rank must be a whole number, got {rank!r}")
        if rank < 0:
            raise InvalidScore(f"{name}: a rank cannot be negative, got {rank}")
        if rank > CREATION_MAX_RANK:
            raise CreationError(
                f"{name}: at most {CREATION_MAX_RANK} ranks at creation, got {rank}"
            )
        floor = 1 if name in free else 0
        if rank < floor:
            raise CreationError(f"{name}: the archetype gives rank 1, got {rank}")
        final[name] = rank
    costs: dict[str, int] = {}
    for name, rank in final.items():
        bought = rank - (1 if name in free else 0)
        if bought:
            costs[name] = bought * creation_cost(archetype, name, extra_secondary=extra_secondary)
    spent = sum(costs.values())
    if spent > points:
        raise CreationError(f"the ranks cost {spent} points, only {points} are available")
    kept = {name: rank for name, rank in final.items() if rank > 0}
    return CreationSummary(
        _archetype(archetype).key,
        MappingProxyType(kept),
        MappingProxyType(costs),
        spent,
        points - spent,
    )


# --- Advancement --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DisciplineState:
    """A discipline on the sheet: rank 0..5 and unspent EXP marks."""

    rank: int
    exp: int = 0

    def __post_init__(self) -> None:
        dice.require_int("discipline rank", self.rank, 0, MAX_RANK)
        dice.require_int("EXP", self.exp, 0, MAX_EXP_MARKS)


@dataclass(frozen=True, slots=True)
class RestState:
    """What the daily rest reads and writes. ``pending_raises`` are aptitudes already paid
    for with Fate, waiting for the rest (one entry per +1)."""

    aptitudes: Aptitudes
    disciplines: Mapping[str, DisciplineState] = field(default_factory=dict)
    fate: int = 0
    pending_raises: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        require_instance("aptitudes", self.aptitudes, Aptitudes)
        disciplines = require_mapping("disciplines", self.disciplines, InvalidChoice)
        for name, disc in disciplines.items():
            require_instance(f"discipline {name!r}", disc, DisciplineState)
        dice.require_int("Fate", self.fate, 0, 10_000)
        if not isinstance(self.pending_raises, tuple):
            raise InvalidChoice(
                f"pending raises must be a tuple of aptitudes, got {self.pending_raises!r}"
            )
        for abbr in self.pending_raises:
            _apt_key(abbr)


def buy_aptitude_raise(state: RestState, aptitude: str) -> RestState:
    """Spend 3 Fate on +1 to an aptitude, applied at the next rest (max 5).

    >>> s = RestState(Aptitudes(2, 3, 4, 5, 3, 2, 3), fate=4)
    >>> s = buy_aptitude_raise(s, "SPD")
    >>> s.fate, s.pending_raises
    (1, ('SPD',))
    """
    state = require_instance("state", state, RestState)
    abbr = _apt_key(aptitude).upper()
    if state.fate < APTITUDE_RAISE_COST:
        raise FateError(
            f"raising {abbr} costs {APTITUDE_RAISE_COST} Fate, the character has {state.fate}"
        )
    after = state.aptitudes[abbr] + state.pending_raises.count(abbr) + 1
    if after > MAX_APTITUDE:
        raise InvalidScore(f"{abbr} cannot go above {MAX_APTITUDE}")
    return replace(
        state,
        fate=state.fate - APTITUDE_RAISE_COST,
        pending_raises=(*state.pending_raises, abbr),
    )


@dataclass(frozen=True, slots=True)
class RestResult:
    """The state after a daily rest and what changed: ``raised`` maps each discipline that
    rose to ``(old, new)``, ``aptitudes_raised`` each aptitude to ``(old, new)``;
    ``exp_lost`` counts marks that found their discipline already at 5. ``mna`` and ``chi``
    are refilled to their (new) maximum."""

    state: RestState
    raised: Mapping[str, tuple[int, int]]
    aptitudes_raised: Mapping[str, tuple[int, int]]
    exp_lost: int
    itv: int
    itv_d10: int
    mna: int
    chi: int
    vit: int


def daily_rest(
    state: RestState, *, rng: random.Random | None = None, itv_d10: int | None = None
) -> RestResult:
    """The daily rest: each EXP mark raises its discipline by 1 (max 5) and is cleared;
    aptitude raises bought with Fate apply; ITV is rerolled; Mana and Chi refill.

    >>> s = RestState(Aptitudes(2, 3, 4, 5, 3, 2, 3),
    ...               {"Melee Combat": DisciplineState(2, exp=1),
    ...                "Archery": DisciplineState(5, exp=1)}, pending_raises=("SPD",))
    >>> r = daily_rest(s, itv_d10=4)
    >>> dict(r.raised), dict(r.aptitudes_raised), r.exp_lost, r.itv
    ({'Melee Combat': (2, 3)}, {'SPD': (3, 4)}, 1, 13)
    """
    state = require_instance("state", state, RestState)
    rng = require_rng(rng)
    if itv_d10 is None:
        if rng is None:
            raise RulesError("give the ITV d10 or a random generator to roll with")
        itv_d10 = dice.roll_d10(rng)
    itv_d10 = dice.require_int("ITV d10", itv_d10, 1, 10)
    raised: dict[str, tuple[int, int]] = {}
    lost = 0
    disciplines: dict[str, DisciplineState] = {}
    for name, disc in state.disciplines.items():
        new_rank = min(MAX_RANK, disc.rank + disc.exp)
        lost += disc.rank + disc.exp - new_rank
        if new_rank != disc.rank:
            raised[name] = (disc.rank, new_rank)
        disciplines[name] = DisciplineState(new_rank)
    values = state.aptitudes.as_dict()
    apt_raised: dict[str, tuple[int, int]] = {}
    for abbr in state.pending_raises:
        old = values[abbr]
        values[abbr] = min(MAX_APTITUDE, old + 1)
        apt_raised[abbr] = (apt_raised.get(abbr, (old, old))[0], values[abbr])
    apts = Aptitudes.from_mapping(values)
    new_state = RestState(apts, MappingProxyType(disciplines), state.fate, ())
    d = derived(apts, bzf=1, itv_d10=itv_d10)
    assert d.itv is not None
    return RestResult(
        state=new_state,
        raised=MappingProxyType(raised),
        aptitudes_raised=MappingProxyType(apt_raised),
        exp_lost=lost,
        itv=d.itv,
        itv_d10=itv_d10,
        mna=d.mna,
        chi=d.chi,
        vit=d.vit,
    )


# --- Reserve roll -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReserveResult:
    """The roll the player uses and the RSV now on the sheet."""

    used: int
    rsv: int


def reserve_roll(rsv: int, new_roll: int, *, keep_reserve: bool) -> ReserveResult:
    """Answer a reserve-roll call: use the new roll, or use RSV and store the new roll as RSV.

    >>> reserve_roll(12, 87, keep_reserve=True)
    ReserveResult(used=12, rsv=87)
    >>> reserve_roll(12, 87, keep_reserve=False)
    ReserveResult(used=87, rsv=12)
    """
    rsv = dice.require_roll(rsv, "RSV")
    new_roll = dice.require_roll(new_roll)
    keep_reserve = require_flag("keep_reserve", keep_reserve)
    return ReserveResult(rsv, new_roll) if keep_reserve else ReserveResult(new_roll, rsv)
