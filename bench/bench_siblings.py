"""Speed of the sibling systems' exact odds.

Run by hand: ``.venv/bin/python bench/bench_siblings.py``.

For each check the odds are timed cold (memo caches cleared, first call) and warm (answered
from the cache), as median milliseconds. Targets: ORE 10d10 best set under 5 ms warm, every
other check under 10 ms warm. Also prints how many rolls per second each engine reads.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rules.engine import ogs, okrpg, ore, sds  # noqa: E402 - the path above makes the repo importable

REPEAT = 7


def clear_caches() -> None:
    for fn in (
        ogs._check_odds,
        ogs._total_weights,
        ogs._sorted_weights,
        ogs._opposed_odds,
        okrpg.tide_odds,
        ore._best_odds,
        ore._contest_odds,
        ore._sets_odds,
        sds._odds,
    ):
        fn.cache_clear()


def median_ms(fn: Callable[[], object], *, cold: bool) -> float:
    times = []
    for _ in range(REPEAT):
        if cold:
            clear_caches()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def per_second(fn: Callable[[random.Random], object], n: int = 20_000) -> float:
    rng = random.Random(2024)
    start = time.perf_counter()
    for _ in range(n):
        fn(rng)
    return n / (time.perf_counter() - start)


CASES: list[tuple[str, float, Callable[[], object]]] = [
    ("ORE 10d10 best set", 5, lambda: ore.pool_odds(ore.OrePool(10))),
    (
        "ORE 10d10 master die, difficulty 6",
        10,
        lambda: ore.pool_odds(ore.OrePool(10, master=True), 6),
    ),
    ("ORE 9d10 + expert 10", 10, lambda: ore.pool_odds(ore.OrePool(10, expert=10))),
    ("ORE contest 10d vs 10d", 10, lambda: ore.contest_odds(ore.OrePool(10), ore.OrePool(10))),
    (
        "ORE 10d10 set count (several actions)",
        10,
        lambda: ore.sets_odds(ore.OrePool(10, master=True), 4),
    ),
    (
        "OGS check d4+d8+d8 vs 8",
        10,
        lambda: ogs.check_odds(ogs.ActionCheck((4, 8, 8)), 8),
    ),
    (
        "OGS check 6d12 reroll ones vs 30",
        10,
        lambda: ogs.check_odds(ogs.ActionCheck((12,) * 6, reroll_ones=True), 30),
    ),
    (
        "OGS opposed d4+d8+d8 vs 3d6",
        10,
        lambda: ogs.opposed_odds(ogs.ActionCheck((4, 8, 8)), ogs.ActionCheck((6, 6, 6))),
    ),
    (
        "OGS opposed 6d12 vs 6d12",
        10,
        lambda: ogs.opposed_odds(ogs.ActionCheck((12,) * 6), ogs.ActionCheck((12,) * 6)),
    ),
    ("OGS open 10d10", 10, lambda: ogs.open_odds([10] * 10)),
    ("OK RPG Tide, worse of two", 10, lambda: okrpg.tide_odds("worse")),
    (
        "SDS skill 8 vs d10",
        10,
        lambda: sds.check_odds(sds.SkillCheck(8), sds.Difficulty(die=10)),
    ),
    (
        "SDS skill 100 unskilled vs d100",
        10,
        lambda: sds.check_odds(sds.SkillCheck(100, unskilled=True), sds.Difficulty(die=100)),
    ),
]


def main() -> None:
    print(f"{'exact odds':40} {'cold ms':>9} {'warm ms':>9} {'target':>7}")
    worst = True
    for name, target, fn in CASES:
        cold = median_ms(fn, cold=True)
        fn()
        warm = median_ms(fn, cold=False)
        ok = warm < target
        worst = worst and ok
        print(f"{name:40} {cold:9.3f} {warm:9.4f} {'<' + str(target):>7} {'ok' if ok else 'SLOW'}")
    print()
    check = ogs.ActionCheck((4, 8, 8), reroll_ones=True)
    pool = ore.OrePool(10, master=True)
    skill, gm = sds.SkillCheck(8, mod=1), sds.Difficulty(die=10)
    rates = [
        ("OGS action check", per_second(lambda r: ogs.roll_check(check, difficulty=8, rng=r))),
        ("ORE 10d10 with master die", per_second(lambda r: ore.roll(pool, rng=r))),
        ("SDS skill roll", per_second(lambda r: sds.check(skill, gm, rng=r))),
        ("OK RPG damage", per_second(lambda r: okrpg.damage("Grt", "Avg+", "cutting"))),
    ]
    for name, rate in rates:
        print(f"{name:40} {rate:12,.0f} rolls/s")
    print()
    print("all warm targets met" if worst else "SOME WARM TARGETS MISSED")


if __name__ == "__main__":
    main()
