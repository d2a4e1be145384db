"""The exact duel: one against one, every branch of the fight walked and weighed (the same
policy and rules as the simulation, docs/rules.md "The fight forecast")."""

from __future__ import annotations

from collections.abc import Sequence

from rules.engine.errors import RulesError
from rules.engine.forecast.fight import (
    DEFAULT_ROUND_LIMIT,
    STAMINA_DIFFICULTY,
    Combatant,
    Forecast,
    Tally,
    cached_choose,
    grouped_faces,
    pick_zone,
    report,
    stamina_passes,
    validate,
    wound,
)
from rules.engine.omg_character import InitiativeEntry, initiative_order, on_alert


def _entries(fighters: Sequence[Combatant], itvs: Sequence[int]) -> list[int]:
    entries = [
        InitiativeEntry(i, on_alert(itv) if c.on_alert else itv, c.spd, c.foc, i)
        for i, (c, itv) in enumerate(zip(fighters, itvs, strict=True))
    ]
    return [e.key for e in initiative_order(entries)]


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
    ch = cached_choose(att, a[5], dfd, d[3])
    z = pick_zone(ch.zones, d[2])
    out: list[tuple[float, _State, _State, bool]] = []
    for count, (dmgs, wear, weapon_wear, counter) in grouped_faces(ch.attacker, ch.defender):
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
    validate(fighters, round_limit, stamina_difficulty)
    if party.side != "party" or foe.side != "foes":
        raise RulesError("the exact duel is a party member against a foe")
    passes = (
        stamina_passes(party.stm, stamina_difficulty),
        stamina_passes(foe.stm, stamina_difficulty),
    )
    orders: dict[tuple[int, ...], float] = {}
    faces = [
        [c.itv] if c.itv is not None else [c.itv_base + f for f in range(1, 11)] for c in fighters
    ]
    for x in faces[0]:
        for y in faces[1]:
            o = tuple(_entries(fighters, [x, y]))
            orders[o] = orders.get(o, 0.0) + 1 / (len(faces[0]) * len(faces[1]))

    t = Tally(0)
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
    return report(fighters, t, seed=None, limit=round_limit, exact=True)
