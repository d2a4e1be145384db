"""The forecast by simulation: the fight played many times, one d100 per strike read from its
table of faces (docs/rules.md, "The fight forecast")."""

from __future__ import annotations

import random
from collections.abc import Sequence

from rules.engine import dice
from rules.engine.forecast.fight import (
    DEFAULT_ROUND_LIMIT,
    MAX_FIGHTS,
    STAMINA_DIFFICULTY,
    Choice,
    Combatant,
    Face,
    Forecast,
    Tally,
    choose,
    face_table,
    pick_zone,
    report,
    stamina_passes,
    validate,
    wound,
)
from rules.engine.omg_character import InitiativeEntry, initiative_order, on_alert


def simulate(
    fighters: Sequence[Combatant],
    *,
    fights: int = 10_000,
    seed: int | None = None,
    round_limit: int = DEFAULT_ROUND_LIMIT,
    stamina_difficulty: int = STAMINA_DIFFICULTY,
    rng: random.Random | None = None,
    max_work: int | None = None,
) -> Forecast:
    """Play the fight ``fights`` times (a seeded ``random.Random(seed)`` unless ``rng`` is
    given) and count what happened. See the module's example.

    ``max_work`` bounds the time without the clock: each strike counts one, plus one for
    each foe it weighs as a target, plus one per fight. Once a fight ends past that count,
    no further fight is played and the forecast reports the fights played (``fights`` less
    than asked). The count follows from the seed alone, so the answer stays reproducible."""
    validate(fighters, round_limit, stamina_difficulty)
    dice.require_int("fights", fights, 1, MAX_FIGHTS)
    if max_work is not None:
        dice.require_int("work budget", max_work, 1, 10**12)
    work = 0
    rng = rng if rng is not None else random.Random(seed)  # noqa: S311 - a forecast, not a secret
    rand = rng.random
    n = len(fighters)
    side = [0 if c.side == "party" else 1 for c in fighters]
    foes_of = [[j for j in range(n) if side[j] != side[i]] for i in range(n)]
    bzf = [c.bzf for c in fighters]
    passes = [stamina_passes(c.stm, stamina_difficulty) for c in fighters]
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
    t = Tally(fights)
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

    def act(i: int, prefer: int, counters: list[tuple[int, int]] | None) -> int:
        """One strike of ``i``; returns its work (1 + the targets weighed)."""
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
        z = pick_zone(ch.zones, zw)
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
        return 1 + len(targets)

    played = 0
    while played < fights and (max_work is None or work <= max_work):
        played += 1
        work += 1
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
                    work += act(i, -1, counters)
            if counters and alive[0] and alive[1]:
                # Before the round ends, in initiative order, each fighter makes the
                # counterattacks its parries earned, at the attacker it parried if that one
                # can still be hit. Parries made while countering earn none (docs/rules.md).
                for i in order:
                    for c_i, parried in counters:
                        if c_i == i and able[i] and alive[0] and alive[1]:
                            work += act(i, parried, None)
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
    t.n = played
    return report(fighters, t, seed=seed, limit=round_limit, exact=False)
