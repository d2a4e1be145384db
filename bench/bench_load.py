"""Load on the production setup: PostgreSQL, Redis and uvicorn with 2 workers.

Run by hand: ``.venv/bin/python bench/bench_load.py [seconds per case] [concurrency]``.

Starts a throwaway PostgreSQL and Redis (scripts/throwaway-services.sh), migrates, loads the
demo table (``manage.py demo``), collects static files and serves ``config.asgi`` with
``uvicorn --workers 2`` exactly as docs/deploy.md says (``DEBUG=0``, JSON logs, requests marked
HTTPS by ``X-Forwarded-Proto`` as the proxy would). Then, from an asyncio + httpx client in
this process, each case runs for the given seconds at the given concurrency and reports
requests per second and p50/p95/p99 latency, each next to a bare Django view measured in the
same run (the whole middleware stack, no database: bench/load_site.py):

- ``/healthz``: a database query and a round trip through the Redis channel layer;
- the sheet page, as its owner (session cookie);
- the character API (token);
- attack resolution: declare, defend and roll through the combat API (token), each client in an
  encounter of its own (one attack = three requests);
- live fan-out: 100 clients hold the encounter's event stream (SSE) and the GM passes the turn
  through the API; the latency is from sending that request to each client reading the entry
  (the first action, right after the clients connected, is reported apart). The streams are
  read with asyncio's own streams, not httpx (:func:`sse_lines`): the client's parsing is not
  the server's latency.

The client, the server processes, PostgreSQL and Redis share this machine's CPUs: the absolute
figures say what one machine does, the ratios say what each page costs over Django itself.
The server's log is checked too: every request line must be JSON.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import shlex
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

HTTPS = {"X-Forwarded-Proto": "https"}  # what the reverse proxy adds
FANOUT_CLIENTS = 100
FANOUT_ACTIONS = 20


# --- Services and server -----------------------------------------------------------------


def _throwaway(*args: str) -> dict[str, str]:
    out = subprocess.run(
        ["scripts/throwaway-services.sh", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    values = {}
    for line in out.splitlines():
        name, _, value = shlex.split(line)[0].partition("=")
        values[name] = value
    return values


def _pg_bin() -> str:
    if os.environ.get("PG_BIN"):
        return os.environ["PG_BIN"]
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: int(p.parent.name))
    if not found:
        sys.exit("no PostgreSQL server binaries (apt-get install postgresql), or set PG_BIN")
    return str(found[-1])


@contextmanager
def services() -> Iterator[dict[str, str]]:
    """A throwaway PostgreSQL and Redis; yields the environment of a production server on
    them (migrated, demo data loaded, static files collected)."""
    stops: list[str] = []
    tmp = tempfile.mkdtemp(prefix="omg-bench-")
    try:
        pg = _throwaway("postgres", _pg_bin())
        stops.append(pg["PG_STOP"])
        redis = _throwaway("redis")
        stops.append(redis["REDIS_STOP"])
        env = {
            k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "LOG_", "CONN_"))
        }
        env.update(
            DJANGO_SETTINGS_MODULE="bench.load_site",
            OMG_BENCH_STATIC_ROOT=f"{tmp}/static",
            DEBUG="0",
            SECRET_KEY=secrets.token_urlsafe(50),
            ALLOWED_HOSTS="127.0.0.1,localhost",
            DATABASE_URL=pg["PG_URL"],
            REDIS_URL=redis["REDIS_TEST_URL"],
            LOG_FORMAT="json",
            OMG_BENCH_TMP=tmp,
        )
        for command in (["migrate", "--noinput"], ["collectstatic", "--noinput"], ["demo"]):
            done = subprocess.run(
                [sys.executable, "manage.py", *command], cwd=ROOT, env=env, capture_output=True
            )
            if done.returncode:
                sys.exit(f"manage.py {' '.join(command)} failed:\n{done.stderr.decode()}")
        yield env
    finally:
        for stop in reversed(stops):
            subprocess.run(["bash", "-c", stop], capture_output=True)
        subprocess.run(["rm", "-rf", tmp])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)


@contextmanager
def server(env: dict[str, str], *, workers: int, name: str = "server") -> Iterator[Server]:
    """``uvicorn config.asgi:application --workers N``, as docs/deploy.md runs it."""
    port = _free_port()
    log = Path(env["OMG_BENCH_TMP"]) / f"{name}.log"
    with open(log, "wb") as stderr:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "config.asgi:application",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--workers",
                str(workers),
                "--no-access-log",
                "--timeout-graceful-shutdown",
                "2",
            ],
            cwd=ROOT,
            env=env,
            stderr=stderr,
        )
    s = Server(f"http://127.0.0.1:{port}", process, log)
    try:
        deadline = time.monotonic() + 60
        answered = 0
        while answered < 10:  # a few answers, so that every worker has started
            if process.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"the server did not start:\n{log.read_text()}")
            try:
                if httpx.get(f"{s.url}/healthz", headers=HTTPS, timeout=5).status_code == 200:
                    answered += 1
            except httpx.HTTPError:
                time.sleep(0.2)
        yield s
    finally:
        s.stop()


def django_setup(env: dict[str, str]) -> None:
    """This process on the same database and Redis, to prepare sessions, tokens, fights."""
    os.environ.update(env)
    import logging

    import django

    django.setup()
    logging.getLogger("httpx").setLevel(logging.WARNING)  # the client's own request lines


# --- Fixtures through the domain ---------------------------------------------------------


@dataclass
class Table:
    gm_token: str
    sessions: dict[str, str]  # username -> session key
    sheet: int  # a character of alice's
    fights: list[dict[str, int]] = field(default_factory=list)  # one per attack client


def session_for(username: str) -> str:
    from django.contrib.auth import get_user_model
    from django.test import Client

    client = Client()
    client.force_login(get_user_model().objects.get(username=username))
    return client.cookies["sessionid"].value


def prepare(fights: int) -> Table:
    from django.contrib.auth import get_user_model

    from sheets.models import ApiToken, Campaign

    gm = get_user_model().objects.get(username="gm")
    _, key = ApiToken.objects.create_token(user=gm, name="bench")
    campaign = Campaign.objects.get(name="The Sunken Keep")
    sheet = campaign.characters.get(name="Ysolde Varr").pk
    table = Table(key, {u: session_for(u) for u in ("gm", "alice", "bob")}, sheet)
    table.fights = [new_fight(f"Bench fight {i}") for i in range(fights)]
    return table


def new_fight(name: str) -> dict[str, int]:
    """A running encounter of two NPC copies (a knight attacks a thug): rows of its own, so
    that the attack clients do not queue on each other's locks."""
    from combat import services
    from sheets.models import Campaign

    campaign = Campaign.objects.get(name="The Sunken Keep")
    gm = campaign.gm
    encounter, _ = services.create_encounter(campaign=campaign, name=name, actor=gm)
    for npc in ("Drowned Knight", "Salvager Thug"):
        character = campaign.characters.get(name=npc)
        services.add_npc_copies(encounter=encounter, npc=character, count=1, actor=gm)
    services.start_encounter(encounter=encounter, actor=gm)
    knight = encounter.participants.get(character__name__startswith="Drowned Knight")
    thug = encounter.participants.get(character__name__startswith="Salvager Thug")
    return {
        "encounter": encounter.pk,
        "attacker": knight.pk,
        "target": thug.pk,
        "zone": thug.character.zones.get(name="chest").pk,
        "weapon": knight.character.weapons.get().pk,
    }


# --- Measuring ---------------------------------------------------------------------------


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))]


@dataclass
class Result:
    name: str
    per_second: float
    latencies: list[float]

    def p(self, q: float) -> float:
        return percentile(self.latencies, q) * 1000


Call = Callable[[httpx.AsyncClient, int], Awaitable[None]]


async def _loop(
    http: httpx.AsyncClient, call: Call, seconds: float, clients: int
) -> tuple[list[float], float]:
    latencies: list[float] = []
    stop = time.perf_counter() + seconds

    async def worker(i: int) -> None:
        while time.perf_counter() < stop:
            started = time.perf_counter()
            await call(http, i)
            latencies.append(time.perf_counter() - started)

    started = time.perf_counter()
    await asyncio.gather(*(worker(i) for i in range(clients)))
    return latencies, time.perf_counter() - started


async def load(name: str, call: Call, *, base: str, seconds: float, clients: int) -> Result:
    """``clients`` concurrent loops of ``call`` for ``seconds``, after a one-second warm-up
    that is not counted."""
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=base, headers=HTTPS, limits=limits) as http:
        await _loop(http, call, 1.0, clients)
        latencies, elapsed = await _loop(http, call, seconds, clients)
    return Result(name, len(latencies) / elapsed, latencies)


def expect(response: httpx.Response, status: int) -> httpx.Response:
    if response.status_code != status:
        raise SystemExit(
            f"{response.request.method} {response.request.url}: {response.status_code}, "
            f"expected {status}: {response.text[:300]}"
        )
    return response


def cases(table: Table) -> list[tuple[str, Call, str]]:
    token = {"Authorization": f"Token {table.gm_token}"}
    alice = {"Cookie": f"sessionid={table.sessions['alice']}"}

    async def bare(http: httpx.AsyncClient, i: int) -> None:
        expect(await http.get("/bench/bare/"), 200)

    async def healthz(http: httpx.AsyncClient, i: int) -> None:
        expect(await http.get("/healthz"), 200)

    async def sheet(http: httpx.AsyncClient, i: int) -> None:
        expect(await http.get(f"/characters/{table.sheet}/", headers=alice), 200)

    async def character_api(http: httpx.AsyncClient, i: int) -> None:
        expect(await http.get(f"/api/characters/{table.sheet}/", headers=token), 200)

    async def attack(http: httpx.AsyncClient, i: int) -> None:
        f = table.fights[i]
        declared = await http.post(
            f"/api/encounters/{f['encounter']}/attacks/",
            json={
                "attacker": f["attacker"],
                "target": f["target"],
                "zone": f["zone"],
                "weapon": f["weapon"],
                "action": "mighty",
            },
            headers=token,
        )
        attack = expect(declared, 201).json()["id"]
        defense = {"defense": "parry"}
        expect(await http.post(f"/api/attacks/{attack}/defense/", json=defense, headers=token), 200)
        expect(await http.post(f"/api/attacks/{attack}/roll/", json={}, headers=token), 200)

    return [
        ("bare Django view (baseline)", bare, "requests"),
        ("/healthz (DB + Redis layer)", healthz, "requests"),
        ("sheet page (session)", sheet, "requests"),
        ("character API (token)", character_api, "requests"),
        ("attack: declare+defend+roll", attack, "attacks"),
    ]


@dataclass
class Fanout:
    clients: int
    first: list[float]  # deliveries of the first action, right after the streams connected
    latencies: list[float]  # deliveries of the other actions, late ones included
    late: int  # deliveries that took longer than LATE seconds
    lost: int  # deliveries that never came (within LATE + GRACE seconds)
    action: list[float]  # the action's own request, answer included
    db_connections: int
    # the tracker drawn after each of the other actions: the page fully updated
    trackers: list[float] = field(default_factory=list)


LATE = 10.0
GRACE = 20.0


async def sse_lines(base: str, path: str, headers: dict[str, str]) -> AsyncIterator[bytes]:
    """The lines of an event stream, read with asyncio's streams: a browser's EventSource
    parses in native code, and an httpx reader in Python costs the client a few milliseconds
    per event and stream, on the cores the server needs (at 100 pages it was most of the
    measured p50 on a loaded 2-core machine). HTTP/1.1, chunked or not."""
    url = httpx.URL(base)
    reader, writer = await asyncio.open_connection(url.host, url.port, limit=2**24)
    try:
        head = "".join(f"{k}: {v}\r\n" for k, v in {**HTTPS, **headers}.items())
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {url.host}\r\n{head}\r\n".encode())
        await writer.drain()
        status = await reader.readline()
        if b" 200 " not in status:
            # An error, not an exit: the fan-out bench reports the size as failed and goes on.
            raise RuntimeError(f"GET {path}: {status.decode().strip()}, expected 200")
        chunked = False
        while (line := await reader.readline()) not in (b"\r\n", b""):
            chunked = chunked or line.lower() == b"transfer-encoding: chunked\r\n"
        rest = b""
        while True:
            if chunked:
                size = int((await reader.readline()).strip() or b"0", 16)
                if not size:
                    return
                data = await reader.readexactly(size + 2)
                data = data[:-2]
            else:
                data = await reader.read(65536)
                if not data:
                    return
            *lines, rest = (rest + data).split(b"\n")
            for line in lines:
                yield line
    finally:
        writer.close()


async def fanout(base: str, table: Table, encounter: int, *, clients: int, actions: int) -> Fanout:
    """``clients`` event streams on ``encounter`` (the GM's and both players' sessions in
    turn); the GM passes the turn ``actions`` times through the API, each once every stream
    has the previous one (or LATE seconds passed), and the time from sending each request to
    each stream reading its entry is kept. The first action is kept apart: its entry queues
    behind the streams' own start (each join is announced to every open stream)."""
    arrivals: dict[int, list[float]] = defaultdict(list)
    trackers: dict[int, list[float]] = defaultdict(list)
    hello = asyncio.Semaphore(0)
    cookies = [table.sessions[u] for u in ("gm", "alice", "bob")]
    timeout = httpx.Timeout(30.0, read=None)

    async def stream(cookie: str) -> None:
        headers = {"Cookie": f"sessionid={cookie}"}
        event = b""
        last = 0  # the last entry this stream read: a tracker after it shows its effect
        async for line in sse_lines(base, f"/encounters/{encounter}/events/", headers):
            if line.startswith(b"event: "):
                event = line[7:]
            elif line.startswith(b"id: ") and event == b"entry":
                last = int(line[4:])
                arrivals[last].append(time.perf_counter())
            elif line == b"":
                if event == b"hello":
                    hello.release()
                elif event == b"tracker" and last:
                    trackers[last].append(time.perf_counter())
                    last = 0
                event = b""

    async def all_arrived(entries: dict[int, float], seconds: float) -> None:
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            # The tracker too: the next action must not race the last one's tracker.
            if all(len(arrivals[e]) >= clients and len(trackers[e]) >= clients for e in entries):
                return
            await asyncio.sleep(0.002)

    token = {"Authorization": f"Token {table.gm_token}"}
    sent: dict[int, float] = {}
    action: list[float] = []
    async with httpx.AsyncClient(base_url=base, headers=HTTPS, timeout=timeout) as http:
        tasks = [asyncio.create_task(stream(cookies[i % 3])) for i in range(clients)]
        try:
            for _ in range(clients):
                await asyncio.wait_for(hello.acquire(), 60)
            connections = await asyncio.to_thread(_db_connections)
            for _ in range(actions):
                started = time.perf_counter()
                response = await http.post(
                    f"/api/encounters/{encounter}/next-turn/", json={}, headers=token
                )
                entry = expect(response, 200).json()["id"]
                action.append(time.perf_counter() - started)
                sent[entry] = started
                await all_arrived({entry: started}, LATE)
                await asyncio.sleep(0.05)
            await all_arrived(sent, GRACE)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    first, *rest = sent
    latencies = [t - sent[e] for e in rest for t in arrivals[e]]
    everything = [t - sent[e] for e in sent for t in arrivals[e]]
    return Fanout(
        clients,
        [t - sent[first] for t in arrivals[first]],
        latencies,
        late=sum(1 for x in everything if x > LATE),
        lost=clients * actions - len(everything),
        action=action,
        db_connections=connections,
        trackers=[t - sent[e] for e in rest for t in trackers[e]],
    )


def _db_connections() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'"
        )
        count = int(cursor.fetchone()[0]) - 1  # not this one
    connection.close()
    return count


def check_log(log: Path) -> str:
    """Every line a worker writes once Django is set up must be JSON; uvicorn's supervisor
    process (no Django) and each worker's first lines are uvicorn's own text."""
    json_lines, requests = 0, 0
    text: Counter[str] = Counter()
    statuses: Counter[int] = Counter()
    for line in log.read_text().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            text[re.sub(r"\d+", "N", line)] += 1
            continue
        json_lines += 1
        if record.get("logger") == "omg.request":
            requests += 1
            statuses[record["status"]] += 1
            assert {"request_id", "path", "duration_ms", "user_id"} <= record.keys(), record
    summary = f"{json_lines} JSON lines ({requests} request lines, statuses {dict(statuses)})"
    summary += f"; {sum(text.values())} text lines from uvicorn:"
    return "\n  ".join([summary, *(f"{n} x {line}" for line, n in text.items())])


# --- Report ------------------------------------------------------------------------------


def report_load(results: list[Result]) -> None:
    base = results[0]
    print(
        f"{'case':32} {'per s':>8} {'p50 ms':>7} {'p95 ms':>7} {'p99 ms':>7}"
        f"   {'per s / bare':>12} {'p50 / bare':>10}"
    )
    for r in results:
        print(
            f"{r.name:32} {r.per_second:8.0f} {r.p(50):7.1f} {r.p(95):7.1f} {r.p(99):7.1f}"
            f"   {r.per_second / base.per_second:12.2f} {r.p(50) / base.p(50):10.1f}"
        )


def describe(f: Fanout, base: Result | None = None) -> str:
    p50, p95, p99 = (percentile(f.latencies, q) * 1000 for q in (50, 95, 99))
    text = f"fan-out to {f.clients:3d} streams: p50 {p50:7.1f} ms, p95 {p95:7.1f} ms,"
    text += f" p99 {p99:7.1f} ms, max {max(f.latencies) * 1000:7.1f} ms"
    if base is not None:
        text += f" (p50 / bare p50 {p50 / base.p(50):.1f})"
    text += "\n    first action right after the streams connected: p50"
    text += f" {percentile(f.first, 50) * 1000:.0f} ms, max {max(f.first) * 1000:.0f} ms;"
    text += f" the action's own request p50 {percentile(f.action, 50) * 1000:.1f} ms;"
    text += f"\n    {f.late} deliveries later than {LATE:.0f} s, {f.lost} never came"
    text += f" (of {len(f.first) + len(f.latencies) + f.lost});"
    text += f" {f.db_connections} PostgreSQL connections open"
    return text


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    concurrency = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    print(f"{os.cpu_count()} CPUs shared by client, 2 uvicorn workers, PostgreSQL and Redis;")
    print(f"{seconds:.0f} s per case, {concurrency} concurrent clients (attacks: 8)\n")
    with services() as env:
        django_setup(env)
        table = prepare(fights=8)
        fan = new_fight("Bench fan-out")["encounter"]
        with server(env, workers=2) as s:
            results = []
            for name, call, unit in cases(table):
                clients = 8 if unit == "attacks" else concurrency
                results.append(
                    asyncio.run(load(name, call, base=s.url, seconds=seconds, clients=clients))
                )
            f = asyncio.run(
                fanout(s.url, table, fan, clients=FANOUT_CLIENTS, actions=FANOUT_ACTIONS)
            )
        report_load(results)
        print("(attack: per s counts attacks, 3 requests each; latency is the three together)\n")
        print(describe(f, results[0]))
        print(f"\nserver log: {check_log(s.log)}")


if __name__ == "__main__":
    main()
