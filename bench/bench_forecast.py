"""Speed of the fight forecast (rules/engine/forecast/). Run by hand:
``.venv/bin/python bench/bench_forecast.py [fights] [--unbounded]``.

Four characters against six starter thugs (the library's stat block: hatchet, padded chest
and abdomen, no Melee Combat), 10,000 fights unless told: the goal is 2 seconds or less on
one core. Printed: wall and CPU seconds (median of three runs, after one warm-up that fills
the caches), the page's first look (1,000 fights) cold and warm, and every figure as a ratio
to the engine's raw check rate measured in the same run (these machines are shared and noisy:
the ratio travels better than the seconds).

Then the worst cases one forecast request can ask for, each bounded as prep/forecast.py
bounds it (its figures are repeated below: the bench imports no Django), against the budget
docs/rules.md states (GOAL_SECONDS of CPU, given in raw checks too): 30 fighters at the cap
on fights, 30 fighters in plate whose fights last (stopped by the work budget), the duel
whose block wears the attacker's weapon, the slowest duel of the starter stat blocks, and a
duel too big to walk (given up at its time budget, then sampled). ``--unbounded`` plays
them as they were before the bounds (20,000 fights, no work budget, no duel budget): the
"before" of the table in docs/rules.md.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rules.engine import forecast, omg  # noqa: E402 - the path above makes the repo importable
from rules.engine.errors import RulesError  # noqa: E402
from rules.engine.forecast import Combatant, WeaponIn, ZoneIn, fight  # noqa: E402

#: The budget of one forecast request (docs/rules.md, "The fight forecast"): CPU seconds on
#: one core of this machine.
GOAL_SECONDS = 2.0
# The bounds of prep/forecast.py (FIGHTS, MAX_FIGHTS, MAX_FIGHTER_FIGHTS, DUEL_BUDGET,
# DUEL_STATES, SIM_WORK); tests/prep/test_forecast.py checks that they agree.
FIGHTS = 10_000
MAX_FIGHTS = 20_000
MAX_FIGHTER_FIGHTS = 100_000
DUEL_BUDGET = 1.0
DUEL_STATES = 20_000
SIM_WORK = 1_500_000


def _zones(armor: dict[str, int]) -> tuple[ZoneIn, ...]:
    return tuple(ZoneIn(z, arm=armor.get(z, 0)) for z in omg.DEFAULT_ZONES)


def _weapon(name: str, dsc: int) -> WeaponIn:
    spec = omg.WEAPONS_BY_NAME[name]
    return WeaponIn(spec.name, dmg=spec.dmg, dsc=dsc)


def party() -> list[Combatant]:
    def pc(
        key: str, apts: tuple[int, ...], melee: int, weapon: WeaponIn, **kw: object
    ) -> Combatant:
        foc, spd, skl, vgr, nrv, _chr, svy = apts
        return Combatant(
            key,
            key.capitalize(),
            "party",
            spd=spd,
            skl=skl,
            vgr=vgr,
            melee=melee,
            stm=nrv + vgr,
            bzf=12,
            vitality=foc + nrv + vgr,
            weapons=(weapon,),
            itv_base=foc + spd + svy,
            foc=foc,
            **kw,  # type: ignore[arg-type]  # per-case settings
        )

    leather = _zones({"chest": 2, "abdomen": 2, "head": 3})
    return [
        pc("ysolde", (3, 3, 4, 3, 3, 2, 2), 2, _weapon("Long Sword", 2), zones=leather, itv=12),
        pc("bram", (2, 2, 3, 4, 3, 2, 2), 1, _weapon("Battle Axe", 2), zones=leather),
        pc("wren", (3, 4, 3, 2, 2, 3, 3), 1, _weapon("Dagger or Bowie", 2), zones=_zones({})),
        pc("odo", (4, 2, 2, 2, 3, 3, 4), 0, _weapon("Staff", 1), zones=_zones({}), itv=9),
    ]


def thugs(n: int = 6) -> list[Combatant]:
    # The starter Thug: FOC 1 SPD 2 SKL 3 VGR 4 NRV 2 SVY 2, 182 lb (BZF 13), VIT 7.
    return [
        Combatant(
            f"thug-{i}",
            f"Thug {i}",
            "foes",
            spd=2,
            skl=3,
            vgr=4,
            melee=0,
            stm=6,
            bzf=13,
            vitality=7,
            zones=_zones({"chest": 1, "abdomen": 1}),
            weapons=(_weapon("Hatchet", 2),),
            itv_base=5,
            foc=1,
            group="thug",
            group_name="Thug",
        )
        for i in range(1, n + 1)
    ]


def copies(fighters: list[Combatant], n: int) -> list[Combatant]:
    """``n`` fighters cycling through ``fighters``, each with its own key."""
    return [
        dataclasses.replace(c, key=f"{c.key}-{i}", name=f"{c.name} {i}")
        for i, c in ((i, fighters[i % len(fighters)]) for i in range(n))
    ]


def knights(n: int, side: str) -> list[Combatant]:
    """Plate everywhere and a dagger: fights that last (median 11 rounds)."""
    plate = tuple(ZoneIn(z, arm=omg.ARMORS_BY_NAME["Plate mail"].arm) for z in omg.DEFAULT_ZONES)
    return [
        Combatant(
            f"{side}-knight-{i}",
            f"Knight {i}",
            side,
            spd=3,
            skl=3,
            vgr=3,
            melee=3,
            stm=7,
            bzf=14,
            vitality=12,
            zones=plate,
            weapons=(_weapon("Dagger or Bowie", 1),),
            itv_base=7,
            group=f"{side}-knights",
            group_name="Knight",
        )
        for i in range(1, n + 1)
    ]


def veteran() -> Combatant:
    """The starter Veteran: chain and ring mail, long sword (mastery 3) and dagger."""
    armor = {
        "head": "Ring mail",
        "chest": "Chain mail",
        "abdomen": "Chain mail",
        "left arm": "Studded Leather",
        "right arm": "Studded Leather",
        "left leg": "Boiled Leather",
        "right leg": "Boiled Leather",
    }
    return Combatant(
        "veteran",
        "Veteran",
        "foes",
        spd=3,
        skl=4,
        vgr=3,
        melee=2,
        stm=6,
        bzf=14,
        vitality=8,
        zones=_zones({z: omg.ARMORS_BY_NAME[a].arm for z, a in armor.items()}),
        weapons=(_weapon("Long Sword", 3), _weapon("Dagger or Bowie", 0)),
        itv_base=7,
        foc=2,
    )


def max_fights(fighters: int) -> int:
    return max(1, min(MAX_FIGHTS, MAX_FIGHTER_FIGHTS // fighters))


def _supports(fn: Callable[..., object], name: str) -> bool:
    return name in inspect.signature(fn).parameters


def forecast_request(fighters: list[Combatant], *, bounded: bool) -> str:
    """What prep/forecast.py does for one request without a cache (default fights and seed):
    a duel walked exactly within its budget, else the fights played within theirs. Returns
    how it answered."""
    n = len(fighters)
    if n == 2:
        kw: dict[str, object] = {"max_states": DUEL_STATES}
        if bounded:
            kw["budget"] = DUEL_BUDGET
        try:
            return f"exact ({forecast.exact_duel(fighters[0], fighters[1], **kw).fights})"  # type: ignore[arg-type]  # the keywords above
        except RulesError as exc:
            why = str(exc)
    else:
        why = ""
    fights = min(FIGHTS, max_fights(n)) if bounded else MAX_FIGHTS if n > 2 else FIGHTS
    sim_kw: dict[str, object] = {}
    if bounded and _supports(forecast.simulate, "max_work"):
        sim_kw["max_work"] = SIM_WORK
    f = forecast.simulate(fighters, fights=fights, seed=1, **sim_kw)  # type: ignore[arg-type]  # the keyword above
    return f"sampled ({f.fights} fights{'; duel: ' + why if why else ''})"


def worst_cases() -> list[tuple[str, list[Combatant]]]:
    ysolde, _bram, wren, _odo = party()
    (thug,) = thugs(1)
    giant_thug = dataclasses.replace(thug, vitality=60, bzf=40)
    return [
        ("30 fighters: 15 characters v 15 thugs", copies(party(), 15) + thugs(15)),
        ("30 fighters in plate, 15 v 15 (long fights)", knights(15, "party") + knights(15, "foes")),
        ("duel: Ysolde v a thug whose block wears her sword", [ysolde, thug]),
        ("duel: Wren v the veteran (slowest starter duel)", [wren, veteran()]),
        (
            "duel too big to walk: VIT 60 v VIT 60",
            [dataclasses.replace(ysolde, vitality=60, bzf=40), giant_thug],
        ),
    ]


def report_worst(check_rate: float, *, bounded: bool) -> bool:
    """Print the worst cases; True when every one stays within the budget."""
    budget_checks = GOAL_SECONDS * check_rate
    within = True
    print()
    print("worst cases of one request, as prep/forecast.py plays them", end="")
    print(" (bounded):" if bounded else " (UNBOUNDED: 20,000 fights, no budgets):")
    print(f"  budget {GOAL_SECONDS} s CPU = {budget_checks / 1e6:6.2f} M raw checks in this run")
    for label, fighters in worst_cases():
        forecast.face_table.cache_clear()
        fight.cached_choose.cache_clear()
        start = time.process_time()
        how = forecast_request(fighters, bounded=bounded)
        cpu = time.process_time() - start
        checks = cpu * check_rate
        verdict = "within" if checks <= budget_checks else "OVER"
        within = within and checks <= budget_checks
        print(f"  {label:50s} {cpu:6.2f} s = {checks / 1e6:6.2f} M checks ", end="")
        print(f"= {checks / budget_checks:5.2f} x budget ({verdict}); {how}")
    return within


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def main(argv: list[str]) -> int:
    bounded = "--unbounded" not in argv
    argv = [a for a in argv if a != "--unbounded"]
    fights = int(argv[0]) if argv else 10_000
    fighters = party() + thugs()
    rng = random.Random(2024)
    rolls = [rng.randint(1, 100) for _ in range(200_000)]
    start = time.process_time()
    for r in rolls:
        omg.check(70, 20, r)
    check_rate = len(rolls) / (time.process_time() - start)

    forecast.face_table.cache_clear()
    fight.cached_choose.cache_clear()
    cold = timed(lambda: forecast.simulate(fighters, fights=1_000, seed=1))
    warm = timed(lambda: forecast.simulate(fighters, fights=1_000, seed=2))
    runs = []
    for seed in (3, 4, 5):
        runs.append(timed(functools.partial(forecast.simulate, fighters, fights=fights, seed=seed)))
    wall = statistics.median(r[0] for r in runs)
    cpu = statistics.median(r[1] for r in runs)
    result = forecast.simulate(fighters, fights=fights, seed=3)

    a, b = party()[0], thugs(1)[0]
    duel = timed(lambda: forecast.exact_duel(a, b, round_limit=8))

    print(f"python {sys.version.split()[0]}")
    print(f"baseline: omg.check, given roll   {check_rate:12,.0f} /s (CPU)")
    print(f"{fights} fights, 4 characters v 6 thugs:")
    print(f"  wall {wall:6.3f} s   CPU {cpu:6.3f} s   goal {GOAL_SECONDS} s on one core: ", end="")
    print("met" if cpu <= GOAL_SECONDS else "MISSED")
    per_fight = check_rate * cpu / fights
    print(f"  {fights / cpu:10,.0f} fights/s; one fight costs {per_fight:6.1f} raw checks")
    print(f"  = {check_rate * cpu:12,.0f} raw checks for the whole forecast")
    print(f"page's first look, 1000 fights: cold {cold[1] * 1000:6.1f} ms CPU, ", end="")
    print(f"warm {warm[1] * 1000:6.1f} ms CPU")
    print(f"  = {check_rate * cold[1]:10,.0f} / {check_rate * warm[1]:10,.0f} raw checks")
    print(f"exact duel (Ysolde v one thug, 8 rounds): {duel[1]:6.3f} s CPU")
    print(f"verdict: {result.verdict}; party standing {result.party_standing:.1%}, ", end="")
    print(f"rounds {result.rounds_median:.0f}")
    # Bounded, a worst case over the budget fails the run (``make bench`` says so).
    return 0 if report_worst(check_rate, bounded=bounded) or not bounded else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
