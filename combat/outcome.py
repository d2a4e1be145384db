"""A roll's outcome: what the engine decided about a strike, a maneuver or a Stamina test, built
once when the roll is made (combat/services/resolution.py) and read back as attributes by every
reader: the headlines, the result card, the record, the webhooks.

It is kept in its log entry's payload under ``result`` as the JSON the API has always shown
(combat/api/shapes.py describes it): :meth:`~CheckOutcome.as_payload` writes it and
:func:`read` reads it back. They are the only code that knows its keys. A maneuver written
before maneuvers carried their defense's effects (a parry's counterattack, a block's weapon
wear) reads as having none. The sentences about an outcome are written in combat/perspective.py.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rules.engine import omg

#: The log kinds that carry an outcome: CombatLogEntry.Kind's values (combat.models imports this
#: module, not the other way round).
ROLL, STAMINA = "roll", "stamina"


@dataclass(frozen=True, kw_only=True)
class Hit:
    """One landed hit: its roll, its damage after armor and before (``raw``). A strike's hit
    also says how the zone's armor met it; a stun's hit does not (those are None)."""

    roll: int
    damage: int
    raw: int
    protection: int | None = None
    armor_wear: int | None = None
    second: bool | None = None

    @classmethod
    def of_strike(cls, h: omg.Hit) -> Hit:
        return cls(
            roll=h.roll,
            damage=h.damage,
            raw=h.raw,
            protection=h.protection,
            armor_wear=h.armor_wear,
            second=h.second,
        )

    @classmethod
    def of_stun(cls, h: omg.Hit) -> Hit:
        return cls(roll=h.roll, damage=h.damage, raw=h.raw)

    def as_payload(self) -> dict[str, Any]:
        out: dict[str, Any] = {"roll": self.roll, "damage": self.damage, "raw": self.raw}
        if self.protection is not None:
            out["protection"] = self.protection
        if self.armor_wear is not None:
            out["armor_wear"] = self.armor_wear
        if self.second is not None:
            out["second"] = self.second
        return out

    @classmethod
    def read(cls, d: Mapping[str, Any]) -> Hit:
        return cls(
            roll=int(d["roll"]),
            damage=int(d["damage"]),
            raw=int(d["raw"]),
            protection=_int_or_none(d.get("protection")),
            armor_wear=_int_or_none(d.get("armor_wear")),
            second=None if d.get("second") is None else bool(d["second"]),
        )


@dataclass(frozen=True, kw_only=True)
class Wounds:
    """What the hits did to the target's Vitality: lost, left, a grievous wound (a Stamina test
    due) and whether it went down (docs/rules.md, "Wounds and healing")."""

    vit_loss: int
    vitality: int
    grievous: bool
    down: bool

    def as_payload(self) -> dict[str, Any]:
        return {
            "vit_loss": self.vit_loss,
            "vitality": self.vitality,
            "grievous": self.grievous,
            "down": self.down,
        }

    @classmethod
    def read(cls, d: Mapping[str, Any]) -> Wounds:
        return cls(
            vit_loss=int(d["vit_loss"]),
            vitality=int(d["vitality"]),
            grievous=bool(d["grievous"]),
            down=bool(d["down"]),
        )


@dataclass(frozen=True, kw_only=True)
class CheckOutcome:
    """A d100 against PRO v DIF, as the engine read it (``check``): a Stamina test's whole
    outcome, and the start of an attack's."""

    check: omg.CheckResult

    @property
    def roll(self) -> int:
        return self.check.roll

    @property
    def pro(self) -> int:
        return self.check.pro

    @property
    def dif(self) -> int:
        return self.check.dif

    @property
    def pvd(self) -> str:
        return self.check.pvd

    @property
    def degree(self) -> omg.Degree:
        return self.check.degree

    @property
    def abbr(self) -> str | None:
        return self.check.abbr

    @property
    def success(self) -> bool:
        return self.check.success

    def as_payload(self) -> dict[str, Any]:
        """The JSON stored in the log entry (and shown by the API)."""
        return self.check.as_dict()


class StaminaOutcome(CheckOutcome):
    """A Stamina test: a failure knocks out (docs/rules.md, "Wounds and healing")."""

    @classmethod
    def read(cls, d: Mapping[str, Any]) -> StaminaOutcome:
        return cls(check=_check(d))


@dataclass(frozen=True, kw_only=True)
class AttackOutcome(CheckOutcome):
    """A strike's or a maneuver's outcome: the hits that landed, the wounds they dealt to the
    zone (None without a hit on a zone) and the declared defense's own effects (a disciplined
    parry's counterattack, the wear of the attacker's weapon)."""

    hits: tuple[Hit, ...]
    wounds: Wounds | None
    counterattack: bool
    weapon_wear: int
    weapon_dmg_after: int | None
    weapon_destroyed: bool

    @property
    def landed(self) -> bool:
        return bool(self.hits)

    @property
    def down(self) -> bool:
        """Did it put the target down (no Vitality left)?"""
        return self.wounds is not None and self.wounds.down

    @property
    def damage(self) -> int:
        return sum(h.damage for h in self.hits)


@dataclass(frozen=True, kw_only=True)
class StrikeOutcome(AttackOutcome):
    """A strike: the check, the hits in order (a fast strike's second one last), the zone's
    armor after them, the weapon's wear, and a parry's counterattack."""

    armor_wear: int
    arm_after: int
    armor_destroyed: bool
    weapon_dmg_after: int

    @classmethod
    def of(cls, r: omg.StrikeResult, wounds: Wounds | None) -> StrikeOutcome:
        """The outcome of the engine's strike ``r``, with the ``wounds`` it dealt to a zone."""
        return cls(
            # A fast strike's second reading is kept as its second hit, not with the check.
            check=dataclasses.replace(r.check, second=None),
            hits=tuple(Hit.of_strike(h) for h in r.hits),
            wounds=wounds,
            armor_wear=r.armor_wear,
            arm_after=r.arm_after,
            armor_destroyed=r.armor_destroyed,
            weapon_wear=r.weapon_wear,
            weapon_dmg_after=r.weapon_dmg_after,
            weapon_destroyed=r.weapon_destroyed,
            counterattack=r.counterattack,
        )

    def as_payload(self) -> dict[str, Any]:
        c = self.check
        out: dict[str, Any] = {
            "pro": c.pro,
            "dif": c.dif,
            "roll": c.roll,
            "degree": c.degree.value,
            "abbr": c.abbr,
            "success": c.success,
            "sum": c.sum,
            "exp": c.exp,
            "fate": c.fate,
            "hits": [h.as_payload() for h in self.hits],
            "damage": self.damage,
            "armor_wear": self.armor_wear,
            "arm_after": self.arm_after,
            "armor_destroyed": self.armor_destroyed,
            "weapon_wear": self.weapon_wear,
            "weapon_dmg_after": self.weapon_dmg_after,
            "weapon_destroyed": self.weapon_destroyed,
            "counterattack": self.counterattack,
        }
        if self.wounds is not None:
            out["wounds"] = self.wounds.as_payload()
        return out

    @classmethod
    def read(cls, d: Mapping[str, Any]) -> StrikeOutcome:
        return cls(
            check=_check(d),
            hits=tuple(Hit.read(h) for h in d.get("hits") or ()),
            wounds=Wounds.read(d["wounds"]) if d.get("wounds") else None,
            armor_wear=int(d["armor_wear"]),
            arm_after=int(d["arm_after"]),
            armor_destroyed=bool(d["armor_destroyed"]),
            weapon_wear=int(d["weapon_wear"]),
            weapon_dmg_after=int(d["weapon_dmg_after"]),
            weapon_destroyed=bool(d["weapon_destroyed"]),
            counterattack=bool(d["counterattack"]),
        )


@dataclass(frozen=True, kw_only=True)
class ManeuverOutcome(AttackOutcome):
    """A maneuver: the condition it set on the target (None when it failed), a throw or shove
    on a target too heavy, a stun's hit and the Stamina test it calls for, a shove's yards
    (docs/rules.md, "Maneuvers")."""

    maneuver: str
    condition: str | None
    too_heavy: bool
    stamina_test: bool
    shove_yards: int | None

    @property
    def landed(self) -> bool:
        return bool(self.condition) and not self.too_heavy

    @classmethod
    def of(
        cls,
        m: omg.ManeuverResult,
        *,
        wounds: Wounds | None,
        on_zone: bool,
        with_weapon: bool,
    ) -> ManeuverOutcome:
        """The outcome of the engine's maneuver ``m``: a stun's hit counts on a zone
        (``on_zone``), the wear of a weapon only when one was used (``with_weapon``)."""
        return cls(
            check=m.check,
            maneuver=m.kind.value,
            condition=m.condition.value if m.condition else None,
            too_heavy=m.too_heavy,
            stamina_test=m.stamina_test,
            shove_yards=m.shove_yards,
            hits=(Hit.of_stun(m.hit),) if m.hit is not None and on_zone else (),
            wounds=wounds,
            counterattack=m.counterattack,
            weapon_wear=m.weapon_wear if with_weapon else 0,
            weapon_dmg_after=m.weapon_dmg_after if with_weapon else None,
            weapon_destroyed=m.weapon_destroyed and with_weapon,
        )

    def as_payload(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            **self.check.as_dict(),
            "maneuver": self.maneuver,
            "condition": self.condition,
            "too_heavy": self.too_heavy,
            "stamina_test": self.stamina_test,
            "shove_yards": self.shove_yards,
            "hits": [h.as_payload() for h in self.hits],
        }
        if self.wounds is not None:
            out["wounds"] = self.wounds.as_payload()
        out.update(
            counterattack=self.counterattack,
            weapon_wear=self.weapon_wear,
            weapon_dmg_after=self.weapon_dmg_after,
            weapon_destroyed=self.weapon_destroyed,
        )
        return out

    @classmethod
    def read(cls, d: Mapping[str, Any]) -> ManeuverOutcome:
        return cls(
            check=_check(d),
            maneuver=str(d["maneuver"]),
            condition=str(d["condition"]) if d.get("condition") else None,
            too_heavy=bool(d.get("too_heavy")),
            stamina_test=bool(d.get("stamina_test")),
            shove_yards=_int_or_none(d.get("shove_yards")),
            hits=tuple(Hit.read(h) for h in d.get("hits") or ()),
            wounds=Wounds.read(d["wounds"]) if d.get("wounds") else None,
            # Not written before maneuvers carried their defense's effects: none then.
            counterattack=bool(d.get("counterattack", False)),
            weapon_wear=int(d.get("weapon_wear") or 0),
            weapon_dmg_after=_int_or_none(d.get("weapon_dmg_after")),
            weapon_destroyed=bool(d.get("weapon_destroyed", False)),
        )


Outcome = StrikeOutcome | ManeuverOutcome | StaminaOutcome


def read(kind: str, payload: Mapping[str, Any]) -> Outcome | None:
    """The outcome kept in a log entry's ``payload`` (None for an entry of another ``kind``,
    or one without an outcome)."""
    result = payload.get("result")
    if not isinstance(result, Mapping) or not result:
        return None
    if kind == STAMINA:
        return StaminaOutcome.read(result)
    if kind == ROLL:
        return ManeuverOutcome.read(result) if "maneuver" in result else StrikeOutcome.read(result)
    return None


def _check(d: Mapping[str, Any]) -> omg.CheckResult:
    second = d.get("second")
    return omg.CheckResult(
        roll=int(d["roll"]),
        pro=int(d["pro"]),
        dif=int(d["dif"]),
        degree=omg.Degree(d["degree"]),
        sum=int(d["sum"]),
        second=omg.SecondHit(int(second["roll"]), bool(second["hit"])) if second else None,
    )


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)
