"""The matchup table of a prepared encounter: for each attacker and weapon against each
expected defender, the exact chance to land each strike mode against each defense, the
expected damage per hit after armor, and the average number of hits to push a zone past BZF.

The PvD and the strike's damage distribution come from the tracker's own code path
(combat.services.attacks.setup, then rules.engine.odds.strike_odds); docs/rules.md ("The
matchup table") says how the two derived numbers are computed."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import count
from typing import Any

from combat.models import Declaration
from combat.services.attacks import setup
from prep.models import PreparedEncounter
from rules.engine import odds, omg
from sheets.models import BodyZone, Character, Weapon


@dataclass
class Fighter:
    """One side's sheet as the odds read it: a campaign character, or a library NPC's stat
    block as an unsaved sheet (``count`` copies of it)."""

    label: str
    character: Character
    weapons: list[Weapon]
    zones: list[BodyZone]
    levels: dict[str, int]
    hidden: bool = False
    npc: bool = False
    count: int = 1
    key: str = ""


def _protection(zone: BodyZone) -> int:
    return zone.arm + zone.arm_bonus if zone.arm > 0 else 0


def from_character(c: Character) -> Fighter:
    return Fighter(
        label=c.name,
        character=c,
        weapons=list(c.weapons.all()),
        zones=list(c.zones.all()),
        levels={d.name: d.level for d in c.disciplines.all()},
        key=f"character-{c.pk}",
    )


def from_sheet(sheet: dict[str, Any], *, label: str, pk: int, **extra: Any) -> Fighter:
    """An unsaved sheet (never saved: ``pk`` is a stand-in, negative) from a stat block."""
    from prep.statblock import FIELDS

    c = Character(pk=pk, name=label, is_npc=True, **{f: sheet[f] for f in FIELDS if f in sheet})
    return Fighter(
        label=label,
        character=c,
        weapons=[Weapon(character=c, **w) for w in sheet.get("weapons", [])],
        zones=[BodyZone(character=c, **z) for z in sheet.get("zones", [])],
        levels={d["name"]: d["level"] for d in sheet.get("disciplines", [])},
        npc=True,
        **extra,
    )


#: Up to this many wounds of headroom the expected hits are summed exactly (every sheet of a
#: human's weight: BZF is weight / 14); beyond, in floating point up to the renewal limit.
EXACT_HEADROOM = 100
#: A renewal density this close to its limit on a whole window of damages has converged.
CONVERGED = 1e-13


def hits_to_pass(
    per_hit: dict[int, Fraction], *, bzf: int, wounds: int = 0
) -> Fraction | float | None:
    """Expected number of hits until a zone's wounds exceed ``bzf``, each hit dealing ``d``
    with probability ``per_hit[d]`` (independent hits, armor as it stands). None when no hit
    can deal damage. Exact (a Fraction) up to EXACT_HEADROOM wounds of headroom; beyond, a
    float whose cost stops growing with BZF (docs/rules.md "The matchup table").

    >>> hits_to_pass({0: Fraction(1, 2), 2: Fraction(1, 2)}, bzf=3)
    Fraction(4, 1)
    """
    p0 = per_hit.get(0, Fraction(0))
    if p0 == 1:
        return None
    steps = [(d, p) for d, p in per_hit.items() if d > 0 and p]
    if bzf - wounds > EXACT_HEADROOM:
        return _renewal(steps, p0, bzf - wounds)
    # f(w) = 0 once w > bzf; else f(w) = (1 + sum p_d f(w + d)) / (1 - p_0), from the top down.
    f: dict[int, Fraction] = {}
    for w in range(bzf, wounds - 1, -1):
        f[w] = (1 + sum((p * f.get(w + d, Fraction(0)) for d, p in steps), Fraction(0))) / (1 - p0)
    return f.get(wounds, Fraction(0))


def _renewal(steps: list[tuple[int, Fraction]], p0: Fraction, headroom: int) -> float:
    """The same expectation for ``headroom`` >= 0 by renewal theory: the damaging hits needed
    to pass ``headroom`` number sum(u(m) for m <= headroom), u(m) being the chance that some
    run of damaging hits totals exactly m; u(m) tends to g / mean (g the gcd of the damages) on
    multiples of g and is 0 elsewhere, so once a whole window of max-damage values sits on that
    limit, the rest of the sum is a count. Each damaging hit takes 1 / (1 - p0) hits."""
    q = [(d, float(p / (1 - p0))) for d, p in steps]
    mean = sum(d * p for d, p in q)
    g = math.gcd(*(d for d, _ in q))
    limit = g / mean
    window = max(d for d, _ in q)
    u = [1.0]
    total = 1.0
    for m in range(1, headroom + 1):
        um = sum(p * u[m - d] for d, p in q if d <= m)
        u.append(um)
        total += um
        if m % window == 0 and all(
            abs(u[k] - (limit if k % g == 0 else 0.0)) <= CONVERGED
            for k in range(m - window + 1, m + 1)
        ):
            total += (headroom // g - m // g) * limit
            break
    return total / float(1 - p0)


@dataclass
class ZoneNumbers:
    zone: str
    protection: int
    damage_per_hit: Fraction | None
    hits_to_bzf: Fraction | float | None

    @property
    def dmg(self) -> str:
        return "–" if self.damage_per_hit is None else f"{float(self.damage_per_hit):.1f}"

    @property
    def hits(self) -> str:
        return "never" if self.hits_to_bzf is None else f"{float(self.hits_to_bzf):.1f}"


@dataclass
class Cell:
    pvd: str
    hit: int
    second_hit: int
    zones: list[ZoneNumbers] = field(default_factory=list)


@dataclass
class Row:
    attacker: Fighter
    weapon: str
    defender: Fighter
    cells: dict[str, dict[str, Cell]]
    zones: list[BodyZone]

    @property
    def grid(self) -> list[tuple[str, list[Cell]]]:
        """Strike modes down, defenses across (the template's order)."""
        return [(s, list(by.values())) for s, by in self.cells.items()]

    @property
    def best(self) -> tuple[str, int]:
        """The strike mode that lands most often when the defender answers it with their
        best defense (the defense is chosen once the strike is declared), and that chance;
        the first mode in the rules' order on a tie."""
        answered = [(s, min(c.hit for c in by.values())) for s, by in self.cells.items()]
        return max(answered, key=lambda pair: pair[1])


@dataclass
class Glance:
    """One section of the table at a glance: a line per attacker and weapon, a column per
    defender, each cell the row of that pair (None where there is none) and its position in
    the section (the page's anchor of its full card)."""

    defenders: list[Fighter]
    lines: list[tuple[Fighter, str, list[tuple[Row, int] | None]]]


def glance(rows: list[Row]) -> Glance:
    defenders: list[Fighter] = []
    for row in rows:
        if not any(d is row.defender for d in defenders):
            defenders.append(row.defender)
    lines: list[tuple[Fighter, str, list[tuple[Row, int] | None]]] = []
    for index, row in enumerate(rows, start=1):
        line = next((x for x in lines if x[0] is row.attacker and x[1] == row.weapon), None)
        if line is None:
            line = (row.attacker, row.weapon, [None] * len(defenders))
            lines.append(line)
        line[2][next(i for i, d in enumerate(defenders) if d is row.defender)] = (row, index)
    return Glance(defenders, lines)


def _targets(defender: Fighter) -> list[BodyZone | None]:
    """The least and the most protected zone (one when they tie), first by sheet order."""
    if not defender.zones:
        return [None]
    ordered = sorted(defender.zones, key=lambda z: (z.position, z.name))
    weakest = min(ordered, key=_protection)
    strongest = max(ordered, key=_protection)
    return [weakest] if _protection(weakest) == _protection(strongest) else [weakest, strongest]


def cell(
    attacker: Fighter,
    weapon: Weapon | None,
    defender: Fighter,
    strike: omg.StrikeMode,
    defense: omg.DefenseMode,
    zones: list[BodyZone | None],
) -> Cell:
    a, d = attacker.character, defender.character
    levels = {(a.pk, n): lvl for n, lvl in attacker.levels.items()}
    levels.update({(d.pk, n): lvl for n, lvl in defender.levels.items()})
    out: Cell | None = None
    for zone in zones:
        s = setup(
            Declaration(action=strike.value),
            attacker=a,
            target=d,
            weapon=weapon,
            zone=zone,
            levels=levels,
            defense=defense.value,
            feinted=False,
        )
        assert s.attacker is not None and s.defender is not None
        so = odds.strike_odds(s.attacker, s.defender)
        hits = so.check.hits
        if out is None:
            out = Cell(
                pvd=f"{s.pro}v{s.dif}",
                hit=hits,
                second_hit=so.check.second_hit if s.attacker.fast else 0,
            )
        per_hit: dict[int, Fraction] = {}
        if hits:
            for dmg, n in so.first.items():
                n -= so.first_miss if dmg == 0 else 0
                if n:
                    per_hit[dmg] = Fraction(n, hits)
        mean = sum((dmg * p for dmg, p in per_hit.items()), Fraction(0)) if hits else None
        out.zones.append(
            ZoneNumbers(
                zone=zone.name if zone else "",
                protection=_protection(zone) if zone else 0,
                damage_per_hit=mean,
                hits_to_bzf=hits_to_pass(per_hit, bzf=d.bzf, wounds=zone.wounds if zone else 0)
                if hits
                else None,
            )
        )
    assert out is not None
    return out


def rows_for(attacker: Fighter, defender: Fighter) -> list[Row]:
    zones = _targets(defender)
    weapons: list[Weapon | None] = list(attacker.weapons) or [None]
    rows = []
    for weapon in weapons:
        cells = {
            s.value: {
                m.value: cell(attacker, weapon, defender, s, m, zones) for m in omg.DefenseMode
            }
            for s in omg.StrikeMode
        }
        rows.append(
            Row(
                attacker=attacker,
                weapon=weapon.name if weapon else "unarmed",
                defender=defender,
                cells=cells,
                zones=[z for z in zones if z is not None],
            )
        )
    return rows


@dataclass
class Table:
    npcs: list[Fighter]
    characters: list[Fighter]
    npc_attacks: list[Row]
    character_attacks: list[Row]


def sides(prepared: PreparedEncounter) -> tuple[list[Fighter], list[Fighter]]:
    stand_in = count(-1, -1)
    npcs = [
        from_sheet(
            g.npc.sheet,
            label=g.npc.name,
            pk=next(stand_in),
            hidden=g.hidden,
            count=g.count,
            key=f"group-{g.pk}",
        )
        for g in prepared.groups.select_related("npc")
    ]
    characters = [
        from_character(c)
        for c in prepared.expected.filter(campaign=prepared.campaign).prefetch_related(
            "weapons", "zones", "disciplines"
        )
    ]
    return npcs, characters


def matchup_table(prepared: PreparedEncounter) -> Table:
    npcs, characters = sides(prepared)
    return Table(
        npcs=npcs,
        characters=characters,
        npc_attacks=[r for a in npcs for d in characters for r in rows_for(a, d)],
        character_attacks=[r for a in characters for d in npcs for r in rows_for(a, d)],
    )


def _num(x: Fraction | float | None) -> float | None:
    return None if x is None else round(float(x), 2)


def row_as_dict(row: Row) -> dict[str, Any]:
    strike, hit = row.best
    return {
        "best": {"strike": strike, "hit": hit},
        "attacker": row.attacker.label,
        "attacker_hidden": row.attacker.hidden,
        "weapon": row.weapon,
        "defender": row.defender.label,
        "defender_hidden": row.defender.hidden,
        "cells": {
            strike: {
                defense: {
                    "pvd": c.pvd,
                    "hit": c.hit,
                    "second_hit": c.second_hit,
                    "zones": [
                        {
                            "zone": z.zone,
                            "protection": z.protection,
                            "damage_per_hit": _num(z.damage_per_hit),
                            "hits_to_bzf": _num(z.hits_to_bzf),
                        }
                        for z in c.zones
                    ],
                }
                for defense, c in by_defense.items()
            }
            for strike, by_defense in row.cells.items()
        },
    }


def table_as_dict(table: Table) -> dict[str, Any]:
    return {
        "npc_attacks": [row_as_dict(r) for r in table.npc_attacks],
        "character_attacks": [row_as_dict(r) for r in table.character_attacks],
    }
