"""OMG combat: strikes (fast / precise / mighty) against defenses (dodge / parry / block),
the damage pipeline, armor and weapon wear, and tactical maneuvers.

The seed's worked example: Speed 3, Skill 4, Vigor 5, Swordsmanship 3, Melee Combat 2.

>>> [strike_pro(m, apt, 3) for m, apt in (("fast", 3), ("precise", 4), ("mighty", 5))]
[80, 85, 90]
>>> [defense_dif(m, apt, 2) for m, apt in (("dodge", 3), ("parry", 4), ("block", 5))]
[25, 30, 35]

A long sword (DMG 4) mighty strike rolling 43 against a 30-DIF parry into leather (ARM 2):
SUM 7 + 4 = 11, doubled to 22, minus 2 is 20; the leather wears by one point.

>>> r = strike(Attacker("mighty", 5, 3, weapon_dmg=4), Defender("parry", 4, 2, arm=2), 43)
>>> [h.damage for h in r.hits], r.armor_wear, r.counterattack
([20], 1, True)
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from rules.engine import dice
from rules.engine.errors import InvalidChoice, RulesError
from rules.engine.omg_check import CheckResult, Degree, check, dif, pro, resolve_roll, score

__all__ = [
    "DEFENSE_APTITUDE",
    "MANEUVER_APTITUDE",
    "STRIKE_APTITUDE",
    "Attacker",
    "Condition",
    "Defender",
    "DefenseMode",
    "Hit",
    "Maneuver",
    "ManeuverResult",
    "StrikeMode",
    "StrikeResult",
    "damage_chain",
    "defense_dif",
    "hit_damage",
    "maneuver",
    "maneuver_pro",
    "parse_defense_mode",
    "parse_maneuver",
    "parse_strike_mode",
    "strike",
    "strike_pro",
]


class StrikeMode(StrEnum):
    FAST = "fast"
    PRECISE = "precise"
    MIGHTY = "mighty"


class DefenseMode(StrEnum):
    DODGE = "dodge"
    PARRY = "parry"
    BLOCK = "block"


class Maneuver(StrEnum):
    FEINT = "feint"
    DISARM = "disarm"
    THROW = "throw"
    STUN = "stun"
    GRAPPLE = "grapple"
    SHOVE = "shove"


class Condition(StrEnum):
    """A state a maneuver leaves on its target (docs/rules.md, "Maneuvers")."""

    FEINTED = "feinted"
    DISARMED = "disarmed"
    PRONE = "prone"
    STUNNED = "stunned"
    GRAPPLED = "grappled"
    SHOVED = "shoved"


#: The aptitude each mode draws on.
STRIKE_APTITUDE: dict[StrikeMode, str] = {
    StrikeMode.FAST: "SPD",
    StrikeMode.PRECISE: "SKL",
    StrikeMode.MIGHTY: "VGR",
}
DEFENSE_APTITUDE: dict[DefenseMode, str] = {
    DefenseMode.DODGE: "SPD",
    DefenseMode.PARRY: "SKL",
    DefenseMode.BLOCK: "VGR",
}
MANEUVER_APTITUDE: dict[Maneuver, str] = {
    Maneuver.FEINT: "SPD",
    Maneuver.DISARM: "SKL",
    Maneuver.THROW: "SKL",
    Maneuver.STUN: "VGR",
    Maneuver.GRAPPLE: "VGR",
    Maneuver.SHOVE: "VGR",
}


def _parse[E: StrEnum](kind: type[E], what: str, value: object) -> E:
    if isinstance(value, kind):
        return value
    if isinstance(value, str):
        try:
            return kind(value.strip().lower())
        except ValueError:
            pass
    allowed = ", ".join(m.value for m in kind)
    raise InvalidChoice(f"{what} must be one of {allowed}, got {value!r}")


def parse_strike_mode(value: object) -> StrikeMode:
    """``"fast"`` -> :attr:`StrikeMode.FAST`; anything else raises :class:`InvalidChoice`."""
    return _parse(StrikeMode, "strike mode", value)


def parse_defense_mode(value: object) -> DefenseMode:
    """``"parry"`` -> :attr:`DefenseMode.PARRY`; anything else raises :class:`InvalidChoice`."""
    return _parse(DefenseMode, "defense mode", value)


def parse_maneuver(value: object) -> Maneuver:
    """``"shove"`` -> :attr:`Maneuver.SHOVE`; anything else raises :class:`InvalidChoice`."""
    return _parse(Maneuver, "maneuver", value)


def strike_pro(mode: StrikeMode | str, apt: int, weapon_dsc: int) -> int:
    """Attacker PRO: ``50 + 5 x (mode's APT + weapon discipline)``; ``weapon_dsc`` 0 is
    undisciplined (the APT alone). ``strike_pro("fast", 3, 3) == 80``."""
    parse_strike_mode(mode)
    return pro(score(apt, weapon_dsc))


def defense_dif(mode: DefenseMode | str, apt: int, melee: int) -> int:
    """Defender DIF: ``5 x (mode's APT + Melee Combat)``. ``defense_dif("dodge", 3, 2) == 25``."""
    parse_defense_mode(mode)
    return dif(score(apt, melee))


def maneuver_pro(kind: Maneuver | str, apt: int, melee: int) -> int:
    """Maneuver PRO: ``50 + 5 x (maneuver's APT + Melee Combat)``."""
    parse_maneuver(kind)
    return pro(score(apt, melee))


@dataclass(frozen=True, slots=True)
class Attacker:
    """Who strikes and how. ``apt`` is the mode's aptitude (fast SPD, precise SKL, mighty VGR),
    ``dsc`` the weapon discipline (0 = undisciplined), ``weapon_dmg`` the weapon's current DMG
    (0 for improvised weapons), ``weapon_bonus`` its quality or magic bonus."""

    mode: StrikeMode
    apt: int
    dsc: int = 0
    weapon_dmg: int = 0
    weapon_bonus: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", parse_strike_mode(self.mode))
        score(self.apt, self.dsc)
        dice.require_int("weapon DMG", self.weapon_dmg, 0, 5)
        dice.require_int("weapon bonus", self.weapon_bonus, 0, 5)

    @property
    def disciplined(self) -> bool:
        return self.dsc > 0

    @property
    def pro(self) -> int:
        return pro(score(self.apt, self.dsc))

    @property
    def fast(self) -> bool:
        """True when this strike reads a second attack from the reversed roll."""
        return self.dsc > 0 and self.mode is StrikeMode.FAST


@dataclass(frozen=True, slots=True)
class Defender:
    """Who defends and how. ``apt`` is the mode's aptitude (dodge SPD, parry SKL, block VGR),
    ``dsc`` the Melee Combat discipline (0 = undisciplined); ``arm`` and ``arm_bonus`` the
    targeted zone's current armor rating and its magic bonus."""

    mode: DefenseMode
    apt: int
    dsc: int = 0
    arm: int = 0
    arm_bonus: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", parse_defense_mode(self.mode))
        score(self.apt, self.dsc)
        dice.require_int("ARM", self.arm, 0, 5)
        dice.require_int("ARM bonus", self.arm_bonus, 0, 5)

    @property
    def disciplined(self) -> bool:
        return self.dsc > 0

    @property
    def dif(self) -> int:
        return dif(score(self.apt, self.dsc))

    @property
    def protection(self) -> int:
        """ARM plus its magic bonus; a destroyed armor (ARM 0) carries no bonus
        (docs/rules.md, "Damage, armor and weapons")."""
        return self.arm + self.arm_bonus if self.arm > 0 else 0


@dataclass(frozen=True, slots=True)
class Hit:
    """One landed attack. ``raw`` is the damage before armor, ``protection`` the armor that
    stood against it (0 when a precise strike bypassed it), ``armor_wear`` 1 when this hit
    wore the zone's armor."""

    roll: int
    raw: int
    protection: int
    damage: int
    armor_wear: int
    second: bool = False


@dataclass(frozen=True, slots=True)
class StrikeResult:
    """Everything a strike changes. ``hits`` lists the landed attacks in order (the fast
    strike's second one last); ``arm_after`` / ``weapon_dmg_after`` are the new ratings and
    ``*_destroyed`` say whether they just reached 0."""

    attacker: Attacker
    defender: Defender
    check: CheckResult
    hits: tuple[Hit, ...]
    armor_wear: int
    arm_after: int
    armor_destroyed: bool
    weapon_wear: int
    weapon_dmg_after: int
    weapon_destroyed: bool
    counterattack: bool

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
    def degree(self) -> Degree:
        return self.check.degree

    @property
    def success(self) -> bool:
        return self.check.success

    @property
    def damage(self) -> int:
        """Total damage of all hits."""
        return sum(h.damage for h in self.hits)

    def as_dict(self) -> dict[str, object]:
        """JSON-ready, with the field names of the strike endpoint.

        >>> r = strike(Attacker("fast", 3, 3, weapon_dmg=4), Defender("dodge", 3, 2), 43)
        >>> r.as_dict()["hits"]
        [{'roll': 43, 'damage': 5, 'raw': 11, 'protection': 0, 'armor_wear': 0, 'second': False}, \
{'roll': 34, 'damage': 5, 'raw': 11, 'protection': 0, 'armor_wear': 0, 'second': True}]
        """
        return {
            "pro": self.pro,
            "dif": self.dif,
            "roll": self.roll,
            "degree": self.degree.value,
            "abbr": self.check.abbr,
            "success": self.success,
            "sum": self.check.sum,
            "exp": self.check.exp,
            "fate": self.check.fate,
            "hits": [
                {
                    "roll": h.roll,
                    "damage": h.damage,
                    "raw": h.raw,
                    "protection": h.protection,
                    "armor_wear": h.armor_wear,
                    "second": h.second,
                }
                for h in self.hits
            ],
            "damage": self.damage,
            "armor_wear": self.armor_wear,
            "arm_after": self.arm_after,
            "armor_destroyed": self.armor_destroyed,
            "weapon_wear": self.weapon_wear,
            "weapon_dmg_after": self.weapon_dmg_after,
            "weapon_destroyed": self.weapon_destroyed,
            "counterattack": self.counterattack,
        }


def hit_damage(
    total: int,
    *,
    weapon: int,
    protection: int,
    double: bool = False,
    bypass_armor: bool = False,
    halve: bool = False,
) -> tuple[int, int, int]:
    """The damage pipeline of one hit; returns ``(raw, protection_used, damage)``.

    ``total`` is the roll's SUM, ``weapon`` the weapon's DMG + bonus. Order: add, double (a
    disciplined mighty strike), subtract armor unless bypassed (a disciplined precise strike),
    halve rounding down (a disciplined dodge), never below 0.

    >>> hit_damage(7, weapon=4, protection=3, double=True, halve=True)
    (22, 3, 9)
    >>> hit_damage(3, weapon=0, protection=5)
    (3, 5, 0)
    """
    raw = total + weapon
    if double:
        raw *= 2
    used = 0 if bypass_armor else protection
    damage = max(0, raw - used)
    if halve:
        damage //= 2
    return raw, used, damage


def damage_chain(
    attacker: Attacker, defender: Defender, total: int, hits: int
) -> tuple[tuple[int, int, int, int], ...]:
    """Damage of ``hits`` successive hits from one SUM ``total`` on the defender's zone:
    ``(raw, protection, damage, armor_wear)`` each, armor worn by a hit counting against the
    next one.

    >>> a = Attacker("fast", 3, 3, weapon_dmg=4)
    >>> damage_chain(a, Defender("block", 2, 2, arm=1, arm_bonus=2), 7, 2)
    ((11, 3, 8, 1), (11, 0, 11, 0))
    """
    weapon = attacker.weapon_dmg + attacker.weapon_bonus
    double = attacker.disciplined and attacker.mode is StrikeMode.MIGHTY
    bypass = attacker.disciplined and attacker.mode is StrikeMode.PRECISE
    halve = defender.disciplined and defender.mode is DefenseMode.DODGE
    arm = defender.arm
    out: list[tuple[int, int, int, int]] = []
    for _ in range(hits):
        protection = arm + defender.arm_bonus if arm > 0 else 0
        raw, used, damage = hit_damage(
            total,
            weapon=weapon,
            protection=protection,
            double=double,
            bypass_armor=bypass,
            halve=halve,
        )
        # Wear compares the blow with the whole protection and takes a point off ARM only
        # (docs/rules.md, "Damage, armor and weapons").
        wear = 1 if used and raw > used else 0
        arm -= wear
        out.append((raw, used, damage, wear))
    return tuple(out)


def strike(
    attacker: Attacker,
    defender: Defender,
    roll: int | None = None,
    *,
    rng: random.Random | None = None,
) -> StrikeResult:
    """Resolve one strike: the attacker's d100 (given or rolled with ``rng``) against the
    defense, then every hit's damage, the wear and the counterattack.

    A disciplined fast strike also reads the reversed roll as a second attack; armor worn
    by the first hit protects one point less against it.

    >>> a = Attacker("fast", 3, 3, weapon_dmg=4)        # PRO 80
    >>> d = Defender("dodge", 3, 2, arm=2)              # DIF 25
    >>> r = strike(a, d, 43)                            # reversed: 34, also a hit
    >>> [(h.roll, h.raw, h.protection, h.damage) for h in r.hits]
    [(43, 11, 2, 4), (34, 11, 1, 5)]
    >>> r.armor_wear, r.arm_after
    (2, 0)
    """
    p, d = attacker.pro, defender.dif
    result = check(p, d, resolve_roll(roll, rng), fast=attacker.fast)
    attacks: list[tuple[int, bool]] = []
    if result.success:
        attacks.append((result.roll, False))
        if result.second is not None and result.second.hit:
            attacks.append((result.second.roll, True))
    chain = damage_chain(attacker, defender, result.sum, len(attacks))
    hits = [
        Hit(hit_roll, raw, used, damage, wear, is_second)
        for (hit_roll, is_second), (raw, used, damage, wear) in zip(attacks, chain, strict=True)
    ]
    arm = defender.arm - sum(h.armor_wear for h in hits)

    weapon_wear = 0
    if (
        defender.disciplined
        and defender.mode is DefenseMode.BLOCK
        and result.degree is Degree.DRAMATIC_FAILURE
        and attacker.weapon_dmg > 0
    ):
        weapon_wear = 1
    return StrikeResult(
        attacker=attacker,
        defender=defender,
        check=result,
        hits=tuple(hits),
        armor_wear=defender.arm - arm,
        arm_after=arm,
        armor_destroyed=defender.arm > 0 and arm == 0,
        weapon_wear=weapon_wear,
        weapon_dmg_after=attacker.weapon_dmg - weapon_wear,
        weapon_destroyed=weapon_wear > 0 and attacker.weapon_dmg == weapon_wear,
        # Earned by the parry itself, hit or miss (docs/rules.md, "Damage, armor and weapons").
        counterattack=defender.disciplined and defender.mode is DefenseMode.PARRY,
    )


@dataclass(frozen=True, slots=True)
class ManeuverResult:
    """The outcome of a maneuver. ``condition`` is set on the target when it took effect;
    ``too_heavy`` says a throw or shove succeeded on the dice but the target weighs at least
    twice the attacker; ``hit`` carries a stun's damage; ``stamina_test`` asks the target for
    a Stamina test (a failed one knocks it out); ``shove_yards`` is the shove distance.
    The declared defense's own effect applies as against a strike (docs/rules.md,
    "Maneuvers"): ``counterattack`` for a disciplined parry, ``weapon_wear`` (with
    ``weapon_dmg_after`` and ``weapon_destroyed``) for a disciplined block met by a dramatic
    failure of a maneuver made with a weapon of DMG 1 or more."""

    kind: Maneuver
    check: CheckResult
    condition: Condition | None
    too_heavy: bool = False
    hit: Hit | None = None
    stamina_test: bool = False
    shove_yards: int = 0
    notes: tuple[str, ...] = field(default=())
    counterattack: bool = False
    weapon_wear: int = 0
    weapon_dmg_after: int = 0
    weapon_destroyed: bool = False

    @property
    def success(self) -> bool:
        return self.check.success


_CONDITION: dict[Maneuver, Condition] = {
    Maneuver.FEINT: Condition.FEINTED,
    Maneuver.DISARM: Condition.DISARMED,
    Maneuver.THROW: Condition.PRONE,
    Maneuver.STUN: Condition.STUNNED,
    Maneuver.GRAPPLE: Condition.GRAPPLED,
    Maneuver.SHOVE: Condition.SHOVED,
}


def maneuver(
    kind: Maneuver | str,
    *,
    apt: int,
    melee: int,
    defense_apt: int,
    defense_melee: int,
    defense: DefenseMode | str | None = None,
    roll: int | None = None,
    rng: random.Random | None = None,
    attacker_weight: int | None = None,
    target_weight: int | None = None,
    attacker_mov: int | None = None,
    weapon_dmg: int = 0,
    weapon_bonus: int = 0,
    arm: int = 0,
    arm_bonus: int = 0,
) -> ManeuverResult:
    """Resolve a tactical maneuver.

    ``apt`` is the maneuver's aptitude (feint SPD, disarm and throw SKL, stun, grapple and
    shove VGR) and ``melee`` the attacker's Melee Combat. A feint is resolved against the
    defender's FOC + Melee (pass FOC as ``defense_apt``, no ``defense`` needed); the others
    against the declared ``defense`` mode with its aptitude. Throw and shove need both weights
    in pounds; shove needs the attacker's MOV. A stun deals normal damage (weapon, armor and a
    disciplined dodge count; no strike-mode effect) and calls for a Stamina test.
    ``weapon_dmg`` is the DMG of the weapon the maneuver is made with (0: none, or
    improvised). A disciplined parry earns its counterattack, hit or miss; a disciplined block
    wears that weapon by 1 on the attacker's dramatic failure, as against a strike. A feint
    meets no defense mode, so neither applies to it.

    >>> r = maneuver("disarm", apt=4, melee=2, defense="parry", defense_apt=3,
    ...              defense_melee=1, roll=50)
    >>> r.condition, r.counterattack
    (<Condition.DISARMED: 'disarmed'>, True)
    >>> r = maneuver("stun", apt=5, melee=2, defense="block", defense_apt=4,
    ...              defense_melee=1, roll=22, weapon_dmg=4)
    >>> r.success, r.weapon_wear, r.weapon_dmg_after
    (False, 1, 3)

    >>> r = maneuver("shove", apt=5, melee=2, defense="block", defense_apt=3,
    ...              defense_melee=1, roll=50, attacker_weight=180, target_weight=200,
    ...              attacker_mov=6)
    >>> r.condition, r.shove_yards
    (<Condition.SHOVED: 'shoved'>, 3)
    """
    kind = parse_maneuver(kind)
    p = pro(score(apt, melee))
    d = dif(score(defense_apt, defense_melee))
    mode: DefenseMode | None = None
    if kind is not Maneuver.FEINT:
        if defense is None:
            raise InvalidChoice(f"a {kind.value} is resolved against a declared defense mode")
        mode = parse_defense_mode(defense)
    heavy_check = kind in (Maneuver.THROW, Maneuver.SHOVE)
    if heavy_check:
        if attacker_weight is None or target_weight is None:
            raise RulesError(f"a {kind.value} needs the attacker's and the target's weight")
        dice.require_int("attacker weight", attacker_weight, 1, 100_000)
        dice.require_int("target weight", target_weight, 1, 100_000)
    if kind is Maneuver.SHOVE:
        if attacker_mov is None:
            raise RulesError("a shove needs the attacker's MOV")
        dice.require_int("MOV", attacker_mov, 0, 1_000)
    dice.require_int("weapon DMG", weapon_dmg, 0, 5)
    dice.require_int("weapon bonus", weapon_bonus, 0, 5)
    dice.require_int("ARM", arm, 0, 5)
    dice.require_int("ARM bonus", arm_bonus, 0, 5)

    result = check(p, d, resolve_roll(roll, rng))
    disciplined = defense_melee > 0
    # The defense's effect does not depend on what the maneuver does, only on the defense
    # and the roll, as for a strike (docs/rules.md, "Maneuvers").
    worn = int(
        disciplined
        and mode is DefenseMode.BLOCK
        and result.degree is Degree.DRAMATIC_FAILURE
        and weapon_dmg > 0
    )
    counterattack = disciplined and mode is DefenseMode.PARRY

    def done(condition: Condition | None, **extra: Any) -> ManeuverResult:
        return ManeuverResult(
            kind,
            result,
            condition,
            counterattack=counterattack,
            weapon_wear=worn,
            weapon_dmg_after=weapon_dmg - worn,
            weapon_destroyed=worn > 0 and weapon_dmg == worn,
            **extra,
        )

    if not result.success:
        return done(None)
    if heavy_check:
        assert attacker_weight is not None and target_weight is not None
        # "Less than twice" is strict (docs/rules.md, "Maneuvers").
        if target_weight >= 2 * attacker_weight:
            return done(None, too_heavy=True)
    if kind is Maneuver.STUN:
        protection = arm + arm_bonus if arm > 0 else 0
        raw, used, damage = hit_damage(
            result.sum,
            weapon=weapon_dmg + weapon_bonus,
            protection=protection,
            halve=mode is DefenseMode.DODGE and disciplined,
        )
        wear = 1 if used and raw > used else 0
        hit = Hit(result.roll, raw, used, damage, wear)
        return done(Condition.STUNNED, hit=hit, stamina_test=True)
    if kind is Maneuver.SHOVE:
        assert attacker_mov is not None
        return done(Condition.SHOVED, shove_yards=attacker_mov // 2)
    return done(_CONDITION[kind])
