"""The encounter page with 20 participants against the same page with 4 (the goal: at most
1.5x the time; the query count is constant). Run by hand:
``.venv/bin/python bench/bench_encounter.py [rounds]``; ``--profile`` prints a cProfile of the
20-participant page instead.

On a throwaway SQLite database, two running encounters of one campaign: one with the player's
character and 3 NPC copies, one with the same character and 19. Each round GETs
``/encounters/<id>/`` through the test client (middleware, session, the whole template) once
for each, for the GM and for the player, interleaved, so the machine's noise falls on both
sides alike. Printed: the median milliseconds, the queries of one page, and the 20-vs-4 ratio
for each viewer (lower is better; 1.0 would be a page whose time does not grow with the fight).
"""

from __future__ import annotations

import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")
os.environ["DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp()}/bench.sqlite3"

import django  # noqa: E402 - settings must be chosen first

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext, setup_test_environment  # noqa: E402

from combat import services  # noqa: E402
from tests.factories import make_campaign, make_thug, make_user, make_ysolde  # noqa: E402  # noqa: E402

SIZES = (4, 20)


def fight(campaign, gm, ysolde, npc, size: int) -> int:  # type: ignore[no-untyped-def]  # test fixtures, untyped
    encounter, _ = services.create_encounter(campaign=campaign, name=f"Bench {size}", actor=gm)
    services.add_participants(encounter=encounter, characters=[ysolde], actor=gm)
    services.add_npc_copies(encounter=encounter, npc=npc, count=size - 1, actor=gm)
    services.start_encounter(encounter=encounter, actor=gm)
    return int(encounter.pk)


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    rounds = int(args[0]) if args else 60
    setup_test_environment()  # the test client's host is allowed
    call_command("migrate", verbosity=0)
    gm, player = make_user("bench-gm"), make_user("bench-player")
    campaign = make_campaign(gm, players=(player,))
    ysolde = make_ysolde(campaign, player)
    npc = make_thug(campaign, gm)
    pages = {size: f"/encounters/{fight(campaign, gm, ysolde, npc, size)}/" for size in SIZES}
    clients = {}
    for who, user in (("GM", gm), ("player", player)):
        clients[who] = Client()
        clients[who].force_login(user)
    for client in clients.values():  # warm up: templates compiled, caches filled
        for url in pages.values():
            for _ in range(3):
                r = client.get(url)
                assert r.status_code == 200, (r.status_code, r.get("Location"))

    if "--profile" in sys.argv:
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(20):
            clients[os.environ.get("BENCH_VIEWER", "GM")].get(pages[20])
        profiler.disable()
        pstats.Stats(profiler).sort_stats(os.environ.get("BENCH_SORT", "cumulative")).print_stats(
            30
        )
        return

    samples: dict[tuple[str, int], list[float]] = {(w, s): [] for w in clients for s in SIZES}
    for _ in range(rounds):
        for who, client in clients.items():
            for size in SIZES:
                started = time.perf_counter()
                response = client.get(pages[size])
                samples[who, size].append(time.perf_counter() - started)
                assert response.status_code == 200
    print(f"encounter page, median of {rounds} interleaved rounds (test client, SQLite)")
    print(f"  {'viewer':<7} {'4 ms':>7} {'20 ms':>7} {'queries':>9} {'20 vs 4':>8}")
    for who, client in clients.items():
        queries = []
        for size in SIZES:
            with CaptureQueriesContext(connection) as captured:
                client.get(pages[size])
            queries.append(str(len(captured)))
        four, twenty = (statistics.median(samples[who, s]) * 1000 for s in SIZES)
        print(f"  {who:<7} {four:7.1f} {twenty:7.1f} {'/'.join(queries):>9} {twenty / four:7.2f}x")
    print("(goal: 20 vs 4 at most 1.5x; queries: 4 / 20 participants)")


if __name__ == "__main__":
    main()
