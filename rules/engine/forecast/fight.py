"""The pieces of a forecast fight, shared by the simulation (:mod:`.simulation`) and the exact
duel (:mod:`.duel`): the fighters (:class:`Combatant`), each strike's 100 faces
(:func:`face_table`), the policy both sides follow (:func:`choose`), and what is counted over
the fights and reported (:class:`Tally`, :func:`report`, :class:`Forecast`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from rules.engine import dice, odds
from rules.engine.errors import RulesError
from rules.engine.omg_check import composite_pro
from rules.engine.omg_combat import (
    Attacker,
    Defender,
    DefenseMode,
    StrikeMode,
    strike,
)
from rules.engine.omg_wounds import vit_loss

DEFAULT_ROUND_LIMIT = 20
#: The Stamina test's DIF when the GM sets none (Moderate, docs/rules.md "Wounds and healing").
STAMINA_DIFFICULTY = 20
#: Guards against a request that would hold a worker for minutes.
MAX_FIGHTS = 100_000
MAX_COMBATANTS = 60

_STRIKES = tuple(StrikeMode)
_DEFENSES = tuple(DefenseMode)
_SIDES = ("party", "foes")


@dataclass(frozen=True, slots=True)
class ZoneIn:
    """One body zone as the fight starts: wounds, current ARM and magic bonus, and whether it
    already carries a grievous wound."""

    name: str
    wounds: int = 0
    arm: int = 0
    arm_bonus: int = 0
    grievous: bool = False


@dataclass(frozen=True, slots=True)
class WeaponIn:
    """A weapon in hand: current DMG, bonus, and the level of its weapon discipline for this
    fighter (0: undisciplined)."""

    name: str
    dmg: int = 0
    bonus: int = 0
    dsc: int = 0


UNARMED = WeaponIn("unarmed")


@dataclass(frozen=True, slots=True)
class Combatant:
    """A fighter as the forecast reads the sheet. ``side`` is ``"party"`` or ``"foes"``;
    ``group`` gathers copies of one NPC (defaults to the key) under ``group_name``. ``itv`` is
    the daily ITV on the sheet; without one it is rolled for each fight (FOC + SPD + SVY +
    d10, ``itv_base`` being FOC + SPD + SVY). ``able`` is False for someone already down or
    knocked out."""

    key: str
    name: str
    side: str
    spd: int
    skl: int
    vgr: int
    melee: int
    stm: int
    bzf: int
    vitality: int
    zones: tuple[ZoneIn, ...]
    weapons: tuple[WeaponIn, ...] = ()
    itv: int | None = None
    itv_base: int = 3
    foc: int = 1
    on_alert: bool = False
    able: bool = True
    group: str = ""
    group_name: str = ""

    def __post_init__(self) -> None:
        if self.side not in _SIDES:
            raise RulesError(f"side must be one of {', '.join(_SIDES)}, got {self.side!r}")
        for what, value in (("SPD", self.spd), ("SKL", self.skl), ("VGR", self.vgr)):
            dice.require_int(what, value, 1, 5)
        dice.require_int("Melee Combat", self.melee, 0, 5)
        dice.require_int("STM", self.stm, 2, 10)
        dice.require_int("BZF", self.bzf, 1, 10_000)
        dice.require_int("Vitality", self.vitality, 0, 1_000)
        if not self.zones:
            raise RulesError(f"{self.name} has no body zone to be hit in")
        if not self.group:
            object.__setattr__(self, "group", self.key)
        if not self.group_name:
            object.__setattr__(self, "group_name", self.name)

    def apt(self, mode: StrikeMode | DefenseMode) -> int:
        """The aptitude a strike or defense mode draws on (fast / dodge SPD, precise / parry
        SKL, mighty / block VGR)."""
        if mode in (StrikeMode.FAST, DefenseMode.DODGE):
            return self.spd
        if mode in (StrikeMode.PRECISE, DefenseMode.PARRY):
            return self.skl
        return self.vgr

    @property
    def arsenal(self) -> tuple[WeaponIn, ...]:
        return self.weapons or (UNARMED,)


# -- The outcome of one strike, face by face -------------------------------------------------

#: One face of a strike: the damage of each landed hit in order, the armor wear, the weapon
#: wear and whether the defense earned a counterattack.
Face = tuple[tuple[int, ...], int, int, bool]


@lru_cache(maxsize=16_384)
def face_table(attacker: Attacker, defender: Defender) -> tuple[Face, ...]:
    """The 100 faces of a d100 for this strike, each resolved by :func:`omg.strike`.

    >>> t = face_table(Attacker("fast", 3, 3, weapon_dmg=4), Defender("dodge", 3, 2, arm=2))
    >>> t[42]  # roll 43: two hits, the second through armor worn by the first
    ((4, 5), 2, 0, False)
    """
    out: list[Face] = []
    for roll in range(1, 101):
        r = strike(attacker, defender, roll)
        out.append((tuple(h.damage for h in r.hits), r.armor_wear, r.weapon_wear, r.counterattack))
    return tuple(out)


@lru_cache(maxsize=16_384)
def grouped_faces(attacker: Attacker, defender: Defender) -> tuple[tuple[int, Face], ...]:
    """The same faces grouped: (how many of 100, face) for each distinct outcome."""
    counts: dict[Face, int] = {}
    for face in face_table(attacker, defender):
        counts[face] = counts.get(face, 0) + 1
    return tuple((n, face) for face, n in counts.items())


@lru_cache(maxsize=64)
def stamina_passes(stm: int, difficulty: int) -> int:
    """Faces of 100 on which a Stamina test passes (PRO 50 + 5 x STM v the DIF)."""
    return odds.check_odds(composite_pro(stm), difficulty).hits


def wound(wounds: int, damage: int, *, bzf: int, vitality: int) -> tuple[int, int]:
    """A zone's wounds and the Vitality left after one hit (the engine's :func:`vit_loss`;
    Vitality never below 0). A test compares it with :func:`omg.take_damage`.

    >>> wound(8, 5, bzf=10, vitality=12)
    (13, 9)
    """
    new = wounds + damage
    return new, vitality - min(vitality, vit_loss(wounds, new, bzf))


# -- The policy ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Choice:
    """The attacker's best strike on one target: expected damage (misses at 0, a fast
    strike's second hit counted) against the defender's best answer, the weapon (its index in
    the arsenal), the strike mode, the defense that answers it, the zones that give this score
    (their indices) and the engine inputs."""

    score: float
    weapon: int
    strike: StrikeMode
    defense: DefenseMode
    zones: tuple[int, ...]
    attacker: Attacker
    defender: Defender


def _answer(attacker: Attacker, target: Combatant, arm: int, bonus: int) -> tuple[float, Defender]:
    """The defense that answers this strike best: the lowest expected damage, then the
    lowest chance to be hit, then the rules' order (dodge, parry, block)."""
    best: tuple[float, int, Defender] | None = None
    for mode in _DEFENSES:
        d = Defender(mode, target.apt(mode), target.melee, arm, bonus)
        so = odds.strike_odds(attacker, d)
        key = (float(so.mean_damage), so.check.hits, d)
        if best is None or key[:2] < best[:2]:
            best = key
    assert best is not None
    return best[0], best[2]


def choose(
    attacker: Combatant,
    weapon_dmg: Sequence[int],
    target: Combatant,
    arms: Sequence[int],
) -> Choice:
    """The best strike of ``attacker`` (weapons at ``weapon_dmg`` now) on ``target`` (zones
    at ``arms`` now): each weapon, strike mode and zone, each answered by the defense that
    answers it best; the highest expected damage wins, the first in the sheet's and the
    rules' order on a tie.

    >>> a = Combatant("a", "A", "party", spd=3, skl=3, vgr=5, melee=1, stm=6, bzf=10,
    ...               vitality=9, zones=(ZoneIn("chest"),), weapons=(WeaponIn("axe", 3, 0, 2),))
    >>> t = Combatant("t", "T", "foes", spd=2, skl=2, vgr=2, melee=0, stm=4, bzf=10,
    ...               vitality=6, zones=(ZoneIn("head"), ZoneIn("chest", arm=2)))
    >>> c = choose(a, [3], t, [0, 2])
    >>> c.strike.value, c.defense.value, c.zones
    ('mighty', 'dodge', (0,))
    """
    best: Choice | None = None
    classes: dict[tuple[int, int], list[int]] = {}
    for i, z in enumerate(target.zones):
        classes.setdefault((arms[i], z.arm_bonus), []).append(i)
    for w_index, weapon in enumerate(attacker.arsenal):
        for mode in _STRIKES:
            a = Attacker(mode, attacker.apt(mode), weapon.dsc, weapon_dmg[w_index], weapon.bonus)
            for (arm, bonus), zones in classes.items():
                value, d = _answer(a, target, arm, bonus)
                if best is None or value > best.score:
                    best = Choice(value, w_index, mode, d.mode, tuple(zones), a, d)
                elif (
                    value == best.score
                    and (w_index, mode, d.mode) == (best.weapon, best.strike, best.defense)
                    and face_table(a, d) == face_table(a, best.defender)
                ):
                    # A zone under other armor that changes nothing (a disciplined precise
                    # strike bypasses it) stays open too: the attacker may press the one
                    # already hurt. Same faces, so the first zone's table serves both.
                    best = Choice(
                        value, w_index, mode, d.mode, (*best.zones, *zones), a, best.defender
                    )
    assert best is not None
    return best


cached_choose = lru_cache(maxsize=65_536)(choose)


# -- Results ------------------------------------------------------------------------------------


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval of ``k`` successes in ``n`` (95% by default).

    >>> [round(x, 3) for x in wilson(50, 100)]
    [0.404, 0.596]
    """
    if n <= 0:
        return 0.0, 1.0
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True, slots=True)
class CombatantOdds:
    """One fighter's chances over the fights: down (Vitality 0), knocked out by a failed
    Stamina test, out (either), a grievous wound taken in the fight; ``takedowns`` is how many
    foes a fight sees this fighter put out, on average, and ``damage`` the Vitality it takes
    from them."""

    key: str
    name: str
    side: str
    group: str
    down: float
    knocked_out: float
    out: float
    grievous: float
    takedowns: float
    damage: float


@dataclass(frozen=True, slots=True)
class GroupOdds:
    """An NPC group (copies of one stat block): the chance that every copy ends the fight
    out, and the takedowns of the whole group per fight."""

    group: str
    name: str
    count: int
    beaten: float
    takedowns: float


@dataclass(frozen=True, slots=True)
class Forecast:
    """What the fights showed. ``party_standing`` is the share of fights that end with at
    least one party member still able to act (a round-limit stop counts as standing), with
    its 95% Wilson interval; ``party_wins`` the share where every foe is out;
    ``round_limit_hit`` the share stopped by the limit. Rounds: median and the 10th and 90th
    percentiles."""

    fights: int
    seed: int | None
    round_limit: int
    party_standing: float
    party_standing_interval: tuple[float, float]
    party_wins: float
    round_limit_hit: float
    rounds_median: float
    rounds_p10: float
    rounds_p90: float
    combatants: tuple[CombatantOdds, ...]
    groups: tuple[GroupOdds, ...]
    most_dangerous: str | None
    verdict: str
    level: str
    exact: bool = False

    def as_dict(self) -> dict[str, object]:
        """JSON-ready, chances rounded to 4 places."""

        def r(x: float) -> float:
            return round(x, 4)

        return {
            "fights": self.fights,
            "seed": self.seed,
            "exact": self.exact,
            "method": "exact" if self.exact else "sampled",
            "round_limit": self.round_limit,
            "party_standing": r(self.party_standing),
            "party_standing_interval": [r(x) for x in self.party_standing_interval],
            "party_wins": r(self.party_wins),
            "round_limit_hit": r(self.round_limit_hit),
            "rounds": {
                "median": self.rounds_median,
                "p10": self.rounds_p10,
                "p90": self.rounds_p90,
            },
            "combatants": [
                {
                    "key": c.key,
                    "name": c.name,
                    "side": c.side,
                    "group": c.group,
                    "down": r(c.down),
                    "knocked_out": r(c.knocked_out),
                    "out": r(c.out),
                    "grievous": r(c.grievous),
                    "takedowns": r(c.takedowns),
                    "damage": r(c.damage),
                }
                for c in self.combatants
            ],
            "groups": [
                {
                    "group": g.group,
                    "name": g.name,
                    "count": g.count,
                    "beaten": r(g.beaten),
                    "takedowns": r(g.takedowns),
                }
                for g in self.groups
            ],
            "most_dangerous": self.most_dangerous,
            "verdict": self.verdict,
            "level": self.level,
        }


#: Verdict thresholds (docs/rules.md, "The fight forecast"): the share of fights in which the
#: party falls, or the most exposed character is put out.
DEADLY, DANGEROUS, RISKY = 0.5, 0.25, 0.10


def verdict(party_standing: float, party: Sequence[tuple[str, float]]) -> tuple[str, str]:
    """The one-line reading and its level (``deadly``, ``dangerous``, ``risky``, ``easy``),
    from the chance the party is left standing and each character's chance to be put out.

    >>> verdict(0.9, [("Ysolde", 0.62), ("Bran", 0.1)])
    ('deadly', 'Deadly for Ysolde: down or out in 62% of fights')
    >>> verdict(0.3, [("Ysolde", 0.8)])
    ('deadly', 'Deadly: the whole party falls in 70% of fights')
    >>> verdict(1.0, [("Bran", 0.02)])
    ('easy', 'Easy: nobody is down or out in more than 10% of fights')
    """
    falls = 1 - party_standing
    if falls >= DEADLY:
        return "deadly", f"Deadly: the whole party falls in {falls:.0%} of fights"
    if not party:
        return "easy", "No party member to forecast"
    name, worst = max(party, key=lambda x: x[1])
    for level, threshold in (("deadly", DEADLY), ("dangerous", DANGEROUS), ("risky", RISKY)):
        if worst >= threshold:
            return level, f"{level.capitalize()} for {name}: down or out in {worst:.0%} of fights"
    return "easy", f"Easy: nobody is down or out in more than {RISKY:.0%} of fights"


@dataclass
class Tally:
    """Counts over the fights, filled by the simulation or (weighted) by the exact duel."""

    n: int
    total: float = 0.0
    standing: float = 0.0
    wins: float = 0.0
    limit: float = 0.0
    rounds: dict[int, float] = field(default_factory=dict)
    down: list[float] = field(default_factory=list)
    ko: list[float] = field(default_factory=list)
    grievous: list[float] = field(default_factory=list)
    takedowns: list[float] = field(default_factory=list)
    damage: list[float] = field(default_factory=list)
    beaten: dict[str, float] = field(default_factory=dict)


def _percentile(dist: dict[int, float], total: float, q: float) -> float:
    acc = 0.0
    for value in sorted(dist):
        acc += dist[value]
        if acc >= q * total - 1e-9:
            return float(value)
    return float(max(dist)) if dist else 0.0


def report(
    fighters: Sequence[Combatant], t: Tally, *, seed: int | None, limit: int, exact: bool
) -> Forecast:
    total = t.total or 1.0
    odds_of = tuple(
        CombatantOdds(
            key=c.key,
            name=c.name,
            side=c.side,
            group=c.group,
            down=t.down[i] / total,
            knocked_out=t.ko[i] / total,
            out=min(1.0, (t.down[i] + t.ko[i]) / total),
            grievous=t.grievous[i] / total,
            takedowns=t.takedowns[i] / total,
            damage=t.damage[i] / total,
        )
        for i, c in enumerate(fighters)
    )
    groups: list[GroupOdds] = []
    for c in fighters:
        if c.side == "foes" and all(g.group != c.group for g in groups):
            members = [i for i, f in enumerate(fighters) if f.group == c.group]
            beaten = t.beaten.get(c.group, 0.0) / total
            groups.append(
                GroupOdds(
                    c.group,
                    c.group_name,
                    len(members),
                    beaten,
                    sum(t.takedowns[i] for i in members) / total,
                )
            )
    danger: dict[str, tuple[float, float, str]] = {}
    for i, c in enumerate(fighters):
        if c.side == "foes":
            took, dealt, name = danger.get(c.group, (0.0, 0.0, c.group_name))
            danger[c.group] = (took + t.takedowns[i], dealt + t.damage[i], name)
    most = max(danger.values(), key=lambda v: (v[0], v[1]), default=None)
    standing = t.standing / total
    level, line = verdict(
        standing,
        [(c.name, o.out) for c, o in zip(fighters, odds_of, strict=True) if c.side == "party"],
    )
    k = round(t.standing) if not exact else round(standing * t.n)
    return Forecast(
        fights=t.n,
        seed=seed,
        round_limit=limit,
        party_standing=standing,
        party_standing_interval=(standing, standing) if exact else wilson(k, t.n),
        party_wins=t.wins / total,
        round_limit_hit=t.limit / total,
        rounds_median=_percentile(t.rounds, total, 0.5),
        rounds_p10=_percentile(t.rounds, total, 0.1),
        rounds_p90=_percentile(t.rounds, total, 0.9),
        combatants=odds_of,
        groups=tuple(groups),
        most_dangerous=most[2] if most is not None and (most[0] or most[1]) else None,
        verdict=line,
        level=level,
        exact=exact,
    )


# -- Shared by the simulation and the exact duel ------------------------------------------------


def validate(fighters: Sequence[Combatant], round_limit: int, stamina_difficulty: int) -> None:
    if not isinstance(fighters, Sequence) or not fighters:
        raise RulesError("give the fighters of both sides")
    if len(fighters) > MAX_COMBATANTS:
        raise RulesError(f"at most {MAX_COMBATANTS} fighters")
    for c in fighters:
        if not isinstance(c, Combatant):
            raise RulesError(f"a fighter must be a Combatant, got {c!r}")
    if len({c.key for c in fighters}) != len(fighters):
        raise RulesError("each fighter needs its own key")
    dice.require_int("round limit", round_limit, 1, 1_000)
    dice.require_int("Stamina difficulty", stamina_difficulty, 5, 50)


def pick_zone(zones: tuple[int, ...], wounds: Sequence[int]) -> int:
    """Of the zones the choice allows, the one with the most wounds (first on a tie): the
    seed's advice to press a zone already hurt."""
    best = zones[0]
    for z in zones[1:]:
        if wounds[z] > wounds[best]:
            best = z
    return best
