"""The GM's check call with many campaign streams open: does its answer wait for them?

Run by hand: ``.venv/bin/python bench/bench_campaign_streams.py [calls per size] [sizes]``,
e.g. ``bench/bench_campaign_streams.py 10 10,1000,10,1000`` (a size named twice is run
twice, in that order: on a busy machine the runs of each size are pooled for the ratio).

A throwaway PostgreSQL and Redis (bench/bench_load.py starts everything), then one uvicorn
process, first with the in-memory channel layer (a laptop), then with Redis (docs/deploy.md).
For each number of pages, that many campaign streams (``/campaigns/<id>/events/``, which every
campaign page, sheet and fight page opens) are opened on the demo campaign with the GM's,
Alice's and Bob's sessions in turn; then the GM calls for a check from everyone through the API,
one call at a time, each once every stream heard the one before. Printed per size: the call's
own request (p50, p95: the figure the GM waits for), the time from sending it until each stream
heard its news (p50, p95), and what never came; then the ratio of the call's p50 at the largest
size to the smallest (1.0: the call does not wait for the streams), and the server's warnings.
"""

from __future__ import annotations

import asyncio
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_load import (  # noqa: E402 - the path above comes first
    HTTPS,
    django_setup,
    expect,
    percentile,
    prepare,
    server,
    services,
    sse_lines,
)

SIZES = (10, 1000)
LATE = 20.0


@dataclass
class Calls:
    requests: list[float] = field(default_factory=list)  # each call's request, answer included
    heard: list[float] = field(default_factory=list)  # from sending a call to a stream's news
    lost: int = 0


async def calls(base: str, table: object, campaign: int, *, pages: int, count: int) -> Calls:
    sessions = table.sessions  # type: ignore[attr-defined]  # bench_load.Table
    cookies = [sessions[u] for u in ("gm", "alice", "bob")]
    hello = asyncio.Semaphore(0)
    heard: list[float] = []
    out = Calls()

    async def stream(cookie: str) -> None:
        headers = {"Cookie": f"sessionid={cookie}"}
        event = b""
        async for line in sse_lines(base, f"/campaigns/{campaign}/events/", headers):
            if line.startswith(b"event: "):
                event = line[7:]
            elif line == b"":
                if event == b"hello":
                    hello.release()
                elif event:
                    heard.append(time.perf_counter())
                event = b""

    token = {"Authorization": f"Token {table.gm_token}"}  # type: ignore[attr-defined]  # bench_load.Table
    body = {"campaign": campaign, "everyone": True, "kind": "aptitude", "aptitude": "SPD"}
    body["against"] = "Moderate"
    timeout = httpx.Timeout(30.0, read=None)
    async with httpx.AsyncClient(base_url=base, headers=HTTPS, timeout=timeout) as http:
        tasks = [asyncio.create_task(stream(cookies[i % 3])) for i in range(pages)]
        try:
            for _ in range(pages):
                await asyncio.wait_for(hello.acquire(), 120)
            await asyncio.sleep(1.0)  # the burst of opening settles
            for _ in range(count):
                heard.clear()
                started = time.perf_counter()
                expect(await http.post("/api/check-calls/", json=body, headers=token), 201)
                out.requests.append(time.perf_counter() - started)
                deadline = time.perf_counter() + LATE
                while len(heard) < pages and time.perf_counter() < deadline:
                    await asyncio.sleep(0.002)
                out.heard += [t - started for t in heard]
                out.lost += max(0, pages - len(heard))
                await asyncio.sleep(0.1)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    return out


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    sizes = tuple(int(n) for n in sys.argv[2].split(",")) if len(sys.argv) > 2 else SIZES
    print(f"{count} check calls per size, from everyone in the demo campaign, one at a time")
    with services() as env:
        django_setup(env)
        from sheets.models import Campaign

        table = prepare(fights=0)
        campaign = Campaign.objects.get(name="The Sunken Keep").pk
        for label, server_env in (
            ("1 process, in-memory layer", {**env, "REDIS_URL": ""}),
            ("1 process + Redis", env),
        ):
            with server(
                server_env, workers=1, name=f"campaign-{bool(server_env['REDIS_URL'])}"
            ) as s:
                print(f"{label}:")
                print(
                    f"  {'pages':>5} {'call p50':>9} {'call p95':>9}"
                    f" {'heard p50':>10} {'heard p95':>10} {'lost':>5}"
                )
                by_size: dict[int, list[float]] = {}
                for size in sizes:
                    c = asyncio.run(calls(s.url, table, campaign, pages=size, count=count))
                    by_size.setdefault(size, []).extend(c.requests)
                    p50, p95 = (percentile(c.requests, q) * 1000 for q in (50, 95))
                    h50, h95 = (percentile(c.heard or [0.0], q) * 1000 for q in (50, 95))
                    print(
                        f"  {size:5d} {p50:9.1f} {p95:9.1f} {h50:10.1f} {h95:10.1f} {c.lost:5d}",
                        flush=True,
                    )
                small, large = min(by_size), max(by_size)
                ratio = percentile(by_size[large], 50) / percentile(by_size[small], 50)
                print(f"  call p50 at {large} pages / at {small} (every run of each): {ratio:.1f}")
                warnings = [
                    line for line in s.log.read_text().splitlines() if "WARNING" in line.upper()
                ]
                print(f"  server log: {len(warnings)} warning lines")
                for line in warnings[:3]:
                    print(f"    {line[:200]}")


if __name__ == "__main__":
    main()
