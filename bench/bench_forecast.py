"""Speed of the fight forecast (rules/engine/forecast.py). Run by hand:
``.venv/bin/python bench/bench_forecast.py [fights]``.

Four characters against six starter thugs (the library's stat block: hatchet, padded chest
and abdomen, no Melee Combat), 10,000 fights unless told: the goal is 2 seconds or less on
one core. Printed: wall and CPU seconds (median of three runs, after one warm-up that fills
the caches), the page's first look (1,000 fights) cold and warm, the exact duel of one case,
and every figure as a ratio to the engine's raw check rate measured in the same run (these
machines are shared and noisy: the ratio travels better than the seconds).
"""

from __future__ import annotations

import functools
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rules.engine import forecast, omg  # noqa: E402 - the path above makes the repo importable
from rules.engine.forecast import Combatant, WeaponIn, ZoneIn, fight  # noqa: E402

GOAL_SECONDS = 2.0


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


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def main(argv: list[str]) -> None:
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


if __name__ == "__main__":
    main(sys.argv[1:])
