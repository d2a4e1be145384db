"""The exact duel: one against one, every branch of the fight walked and weighed (the same
policy and rules as the simulation, docs/rules.md "The fight forecast")."""

from __future__ import annotations

import time
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

#: How many states the walk handles between two looks at the clock.
_CLOCK_EVERY = 512


class DuelAbandoned(RulesError):
    """The exact duel gave up: too many states open at once, or past its time budget. The
    caller plays the fights instead (docs/rules.md, "The fight forecast")."""


#: One outcome of a strike: probability, the attacker's weapons after it (None: unchanged),
#: the defender after it, and whether a counterattack was earned.
_Branch = tuple[float, tuple[int, ...] | None, _State, bool]


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
    att: Combatant, weapons: tuple[int, ...], dfd: Combatant, d: _State, passes: int
) -> list[_Branch]:
    """Every outcome of ``att`` (weapons at ``weapons``) striking ``dfd``. They depend on
    nothing else of the attacker's, so the walk computes them once per pair of these."""
    ch = cached_choose(att, weapons, dfd, d[3])
    z = pick_zone(ch.zones, d[2])
    out: list[_Branch] = []
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
        worn: tuple[int, ...] | None = None
        if weapon_wear:
            worn_list = list(weapons)
            worn_list[ch.weapon] -= weapon_wear
            worn = tuple(worn_list)
        base = (vit, d[1], tuple(wounds), tuple(arms), tuple(griev), d[5], d[6] or new_grievous)
        if vit > 0 and new_grievous:
            ok = passes / 100
            if ok:
                out.append((p * ok, worn, base, counter))
            if ok < 1:
                ko = (base[0], True, *base[2:])
                out.append((p * (1 - ok), worn, ko, False))
        else:
            out.append((p, worn, base, counter and vit > 0))
    return out


#: A strike's outcome in the walk: (probability, the attacker's weapons after it or None, the
#: defender's state id after it, whether that one can still act, counterattack earned).
_Outcome = tuple[float, tuple[int, ...] | None, int, bool, bool]

#: The walk's states: (counterattacks owed, a bit per fighter; the party member's state id;
#: the foe's state id) -> weight. Each fighter's state is interned as a small int, so a key
#: hashes three ints rather than two nested tuples of a dozen fields.
_Dist = dict[tuple[int, int, int], float]


def _cleared(dist: _Dist) -> _Dist:
    """The same states with no counterattack left to make (equal ones merged)."""
    if not any(cs for cs, _, _ in dist):
        return dist
    out: _Dist = {}
    for (_, i0, i1), pv in dist.items():
        out[(0, i0, i1)] = out.get((0, i0, i1), 0.0) + pv
    return out


def exact_duel(
    party: Combatant,
    foe: Combatant,
    *,
    round_limit: int = DEFAULT_ROUND_LIMIT,
    stamina_difficulty: int = STAMINA_DIFFICULTY,
    max_states: int | None = None,
    budget: float | None = None,
) -> Forecast:
    """One against one, every branch walked: the same policy and rules as :func:`simulate`,
    each strike's 100 faces and each Stamina test weighed exactly. Initiative rolled for a
    fighter without an ITV is weighed over its ten faces. Meant for small cases (a few zones);
    gives up (:class:`DuelAbandoned`, a :class:`RulesError`) once more than ``max_states``
    (``MAX_DUEL_STATES`` unless given) are open at once, or once it has run ``budget``
    seconds of CPU in the calling thread (``time.thread_time``: the work itself, however
    busy the machine; looked at every few hundred states; no limit unless given)."""
    limit_states = MAX_DUEL_STATES if max_states is None else max_states
    if budget is not None and not budget >= 0:
        raise RulesError(f"the duel's time budget is a number of seconds, got {budget!r}")
    deadline = None if budget is None else time.thread_time() + budget
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

    def over_time() -> None:
        if deadline is not None and time.thread_time() > deadline:
            raise DuelAbandoned(f"this duel takes more than {budget:g} s of CPU to walk exactly")

    # Each fighter's states, interned: ids[state] is its index in ``table``.
    ids: dict[_State, int] = {}
    table: list[_State] = []

    def intern(state: _State) -> int:
        found = ids.get(state)
        if found is None:
            found = ids[state] = len(table)
            table.append(state)
        return found

    # A strike's outcomes depend on the attacker's weapons and the defender only: computed
    # once for each (striker, weapons, defender) met, not once for each state holding them.
    branches: dict[tuple[int, tuple[int, ...], int], list[_Outcome]] = {}
    rewear: dict[tuple[int, tuple[int, ...]], int] = {}
    # The fights that ended, merged by (round, limit reached, party id, foe id).
    ended: dict[tuple[int, bool, int, int], float] = {}

    start = (intern(_start(party)), intern(_start(foe)))
    if not (_able(table[start[0]]) and _able(table[start[1]])):
        ended[(0, False, *start)] = 1.0
    else:
        for order, weight in orders.items():
            # Walk the fight forward, merging equal states: a round is the first in
            # initiative striking, then the second, then the first's counterattacks, then
            # the second's (earned by parries in the first two steps only).
            dist: _Dist = {(0, *start): weight}
            for rnd in range(1, round_limit + 1):
                for phase in range(4):
                    who = order[0] if phase in (0, 2) else order[1]
                    other = 1 - who
                    bit = 1 << who
                    if phase >= 2 and not any(cs & bit for cs, _, _ in dist):
                        # Nobody has a counterattack to make: the states stay as they are
                        # (after the last step, with the counters cleared for the next round).
                        if phase == 3:
                            dist = _cleared(dist)
                        continue
                    nxt: _Dist = {}
                    for seen, ((cs, i0, i1), pv) in enumerate(dist.items()):
                        if phase >= 2 and not cs & bit:
                            k2 = (0, i0, i1) if phase == 3 else (cs, i0, i1)
                            nxt[k2] = nxt.get(k2, 0.0) + pv
                            continue
                        if not seen % _CLOCK_EVERY:
                            over_time()
                        ai, di = (i0, i1) if who == 0 else (i1, i0)
                        weapons = table[ai][5]
                        key = (who, weapons, di)
                        outcomes = branches.get(key)
                        if outcomes is None:
                            walked = _strike_branches(
                                fighters[who], weapons, fighters[other], table[di], passes[other]
                            )
                            outcomes = [
                                (p, worn, intern(d2), _able(d2), counter)
                                for p, worn, d2, counter in walked
                            ]
                            branches[key] = outcomes
                        for p, worn, d2i, d2_able, counter in outcomes:
                            a2i = ai
                            if worn is not None:
                                found = rewear.get((ai, worn))
                                if found is None:
                                    a = table[ai]
                                    found = rewear[(ai, worn)] = intern((*a[:5], worn, a[6]))
                                a2i = found
                            j0, j1 = (a2i, d2i) if who == 0 else (d2i, a2i)
                            if not d2_able:
                                e = (rnd, False, j0, j1)
                                ended[e] = ended.get(e, 0.0) + pv * p
                                continue
                            if phase == 3:
                                cs2 = 0  # the round is over: counters cleared
                            elif counter and phase < 2:
                                cs2 = cs | 1 << other
                            else:
                                cs2 = cs
                            k2 = (cs2, j0, j1)
                            nxt[k2] = nxt.get(k2, 0.0) + pv * p
                    dist = nxt
                    if len(dist) > limit_states:
                        raise DuelAbandoned("this duel has too many states to walk exactly")
                    over_time()
                if len(branches) > limit_states:
                    branches.clear()  # memory stays bounded; they are recomputed if met again
            for (_, i0, i1), pv in dist.items():
                e = (round_limit, True, i0, i1)
                ended[e] = ended.get(e, 0.0) + pv

    t = Tally(0)
    t.down = [0.0, 0.0]
    t.ko = [0.0, 0.0]
    t.grievous = [0.0, 0.0]
    t.takedowns = [0.0, 0.0]
    t.damage = [0.0, 0.0]
    t.beaten = {foe.group: 0.0}
    for (rnd, limit, i0, i1), pv in ended.items():
        # Count the fights that end in this state, with their weight ``pv``.
        pair = (table[i0], table[i1])
        outs = [one[0] == 0 or one[1] for one in pair]
        t.total += pv
        t.standing += pv * (not outs[0])
        t.wins += pv * outs[1]
        t.limit += pv * limit
        t.rounds[rnd] = t.rounds.get(rnd, 0.0) + pv
        for i, one in enumerate(pair):
            t.down[i] += pv * (one[0] == 0)
            t.ko[i] += pv * (one[0] > 0 and one[1])
            t.grievous[i] += pv * one[6]
            t.takedowns[1 - i] += pv * outs[i]
            t.damage[1 - i] += pv * (fighters[i].vitality - one[0])
        t.beaten[foe.group] += pv * outs[1]
    return report(fighters, t, seed=None, limit=round_limit, exact=True)
