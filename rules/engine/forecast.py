"""Fight forecast for the OMG System: play one fight many times with the engine's own rules
and count how it goes, or, for a duel, walk every branch exactly.

Both sides follow one policy (docs/rules.md, "The fight forecast"): initiative by the rules,
each attacker picks the target, weapon, strike mode and zone with the best expected damage
against the defense that answers it best, the defender answers with that defense, a
disciplined parry earns a counterattack made before the round ends, and hits wear armor,
wound zones, cost Vitality and call for Stamina tests exactly as :mod:`rules.engine.omg` says.
Maneuvers are left out.

Speed comes from reading each strike from a table of its 100 faces, built once per pair of
engine inputs with :func:`rules.engine.omg.strike` itself, so the simulation rolls one d100
per strike and never re-implements the damage rules.

>>> knight = Combatant("k", "Knight", "party", spd=3, skl=4, vgr=4, melee=2, stm=7, bzf=12,
...                    vitality=11, zones=(ZoneIn("chest", arm=3),),
...                    weapons=(WeaponIn("long sword", dmg=4, dsc=2),), itv=12)
>>> thug = Combatant("t", "Thug", "foes", spd=2, skl=2, vgr=3, melee=0, stm=5, bzf=10,
...                  vitality=8, zones=(ZoneIn("chest"),),
...                  weapons=(WeaponIn("club", dmg=2),), itv=8)
>>> f = simulate([knight, thug], fights=400, seed=1)
>>> f.fights, f.party_standing > 0.9
(400, True)
>>> d = exact_duel(knight, thug)
>>> abs(d.party_standing - f.party_standing) < 0.05
True
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from rules.engine import dice, odds
from rules.engine.errors import RulesError
from rules.engine.omg_character import InitiativeEntry, initiative_order, on_alert
from rules.engine.omg_check import composite_pro
from rules.engine.omg_combat import (
    Attacker,
    Defender,
    DefenseMode,
    StrikeMode,
    strike,
)
from rules.engine.omg_wounds import vit_loss

__all__ = [
    "DEFAULT_ROUND_LIMIT",
    "STAMINA_DIFFICULTY",
    "Choice",
    "Combatant",
    "CombatantOdds",
    "Forecast",
    "GroupOdds",
    "WeaponIn",
    "ZoneIn",
    "choose",
    "exact_duel",
    "face_table",
    "simulate",
    "verdict",
    "wilson",
]

#: The fight stops after this many rounds unless told otherwise; the forecast says how often.
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
def _grouped(attacker: Attacker, defender: Defender) -> tuple[tuple[int, Face], ...]:
    """The same faces grouped: (how many of 100, face) for each distinct outcome."""
    counts: dict[Face, int] = {}
    for face in face_table(attacker, defender):
        counts[face] = counts.get(face, 0) + 1
    return tuple((n, face) for face, n in counts.items())


@lru_cache(maxsize=64)
def _stamina_passes(stm: int, difficulty: int) -> int:
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


_choose = lru_cache(maxsize=65_536)(choose)


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
class _Tally:
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


def _report(
    fighters: Sequence[Combatant], t: _Tally, *, seed: int | None, limit: int, exact: bool
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


def _validate(fighters: Sequence[Combatant], round_limit: int, stamina_difficulty: int) -> None:
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


def _entries(fighters: Sequence[Combatant], itvs: Sequence[int]) -> list[int]:
    entries = [
        InitiativeEntry(i, on_alert(itv) if c.on_alert else itv, c.spd, c.foc, i)
        for i, (c, itv) in enumerate(zip(fighters, itvs, strict=True))
    ]
    return [e.key for e in initiative_order(entries)]


def _pick_zone(zones: tuple[int, ...], wounds: Sequence[int]) -> int:
    """Of the zones the choice allows, the one with the most wounds (first on a tie): the
    seed's advice to press a zone already hurt."""
    best = zones[0]
    for z in zones[1:]:
        if wounds[z] > wounds[best]:
            best = z
    return best


# -- Simulation ---------------------------------------------------------------------------------


def simulate(
    fighters: Sequence[Combatant],
    *,
    fights: int = 10_000,
    seed: int | None = None,
    round_limit: int = DEFAULT_ROUND_LIMIT,
    stamina_difficulty: int = STAMINA_DIFFICULTY,
    rng: random.Random | None = None,
) -> Forecast:
    """Play the fight ``fights`` times (a seeded ``random.Random(seed)`` unless ``rng`` is
    given) and count what happened. See the module's example."""
    _validate(fighters, round_limit, stamina_difficulty)
    dice.require_int("fights", fights, 1, MAX_FIGHTS)
    rng = rng if rng is not None else random.Random(seed)  # noqa: S311 - a forecast, not a secret
    rand = rng.random
    n = len(fighters)
    side = [0 if c.side == "party" else 1 for c in fighters]
    foes_of = [[j for j in range(n) if side[j] != side[i]] for i in range(n)]
    bzf = [c.bzf for c in fighters]
    passes = [_stamina_passes(c.stm, stamina_difficulty) for c in fighters]
    groups = sorted({c.group for c in fighters if c.side == "foes"})
    members = {g: [i for i, c in enumerate(fighters) if c.group == g] for g in groups}
    # Each fighter's initiative entry for each face of its d10 (one when the sheet has an
    # ITV), built once: a fight only picks them and orders them by the engine's rule.
    entry_faces = [
        [
            InitiativeEntry(i, on_alert(itv) if c.on_alert else itv, c.spd, c.foc, i)
            for itv in ([c.itv] if c.itv is not None else [c.itv_base + f for f in range(1, 11)])
        ]
        for i, c in enumerate(fighters)
    ]
    rolled = [i for i, c in enumerate(fighters) if c.itv is None]
    fixed_order = None if rolled else [e.key for e in initiative_order([f[0] for f in entry_faces])]
    start_wounds = [[z.wounds for z in c.zones] for c in fighters]
    start_arms = [[z.arm for z in c.zones] for c in fighters]
    start_griev = [[z.grievous for z in c.zones] for c in fighters]
    start_weapons = [[w.dmg for w in c.arsenal] for c in fighters]
    cache: dict[
        tuple[int, tuple[int, ...], int, tuple[int, ...]], tuple[float, Choice, tuple[Face, ...]]
    ] = {}
    t = _Tally(fights)
    t.down = [0.0] * n
    t.ko = [0.0] * n
    t.grievous = [0.0] * n
    t.takedowns = [0.0] * n
    t.damage = [0.0] * n
    t.beaten = dict.fromkeys(groups, 0.0)

    # The fight's state, reset in place for each fight (the strike below reads these lists).
    vit = [0] * n
    able = [False] * n
    knocked = [False] * n
    hurt = [False] * n
    alive = [0, 0]
    wounds: list[list[int]] = []
    arms: list[list[int]] = []
    griev: list[list[bool]] = []
    astate: list[tuple[int, ...]] = []
    wdmg: list[list[int]] = []
    wstate: list[tuple[int, ...]] = []

    def act(i: int, prefer: int, counters: list[tuple[int, int]] | None) -> None:
        targets = [prefer] if prefer >= 0 and able[prefer] else [j for j in foes_of[i] if able[j]]
        best: tuple[float, Choice, tuple[Face, ...]] | None = None
        target = -1
        for j in targets:
            key = (i, wstate[i], j, astate[j])
            entry = cache.get(key)
            if entry is None:
                ch = choose(fighters[i], wstate[i], fighters[j], astate[j])
                entry = (ch.score, ch, face_table(ch.attacker, ch.defender))
                cache[key] = entry
            # Ties go to the target with the least Vitality left, then the first.
            if best is None or entry[0] > best[0] or (entry[0] == best[0] and vit[j] < vit[target]):
                best, target = entry, j
        assert best is not None
        j = target
        ch = best[1]
        zw = wounds[j]
        z = _pick_zone(ch.zones, zw)
        dmgs, wear, weapon_wear, counter = best[2][int(rand() * 100)]
        before = vit[j]
        new_grievous = False
        for d in dmgs:
            zw[z], vit[j] = wound(zw[z], d, bzf=bzf[j], vitality=vit[j])
            if not griev[j][z] and zw[z] > bzf[j]:
                griev[j][z] = new_grievous = True
        if wear:
            arms[j][z] = max(0, arms[j][z] - wear)
            astate[j] = tuple(arms[j])
        if weapon_wear:
            wdmg[i][ch.weapon] -= weapon_wear
            wstate[i] = tuple(wdmg[i])
        t.damage[i] += before - vit[j]
        if new_grievous:
            hurt[j] = True
        if vit[j] == 0:
            able[j] = False
            alive[side[j]] -= 1
            t.takedowns[i] += 1
        elif new_grievous and int(rand() * 100) >= passes[j]:
            able[j] = False
            knocked[j] = True
            alive[side[j]] -= 1
            t.takedowns[i] += 1
        elif counter and counters is not None:
            counters.append((j, i))

    for _ in range(fights):
        vit[:] = [c.vitality for c in fighters]
        able[:] = [c.able and c.vitality > 0 for c in fighters]
        knocked[:] = [not c.able and c.vitality > 0 for c in fighters]
        hurt[:] = [False] * n
        wounds[:] = [w[:] for w in start_wounds]
        arms[:] = [a[:] for a in start_arms]
        griev[:] = [g[:] for g in start_griev]
        astate[:] = [tuple(a) for a in arms]
        wdmg[:] = [w[:] for w in start_weapons]
        wstate[:] = [tuple(w) for w in wdmg]
        alive[:] = [0, 0]
        for i in range(n):
            alive[side[i]] += able[i]
        if fixed_order is not None:
            order = fixed_order
        else:
            picked = [f[0] for f in entry_faces]
            for i in rolled:
                picked[i] = entry_faces[i][dice.roll_d10(rng) - 1]
            order = [e.key for e in initiative_order(picked)]

        rnd = 0
        while alive[0] and alive[1] and rnd < round_limit:
            rnd += 1
            counters: list[tuple[int, int]] = []
            for i in order:
                if not (alive[0] and alive[1]):
                    break
                if able[i]:
                    act(i, -1, counters)
            if counters and alive[0] and alive[1]:
                # Before the round ends, in initiative order, each fighter makes the
                # counterattacks its parries earned, at the attacker it parried if that one
                # can still be hit. Parries made while countering earn none (docs/rules.md).
                for i in order:
                    for c_i, parried in counters:
                        if c_i == i and able[i] and alive[0] and alive[1]:
                            act(i, parried, None)
        t.rounds[rnd] = t.rounds.get(rnd, 0.0) + 1
        t.total += 1
        if alive[0]:
            t.standing += 1
        if not alive[1]:
            t.wins += 1
        if alive[0] and alive[1]:
            t.limit += 1
        for i in range(n):
            if vit[i] == 0:
                t.down[i] += 1
            elif knocked[i]:
                t.ko[i] += 1
            if hurt[i]:
                t.grievous[i] += 1
        for g in groups:
            if not any(able[i] for i in members[g]):
                t.beaten[g] += 1
    return _report(fighters, t, seed=seed, limit=round_limit, exact=False)


# -- The exact duel -----------------------------------------------------------------------------

#: One fighter in the exact duel: Vitality, knocked out, wounds, ARM and grievous marks per
#: zone, weapons' DMG, and whether a grievous wound was taken in this fight.
_State = tuple[int, bool, tuple[int, ...], tuple[int, ...], tuple[bool, ...], tuple[int, ...], bool]

#: The most states the exact duel keeps at once unless told (each a few hundred bytes).
MAX_DUEL_STATES = 200_000


def _start(c: Combatant) -> _State:
    return (
        c.vitality,
        not c.able,
        tuple(z.wounds for z in c.zones),
        tuple(z.arm for z in c.zones),
        tuple(z.grievous for z in c.zones),
        tuple(w.dmg for w in c.arsenal),
        False,
    )


def _able(s: _State) -> bool:
    return s[0] > 0 and not s[1]


def _strike_branches(
    att: Combatant, a: _State, dfd: Combatant, d: _State, passes: int
) -> list[tuple[float, _State, _State, bool]]:
    """Every outcome of ``att`` striking ``dfd``: (probability, attacker after, defender
    after, counterattack earned)."""
    ch = _choose(att, a[5], dfd, d[3])
    z = _pick_zone(ch.zones, d[2])
    out: list[tuple[float, _State, _State, bool]] = []
    for count, (dmgs, wear, weapon_wear, counter) in _grouped(ch.attacker, ch.defender):
        p = count / 100
        vit = d[0]
        wounds = list(d[2])
        griev = list(d[4])
        new_grievous = False
        for dmg in dmgs:
            wounds[z], vit = wound(wounds[z], dmg, bzf=dfd.bzf, vitality=vit)
            if not griev[z] and wounds[z] > dfd.bzf:
                griev[z] = new_grievous = True
        arms = list(d[3])
        arms[z] = max(0, arms[z] - wear)
        weapons = list(a[5])
        weapons[ch.weapon] -= weapon_wear
        a2 = (a[0], a[1], a[2], a[3], a[4], tuple(weapons), a[6])
        base = (vit, d[1], tuple(wounds), tuple(arms), tuple(griev), d[5], d[6] or new_grievous)
        if vit > 0 and new_grievous:
            ok = passes / 100
            if ok:
                out.append((p * ok, a2, base, counter))
            if ok < 1:
                ko = (base[0], True, *base[2:])
                out.append((p * (1 - ok), a2, ko, False))
        else:
            out.append((p, a2, base, counter and vit > 0))
    return out


def exact_duel(
    party: Combatant,
    foe: Combatant,
    *,
    round_limit: int = DEFAULT_ROUND_LIMIT,
    stamina_difficulty: int = STAMINA_DIFFICULTY,
    max_states: int | None = None,
) -> Forecast:
    """One against one, every branch walked: the same policy and rules as :func:`simulate`,
    each strike's 100 faces and each Stamina test weighed exactly. Initiative rolled for a
    fighter without an ITV is weighed over its ten faces. Meant for small cases (a few zones);
    refuses (:class:`RulesError`) once more than ``max_states`` (``MAX_DUEL_STATES`` unless
    given) are open at once."""
    limit_states = MAX_DUEL_STATES if max_states is None else max_states
    fighters = (party, foe)
    _validate(fighters, round_limit, stamina_difficulty)
    if party.side != "party" or foe.side != "foes":
        raise RulesError("the exact duel is a party member against a foe")
    passes = (
        _stamina_passes(party.stm, stamina_difficulty),
        _stamina_passes(foe.stm, stamina_difficulty),
    )
    orders: dict[tuple[int, ...], float] = {}
    faces = [
        [c.itv] if c.itv is not None else [c.itv_base + f for f in range(1, 11)] for c in fighters
    ]
    for x in faces[0]:
        for y in faces[1]:
            o = tuple(_entries(fighters, [x, y]))
            orders[o] = orders.get(o, 0.0) + 1 / (len(faces[0]) * len(faces[1]))

    t = _Tally(0)
    t.down = [0.0, 0.0]
    t.ko = [0.0, 0.0]
    t.grievous = [0.0, 0.0]
    t.takedowns = [0.0, 0.0]
    t.damage = [0.0, 0.0]
    t.beaten = {foe.group: 0.0}

    def ends(rnd: int, s: tuple[_State, _State], pv: float, limit: bool) -> None:
        """Count a fight that ends here with weight ``pv``."""
        outs = [st[0] == 0 or st[1] for st in s]
        t.total += pv
        t.standing += pv * (not outs[0])
        t.wins += pv * outs[1]
        t.limit += pv * limit
        t.rounds[rnd] = t.rounds.get(rnd, 0.0) + pv
        for i, st in enumerate(s):
            t.down[i] += pv * (st[0] == 0)
            t.ko[i] += pv * (st[0] > 0 and st[1])
            t.grievous[i] += pv * st[6]
            t.takedowns[1 - i] += pv * outs[i]
            t.damage[1 - i] += pv * (fighters[i].vitality - st[0])
        t.beaten[foe.group] += pv * outs[1]

    start = (_start(party), _start(foe))
    if not (_able(start[0]) and _able(start[1])):
        ends(0, start, 1.0, False)
    else:
        for order, weight in orders.items():
            # Walk the fight forward, merging equal states: a round is the first in
            # initiative striking, then the second, then the first's counterattacks, then
            # the second's (earned by parries in the first two steps only).
            dist: dict[tuple[tuple[int, int], tuple[_State, _State]], float] = {
                ((0, 0), start): weight
            }
            for rnd in range(1, round_limit + 1):
                for phase in range(4):
                    who = order[0] if phase in (0, 2) else order[1]
                    other = 1 - who
                    nxt: dict[tuple[tuple[int, int], tuple[_State, _State]], float] = {}
                    for (cs, st), pv in dist.items():
                        if phase >= 2 and not cs[who]:
                            nxt[(cs, st)] = nxt.get((cs, st), 0.0) + pv
                            continue
                        for p, a2, d2, counter in _strike_branches(
                            fighters[who], st[who], fighters[other], st[other], passes[other]
                        ):
                            st2 = (a2, d2) if who == 0 else (d2, a2)
                            if not _able(d2):
                                ends(rnd, st2, pv * p, False)
                                continue
                            cs2 = cs
                            if counter and phase < 2:
                                cs2 = (1, cs[1]) if other == 0 else (cs[0], 1)
                            nxt[(cs2, st2)] = nxt.get((cs2, st2), 0.0) + pv * p
                    dist = nxt
                    if len(dist) > limit_states:
                        raise RulesError("this duel has too many states to walk exactly")
                merged: dict[tuple[tuple[int, int], tuple[_State, _State]], float] = {}
                for (_, st), pv in dist.items():
                    merged[((0, 0), st)] = merged.get(((0, 0), st), 0.0) + pv
                dist = merged
            for (_, st), pv in dist.items():
                ends(round_limit, st, pv, True)
    return _report(fighters, t, seed=None, limit=round_limit, exact=True)
