"""Everything a character sheet shows that is computed rather than typed: built from the rows
of one character with the rules engine, so the sheet, the API and the tracker agree.

The caller passes the character with its disciplines, weapons and zones already fetched
(`Character.objects.with_sheet()`); nothing here queries the database.
"""

from __future__ import annotations

from dataclasses import dataclass

from rules.engine import omg
from rules.engine.omg_data import (
    APTITUDES,
    COMPOSITES,
    MELEE_COMBAT,
    WEIGHT_CATEGORIES,
    weapon_discipline,
)
from sheets.models import BodyZone, Character, Discipline, Weapon

STRIKE_MODES = (("fast", "SPD"), ("precise", "SKL"), ("mighty", "VGR"))
DEFENSE_MODES = (("dodge", "SPD"), ("parry", "SKL"), ("block", "VGR"))


@dataclass(frozen=True)
class AptitudeRow:
    abbr: str
    name: str
    value: int
    pro: int
    dif: int


@dataclass(frozen=True)
class DisciplineRow:
    discipline: Discipline
    pro: int


@dataclass(frozen=True)
class WeaponRow:
    weapon: Weapon
    discipline: str
    level: int
    pro: dict[str, int]  # strike mode -> PRO
    damage: int  # DMG + bonus, before the SUM


@dataclass(frozen=True)
class ZoneRow:
    zone: BodyZone
    over: int  # wounds beyond BZF (each one cost a point of Vitality)
    fraction: float  # wounds / BZF, for the body diagram's shading (capped at 1)

    @property
    def severity(self) -> str:
        """The body diagram's tint: unhurt, light (under half the BZF), heavy (half or more),
        full (at BZF: the next wound costs Vitality) or over (past BZF)."""
        if self.over:
            return "over"
        if self.fraction >= 1:
            return "full"
        if self.fraction >= 0.5:
            return "heavy"
        return "light" if self.zone.wounds else "unhurt"


@dataclass(frozen=True)
class SheetNumbers:
    aptitudes: tuple[AptitudeRow, ...]
    composites: tuple[AptitudeRow, ...]
    derived: omg.Derived
    weight_category: str
    disciplines: tuple[DisciplineRow, ...]
    melee: int
    weapons: tuple[WeaponRow, ...]
    defenses: dict[str, int]  # defense mode -> DIF
    zones: tuple[ZoneRow, ...]


def aptitudes_of(character: Character) -> omg.Aptitudes:
    return omg.Aptitudes(
        foc=character.foc,
        spd=character.spd,
        skl=character.skl,
        vgr=character.vgr,
        nrv=character.nrv,
        chr=character.chr,
        svy=character.svy,
    )


def _composite_row(abbr: str, name: str, value: int) -> AptitudeRow:
    """A composite (2..10) tests as a PRO, or as 5 x composite for a DIF "save"."""
    return AptitudeRow(abbr, name, value, omg.composite_pro(value), omg.composite_dif(value))


def _weight_category(bzf: int) -> str:
    for row in WEIGHT_CATEGORIES:
        if bzf >= row.bzf_min and (row.bzf_max is None or bzf <= row.bzf_max):
            return row.name
    return "below Strawweight"


def sheet_numbers(character: Character) -> SheetNumbers:
    apts = aptitudes_of(character)
    values = apts.as_dict()
    comps = omg.composites(apts)
    levels = {d.name: d.level for d in character.disciplines.all()}
    melee = levels.get(MELEE_COMBAT, 0)
    weapons = []
    for weapon in character.weapons.all():
        discipline = weapon_discipline(weapon.category)
        level = levels.get(discipline, 0)
        weapons.append(
            WeaponRow(
                weapon=weapon,
                discipline=discipline,
                level=level,
                pro={m: omg.strike_pro(m, values[apt], level) for m, apt in STRIKE_MODES},
                damage=weapon.dmg + weapon.bonus,
            )
        )
    bzf = character.bzf
    return SheetNumbers(
        aptitudes=tuple(
            AptitudeRow(a.abbr, a.name, v, omg.pro(v), omg.dif(v))
            for a in APTITUDES
            for v in (values[a.abbr],)
        ),
        composites=tuple(
            _composite_row(c.abbr, c.name, getattr(comps, c.name.lower())) for c in COMPOSITES
        ),
        derived=omg.derived(apts, bzf=bzf, yards_per_height=character.yards_per_height),
        weight_category=_weight_category(bzf),
        disciplines=tuple(
            DisciplineRow(d, omg.pro(omg.score(values[d.aptitude], d.level)))
            for d in character.disciplines.all()
        ),
        melee=melee,
        weapons=tuple(weapons),
        defenses={m: omg.defense_dif(m, values[apt], melee) for m, apt in DEFENSE_MODES},
        zones=tuple(
            ZoneRow(z, max(0, z.wounds - bzf), min(1.0, z.wounds / bzf))
            for z in character.zones.all()
        ),
    )
