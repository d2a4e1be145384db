"""Live fan-out latency: from an action to 1, 10, 100 and 300 open encounter pages.

Run by hand: ``.venv/bin/python bench/bench_fanout.py [actions per size] [sizes]``, e.g.
``bench/bench_fanout.py 8 1,10,100,300``.

Two servers on a throwaway PostgreSQL (bench/bench_load.py starts everything): one uvicorn
process with the in-memory channel layer (a laptop or a small table), then two uvicorn workers
with Redis carrying the events between them (docs/deploy.md). For each number of clients, that
many event streams (SSE) are opened on a fresh encounter, with the GM's and both players'
sessions in turn; the GM passes the turn through the API, one action at a time, and the time
from sending that request to each stream reading the entry gives p50 and p95 (the first action
right after the streams connected is reported apart: it waits for the streams' own start). A
bare Django view's p50 and p95 measured on the same server in the same run are printed, and the
fan-out figures as ratios to them (the machine's speed cancels out), the time until the
tracker drawn after each entry arrives too (the broadcaster sends the entry first), with the
PostgreSQL connections open while the streams are (the streams hold none: what is open is
the pool each worker keeps, at most DB_POOL_MAX, after the burst of requests that opened the
streams). The streams are read with asyncio's streams (bench_load.sse_lines): an httpx reader
in Python made about half of the measured p50 at 100 pages on a loaded 2-core machine (the
two clients alternating on the same server), where a browser parses in native code. Also
printed: what building one event's messages for the GM and for a player costs in this process.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_load import (  # noqa: E402 - the path above comes first
    HTTPS,
    LATE,
    django_setup,
    fanout,
    load,
    new_fight,
    percentile,
    prepare,
    server,
    services,
)

SIZES = (1, 10, 100, 300)


def render_cost() -> str:
    """Milliseconds to build one event's messages for one viewer (the GM, a player)."""
    from django.contrib.auth import get_user_model

    from combat import services
    from combat.live import broadcast
    from combat.models import Encounter

    users = get_user_model().objects
    gm, alice = users.get(username="gm"), users.get(username="alice")
    encounter = Encounter.objects.get(pk=new_fight("Bench render")["encounter"])
    out = []
    for who in (gm, alice):
        samples = []
        for _ in range(20):
            before = broadcast.latest_entry_id(encounter)
            services.next_turn(encounter=encounter, actor=gm)
            started = time.perf_counter()
            page = broadcast.Subscriber(who, before, None, greeted=True)  # type: ignore[arg-type]  # no queue: the pass only writes it
            chunks = broadcast.fan_out(encounter, [page])[page]
            samples.append(time.perf_counter() - started)
        events = ", ".join(c.split("\n", 1)[0].removeprefix("event: ") for c in chunks)
        out.append(f"{who.username} {statistics.median(samples) * 1000:.1f} ms ({events})")
    return "; ".join(out)


async def bare_view(base: str) -> tuple[float, float]:
    """p50 and p95 of a bare Django view (no database), one client, in milliseconds."""

    async def bare(http: httpx.AsyncClient, i: int) -> None:
        (await http.get("/bench/bare/")).raise_for_status()

    result = await load("bare", bare, base=base, seconds=3, clients=1)
    return result.p(50), result.p(95)


def main() -> None:
    actions = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    sizes = tuple(int(n) for n in sys.argv[2].split(",")) if len(sys.argv) > 2 else SIZES
    print(f"{actions} actions per size; latency from sending the action to each stream's entry")
    with services() as env:
        django_setup(env)
        table = prepare(fights=0)
        print(f"rendering one event for one viewer (in this process): {render_cost()}\n")
        setups = (
            ("1 process, in-memory layer", 1, {**env, "REDIS_URL": ""}),
            ("2 workers + Redis", 2, env),
        )
        for label, workers, server_env in setups:
            with server(server_env, workers=workers, name=f"fanout-{workers}") as s:
                assert httpx.get(f"{s.url}/healthz", headers=HTTPS).json()["status"] == "ok"
                base50, base95 = asyncio.run(bare_view(s.url))
                print(f"{label}: bare view p50 {base50:.1f} ms, p95 {base95:.1f} ms (1 client)")
                print(
                    f"  {'pages':>5} {'p50 ms':>8} {'p95 ms':>8} {'p50/bare':>9} {'p95/bare':>9}"
                    f" {'tracker p50':>11} {'tracker p95':>11}"
                    f" {'action ms':>9} {'first ms':>8} {'late':>5} {'lost':>5} {'PG conns':>8}"
                )
                for size in sizes:
                    encounter = new_fight(f"Bench fan-out {workers}/{size}")["encounter"]
                    try:
                        f = asyncio.run(
                            fanout(s.url, table, encounter, clients=size, actions=actions)
                        )
                    except Exception as exc:  # noqa: BLE001 - report it and go on to the next
                        print(f"  {size:5d} failed: {type(exc).__name__}: {exc}"[:200])
                        continue
                    p50, p95 = (percentile(f.latencies, q) * 1000 for q in (50, 95))
                    t50, t95 = (percentile(f.trackers or [0.0], q) * 1000 for q in (50, 95))
                    print(
                        f"  {size:5d} {p50:8.1f} {p95:8.1f} {p50 / base50:9.1f} {p95 / base95:9.1f}"
                        f" {t50:11.1f} {t95:11.1f}"
                        f" {percentile(f.action, 50) * 1000:9.1f}"
                        f" {percentile(f.first, 50) * 1000:8.0f} {f.late:5d} {f.lost:5d}"
                        f" {f.db_connections:8d}"
                    )
        print(
            "\n(p50/bare, p95/bare: the fan-out's p50 and p95 over the bare view's; tracker:"
            " the same from the action to the tracker drawn after its entry, the page fully"
            " updated; action: the"
            " API request's own p50; first: the first action right after the streams connected;"
            f" late: deliveries after {LATE:.0f} s; lost: never came; PG conns: PostgreSQL"
            " connections open while the streams are, all server processes together)"
        )


if __name__ == "__main__":
    main()
