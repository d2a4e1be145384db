"""Live fan-out latency: from an action to 1, 10 and 100 open encounter pages (issue 6).

Run by hand: ``.venv/bin/python bench/bench_fanout.py [actions per size]``.

Two servers on a throwaway PostgreSQL (bench/bench_load.py starts everything): one uvicorn
process with the in-memory channel layer (a laptop or a small table), then two uvicorn workers
with Redis carrying the events between them (docs/deploy.md). For each number of clients, that
many event streams (SSE) are opened on a fresh encounter, with the GM's and both players'
sessions in turn; the GM passes the turn through the API, one action at a time, and the time
from sending that request to each stream reading the entry gives p50 and p95 (the first action
right after the streams connected is reported apart: it waits for the streams' own start). A
bare Django view's p50 measured on the same server is printed next to them, and so is what
rendering one event for one viewer costs (every stream renders for its own viewer).
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

SIZES = (1, 10, 100)


def render_cost() -> str:
    """Milliseconds to build one event's messages for one viewer (the GM, a player)."""
    from django.contrib.auth import get_user_model

    from combat import live, services
    from combat.models import Encounter

    users = get_user_model().objects
    gm, alice = users.get(username="gm"), users.get(username="alice")
    encounter = Encounter.objects.get(pk=new_fight("Bench render")["encounter"])
    out = []
    for who in (gm, alice):
        samples = []
        for _ in range(20):
            before = live.latest_entry_id(encounter)
            services.next_turn(encounter=encounter, actor=gm)
            started = time.perf_counter()
            messages = live.messages_after(encounter, who, before)
            samples.append(time.perf_counter() - started)
        events = ", ".join(m.event for m in messages)
        out.append(f"{who.username} {statistics.median(samples) * 1000:.1f} ms ({events})")
    return "; ".join(out)


async def bare_p50(base: str) -> float:
    async def bare(http: httpx.AsyncClient, i: int) -> None:
        (await http.get("/bench/bare/")).raise_for_status()

    result = await load("bare", bare, base=base, seconds=3, clients=1)
    return result.p(50)


def main() -> None:
    actions = int(sys.argv[1]) if len(sys.argv) > 1 else 20
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
                base = asyncio.run(bare_p50(s.url))
                print(f"{label}: bare view p50 {base:.1f} ms (1 client)")
                for size in SIZES:
                    encounter = new_fight(f"Bench fan-out {workers}/{size}")["encounter"]
                    f = asyncio.run(fanout(s.url, table, encounter, clients=size, actions=actions))
                    p50, p95 = (percentile(f.latencies, q) * 1000 for q in (50, 95))
                    first = percentile(f.first, 50) * 1000
                    print(
                        f"  {size:3d} clients: p50 {p50:7.1f} ms, p95 {p95:7.1f} ms"
                        f"  (p50 / bare {p50 / base:5.1f}); action itself p50"
                        f" {percentile(f.action, 50) * 1000:.1f} ms; first action after"
                        f" connecting p50 {first:.0f} ms; {f.late} of {size * actions} later"
                        f" than {LATE:.0f} s, {f.lost} never came;"
                        f" {f.db_connections} PostgreSQL connections open"
                    )


if __name__ == "__main__":
    main()
