"""OMG wounds: body zones, damage against the Body Zone Factor, Vitality, healing.

A zone soaks wounds up to the character's BZF without consequence; what goes beyond comes
off Vitality. The first time a zone goes past BZF it takes a grievous wound and the
character makes a Stamina test.

>>> z = Zone("chest", wounds=8)
>>> w = take_damage(z, 5, bzf=10, vitality=12)
>>> w.zone.wounds, w.vit_loss, w.vitality, w.grievous, w.stamina_test
(13, 3, 9, True, True)
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from rules.engine import dice
from rules.engine.errors import InvalidChoice
from rules.engine.omg_check import CheckResult, check, pro
from rules.engine.omg_combat import StrikeResult
from rules.engine.omg_data import DEFAULT_ZONES

__all__ = [
    "MAX_WOUNDS",
    "HealResult",
    "StrikeOnZone",
    "WoundResult",
    "Zone",
    "apply_strike",
    "default_zones",
    "heal",
    "stamina_test",
    "take_damage",
    "vit_loss",
]

#: A generous ceiling that keeps numbers sane; no hit in the rules comes near it.
MAX_WOUNDS = 10_000
_MAX_BZF = 10_000
_MAX_VIT = 1_000


@dataclass(frozen=True, slots=True)
class Zone:
    """One body zone: its armor (current ARM 0..5 and magic bonus 0..5), the wounds it holds
    and whether it has taken a grievous wound."""

    name: str
    wounds: int = 0
    arm: int = 0
    arm_bonus: int = 0
    grievous: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise InvalidChoice("a body zone needs a name")
        dice.require_int("wounds", self.wounds, 0, MAX_WOUNDS)
        dice.require_int("ARM", self.arm, 0, 5)
        dice.require_int("ARM bonus", self.arm_bonus, 0, 5)


def default_zones(arm: int = 0) -> tuple[Zone, ...]:
    """The seven humanoid zones, unwounded, each with the given ARM.

    >>> [z.name for z in default_zones()][:3]
    ['head', 'chest', 'abdomen']
    """
    return tuple(Zone(name, arm=arm) for name in DEFAULT_ZONES)


def vit_loss(old: int, new: int, bzf: int) -> int:
    """Vitality a change of a zone's wounds from ``old`` to ``new`` costs (negative: restores).

    >>> vit_loss(8, 13, 10), vit_loss(2, 7, 10), vit_loss(13, 9, 10)
    (3, 0, -3)
    """
    return max(0, new - bzf) - max(0, old - bzf)


@dataclass(frozen=True, slots=True)
class WoundResult:
    """A zone after a hit. ``vit_loss`` is the Vitality actually lost (never more than was
    left); ``grievous`` marks a zone passing BZF for the first time, which calls for a
    ``stamina_test``; ``down`` says Vitality reached 0 (down and dying)."""

    zone: Zone
    damage: int
    vit_loss: int
    vitality: int
    grievous: bool
    stamina_test: bool
    down: bool


def _check_pool(bzf: int, vitality: int) -> None:
    dice.require_int("BZF", bzf, 1, _MAX_BZF)
    dice.require_int("Vitality", vitality, 0, _MAX_VIT)


def take_damage(zone: Zone, damage: int, *, bzf: int, vitality: int) -> WoundResult:
    """Add a hit's damage to ``zone``; returns the new zone and the Vitality left.

    >>> take_damage(Zone("head"), 0, bzf=10, vitality=9).zone.wounds
    0
    """
    damage = dice.require_int("damage", damage, 0, MAX_WOUNDS)
    _check_pool(bzf, vitality)
    new = min(MAX_WOUNDS, zone.wounds + damage)
    lost = min(vitality, vit_loss(zone.wounds, new, bzf))
    grievous_now = not zone.grievous and new > bzf
    left = vitality - lost
    return WoundResult(
        zone=replace(zone, wounds=new, grievous=zone.grievous or grievous_now),
        damage=damage,
        vit_loss=lost,
        vitality=left,
        grievous=grievous_now,
        stamina_test=grievous_now,
        down=left == 0,
    )


@dataclass(frozen=True, slots=True)
class HealResult:
    """A zone after healing; ``vit_gain`` is the Vitality the closed overflow gives back."""

    zone: Zone
    healed: int
    vit_gain: int
    vitality: int


def heal(zone: Zone, amount: int, *, bzf: int, vitality: int, max_vitality: int) -> HealResult:
    """Lower a zone's wounds by ``amount`` (never below 0).

    Wounds healed above BZF give their Vitality back, up to ``max_vitality``
    (docs/rules.md, "Wounds and healing"). A grievous wound stays recorded.

    >>> h = heal(Zone("chest", wounds=13, grievous=True), 5, bzf=10, vitality=9,
    ...          max_vitality=12)
    >>> h.zone.wounds, h.healed, h.vit_gain, h.vitality, h.zone.grievous
    (8, 5, 3, 12, True)
    """
    amount = dice.require_int("healing", amount, 0, MAX_WOUNDS)
    _check_pool(bzf, vitality)
    dice.require_int("maximum Vitality", max_vitality, vitality, _MAX_VIT)
    new = max(0, zone.wounds - amount)
    gain = min(max_vitality - vitality, -vit_loss(zone.wounds, new, bzf))
    return HealResult(replace(zone, wounds=new), zone.wounds - new, gain, vitality + gain)


@dataclass(frozen=True, slots=True)
class StrikeOnZone:
    """A strike result applied to the targeted zone: one :class:`WoundResult` per hit, in
    order, and the zone's final state (wounds and worn armor)."""

    zone: Zone
    wounds: tuple[WoundResult, ...]
    vitality: int
    stamina_test: bool
    down: bool


def apply_strike(zone: Zone, result: StrikeResult, *, bzf: int, vitality: int) -> StrikeOnZone:
    """Apply every hit of ``result`` to ``zone`` in order, then the armor wear.

    >>> from rules.engine.omg_combat import Attacker, Defender, strike
    >>> r = strike(Attacker("fast", 3, 3, weapon_dmg=4), Defender("dodge", 3, 2, arm=2), 43)
    >>> s = apply_strike(Zone("chest", wounds=6, arm=2), r, bzf=10, vitality=10)
    >>> s.zone.wounds, s.zone.arm, s.vitality, s.stamina_test
    (15, 0, 5, True)
    """
    _check_pool(bzf, vitality)
    results: list[WoundResult] = []
    current = zone
    for hit in result.hits:
        wound = take_damage(current, hit.damage, bzf=bzf, vitality=vitality)
        results.append(wound)
        current, vitality = wound.zone, wound.vitality
    current = replace(current, arm=max(0, current.arm - result.armor_wear))
    return StrikeOnZone(
        zone=current,
        wounds=tuple(results),
        vitality=vitality,
        stamina_test=any(w.stamina_test for w in results),
        down=vitality == 0,
    )


def stamina_test(
    stm: int,
    difficulty: int = 20,
    roll: int | None = None,
    *,
    rng: random.Random | None = None,
) -> CheckResult:
    """The Stamina test after a grievous wound or a stun: PRO from STM (NRV + VGR, 2..10)
    against a GM-set DIF (default Moderate 20). A failure means unconscious.

    >>> stamina_test(7, roll=60).success, stamina_test(7, roll=90).success
    (True, False)
    """
    stm = dice.require_int("STM", stm, 2, 10)
    return check(pro(stm), difficulty, roll, rng=rng)
