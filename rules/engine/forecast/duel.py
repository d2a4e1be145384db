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
    seconds (wall clock, looked at every few hundred states; no limit unless given)."""
    limit_states = MAX_DUEL_STATES if max_states is None else max_states
    if budget is not None and not budget >= 0:
        raise RulesError(f"the duel's time budget is a number of seconds, got {budget!r}")
    deadline = None if budget is None else time.perf_counter() + budget
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
        if deadline is not None and time.perf_counter() > deadline:
            raise DuelAbandoned(f"this duel takes more than {budget:g} s to walk exactly")

    # The fights that ended, merged by (round, limit reached, state): counted once at the end.
    ended: dict[tuple[int, bool, tuple[_State, _State]], float] = {}
    # A strike's outcomes depend on the attacker's weapons and the defender only: computed
    # once for each (striker, weapons, defender) met, not once for each state holding them.
    branches: dict[tuple[int, tuple[int, ...], _State], list[_Branch]] = {}

    start = (_start(party), _start(foe))
    if not (_able(start[0]) and _able(start[1])):
        ended[(0, False, start)] = 1.0
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
                    for seen, ((cs, st), pv) in enumerate(dist.items()):
                        if phase >= 2 and not cs[who]:
                            nxt[(cs, st)] = nxt.get((cs, st), 0.0) + pv
                            continue
                        if not seen % _CLOCK_EVERY:
                            over_time()
                        a, d = st[who], st[other]
                        key = (who, a[5], d)
                        outcomes = branches.get(key)
                        if outcomes is None:
                            outcomes = _strike_branches(
                                fighters[who], a[5], fighters[other], d, passes[other]
                            )
                            branches[key] = outcomes
                        for p, worn, d2, counter in outcomes:
                            a2 = a if worn is None else (*a[:5], worn, a[6])
                            st2 = (a2, d2) if who == 0 else (d2, a2)
                            if not _able(d2):
                                k = (rnd, False, st2)
                                ended[k] = ended.get(k, 0.0) + pv * p
                                continue
                            cs2 = cs
                            if counter and phase < 2:
                                cs2 = (1, cs[1]) if other == 0 else (cs[0], 1)
                            nxt[(cs2, st2)] = nxt.get((cs2, st2), 0.0) + pv * p
                    dist = nxt
                    if len(dist) > limit_states:
                        raise DuelAbandoned("this duel has too many states to walk exactly")
                    over_time()
                merged: dict[tuple[tuple[int, int], tuple[_State, _State]], float] = {}
                for (_, st), pv in dist.items():
                    merged[((0, 0), st)] = merged.get(((0, 0), st), 0.0) + pv
                dist = merged
                if len(branches) > limit_states:
                    branches.clear()  # memory stays bounded; they are recomputed if met again
            for (_, st), pv in dist.items():
                k = (round_limit, True, st)
                ended[k] = ended.get(k, 0.0) + pv

    t = Tally(0)
    t.down = [0.0, 0.0]
    t.ko = [0.0, 0.0]
    t.grievous = [0.0, 0.0]
    t.takedowns = [0.0, 0.0]
    t.damage = [0.0, 0.0]
    t.beaten = {foe.group: 0.0}
    for (rnd, limit, pair), pv in ended.items():
        # Count the fights that end in this state, with their weight ``pv``.
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
