"""In-process speed of the OMG rules engine. Run by hand: ``.venv/bin/python bench/bench_rules.py``.

Measures checks and strikes resolved per second, and the exact-odds queries cold (caches
cleared, first call) and warm (cached). The HTTP side of the benchmark lives elsewhere.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rules.engine import odds, omg  # noqa: E402 - the path above makes the repo importable

N = 200_000


def per_second(fn: Callable[[int], object], n: int = N) -> float:
    start = time.perf_counter()
    for i in range(n):
        fn(i)
    return n / (time.perf_counter() - start)


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def clear_caches() -> None:
    odds._check_odds.cache_clear()
    odds.strike_odds.cache_clear()


def main() -> None:
    rng = random.Random(2024)
    rolls = [rng.randint(1, 100) for _ in range(N)]
    attacker = omg.Attacker(omg.StrikeMode.FAST, 3, 3, 4)
    defender = omg.Defender(omg.DefenseMode.DODGE, 3, 2, 2)

    # Baseline, same run: a d100 from the same RNG and a tiny pure-Python function of it. Every
    # figure below is also printed as a ratio to these (these machines are noisy).
    base_rate = per_second(lambda i: rng.randint(1, 100))
    base_call = timed(lambda: min(max(rolls[7], 1), 100), 20_000)
    given = per_second(lambda i: omg.check(70, 20, rolls[i]))
    fast = per_second(lambda i: omg.check(70, 20, rolls[i], fast=True))
    rolled = per_second(lambda i: omg.check(70, 20, rng=rng))
    strikes = per_second(lambda i: omg.strike(attacker, defender, rolls[i]), N // 4)

    def cold_check() -> None:
        clear_caches()
        odds.check_odds(70, 20)

    def cold_strike() -> None:
        clear_caches()
        odds.strike_odds(attacker, defender)

    cold_c = timed(cold_check, 200)
    cold_s = timed(cold_strike, 200)
    odds.check_odds(70, 20)
    odds.strike_odds(attacker, defender)
    warm_c = timed(lambda: odds.check_odds(70, 20), 20_000)
    warm_s = timed(lambda: odds.strike_odds(attacker, defender), 20_000)

    def us(samples: list[float]) -> str:
        return (
            f"median {statistics.median(samples) * 1e6:8.1f} us, max {max(samples) * 1e6:8.1f} us"
        )

    print(f"python {sys.version.split()[0]}")
    print(f"baseline: rng.randint(1, 100)  {base_rate:12,.0f} /s")
    for name, rate in [
        ("check, given roll", given),
        ("check, fast (reversed)", fast),
        ("check, rolled with rng", rolled),
        ("strike (fast, 2 hits)", strikes),
    ]:
        print(f"{name:<30} {rate:12,.0f} /s   {rate / base_rate:5.2f}x the baseline rate")
    base_us = statistics.median(base_call)
    print(f"baseline: a tiny function call  median {base_us * 1e6:8.2f} us")
    for name, samples in [
        ("check_odds   cold", cold_c),
        ("check_odds   warm", warm_c),
        ("strike_odds  cold", cold_s),
        ("strike_odds  warm", warm_s),
    ]:
        print(f"{name:<24} {us(samples)}   {statistics.median(samples) / base_us:7.1f}x the call")


if __name__ == "__main__":
    main()
