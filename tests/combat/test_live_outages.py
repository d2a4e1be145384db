"""The live feed under a crowd and through outages: a uvicorn server on PostgreSQL with a Redis
of the test's own (stopped and started again on the same port), as docs/deploy.md runs it.

Runs in the PostgreSQL run of scripts/test.sh (redis-server must be installed).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from channels.layers import channel_layers
from django.conf import settings
from django.db import connection
from django.test import Client

from combat import services
from tests.factories import make_thug, make_ysolde
from tests.polling import wait_for
from tests.servers import RedisServer, SseClient, start_asgi_server

pytestmark = [pytest.mark.postgres, pytest.mark.live, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def own_redis(settings):
    """A Redis for this test alone; this test process publishes through it too."""
    if not shutil.which("redis-server"):
        if os.environ.get("CI") == "true":
            pytest.fail("CI must have redis-server (apt-get install redis-server)")
        pytest.skip("no redis-server")
    server = RedisServer().start()
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [server.url]},
        }
    }
    channel_layers.backends.clear()
    yield server
    channel_layers.backends.clear()
    server.stop()


def running_fight(table: Any) -> Any:
    ysolde = make_ysolde(table.campaign, table.player)
    thug = make_thug(table.campaign, table.gm)
    encounter, _ = services.create_encounter(campaign=table.campaign, name="Ambush", actor=table.gm)
    services.add_participants(encounter=encounter, characters=[ysolde, thug], actor=table.gm)
    services.start_encounter(encounter=encounter, actor=table.gm)
    return encounter


def session_cookie(user: Any) -> str:
    client = Client()
    client.force_login(user)
    return client.cookies["sessionid"].value


def server_env(own_redis: RedisServer, **extra: str) -> dict[str, str]:
    return {"REDIS_URL": own_redis.url, "SECRET_KEY": settings.SECRET_KEY, **extra}


def errors_in(log: Path) -> list[str]:
    text = log.read_text(errors="replace")
    return [line for line in text.splitlines() if "Traceback" in line or "Error" in line]


def group_members(own_redis: RedisServer, encounter_id: int) -> dict[str, int]:
    client = redis.Redis.from_url(own_redis.url)
    try:
        return {
            group: client.zcard(f"asgi:group:{group}")
            for group in (f"encounter-{encounter_id}", f"encounter-{encounter_id}-presence")
        }
    finally:
        client.close()


def blocked_clients(own_redis: RedisServer) -> int:
    """Connections waiting in a blocking read (channels-redis's BZPOPMIN)."""
    client = redis.Redis.from_url(own_redis.url)
    try:
        return int(client.info("clients")["blocked_clients"])
    finally:
        client.close()


class Streams:
    """Many event streams opened at once from one event loop, as raw HTTP/1.1 connections."""

    def __init__(self, url: str, path: str, cookie: str) -> None:
        self.host, port = url.removeprefix("http://").split(":")
        self.port = int(port)
        self.path = path
        self.cookie = cookie
        self.writers: list[asyncio.StreamWriter] = []
        self.refused: list[str] = []  # the answers that were not a stream

    async def open_one(self) -> int:
        """The stream's status: 200 once greeted (it stays open), or the refusal's."""
        reader, writer = await asyncio.open_connection(self.host, self.port)
        writer.write(
            f"GET {self.path} HTTP/1.1\r\nHost: {self.host}\r\nAccept: text/event-stream\r\n"
            f"Cookie: sessionid={self.cookie}\r\n\r\n".encode()
        )
        await writer.drain()
        head = b""
        while b"\r\n" not in head:
            head += await reader.read(1024)
        status = int(head.split()[1])
        if status != 200:
            self.refused.append((head + await reader.read(4096)).decode(errors="replace"))
            writer.close()
            return status
        body = head
        while b"event: hello" not in body:
            chunk = await reader.read(4096)
            assert chunk, "the stream closed before its hello"
            body += chunk
        self.writers.append(writer)
        return status

    async def open(self, count: int) -> list[int]:
        opening = asyncio.gather(*(self.open_one() for _ in range(count)))
        return list(await asyncio.wait_for(opening, 60))

    async def close_all(self) -> None:
        """Every page closes at once (the connections drop, as when a tab closes)."""
        for writer in self.writers:
            writer.transport.abort()
        self.writers.clear()
        await asyncio.sleep(0)


def test_streams_closing_at_once_leave_no_error_and_no_channel_behind(table, own_redis, tmp_path):
    """200 pages closing at once: no error in the server's log (one presence message per
    closing stream ran the Redis pool out), the encounter's groups hold no channel once they
    are gone, and the next pages still get every event."""
    assert connection.vendor == "postgresql"
    encounter = running_fight(table)
    cookie = session_cookie(table.gm)
    log = tmp_path / "server.log"
    server = start_asgi_server(server_env(own_redis), log=log)
    path = f"/encounters/{encounter.pk}/events/"
    try:
        streams = Streams(server.url, path, cookie)

        async def crowd() -> list[int]:
            statuses = await streams.open(200)
            await streams.close_all()
            return statuses

        assert asyncio.run(crowd()) == [200] * 200
        assert wait_for(lambda: group_members(own_redis, encounter.pk) == {
            f"encounter-{encounter.pk}": 0, f"encounter-{encounter.pk}-presence": 0
        }, 15), group_members(own_redis, encounter.pk)  # fmt: skip
        page = SseClient(f"{server.url}{path}", cookie).start()
        entry = services.next_turn(encounter=encounter, actor=table.gm)
        assert wait_for(lambda: page.entries == [entry.pk]), page.entries
    finally:
        server.stop()
    assert errors_in(log) == []


def test_streams_end_when_redis_goes_and_work_again_as_soon_as_it_is_back(
    table, own_redis, tmp_path
):
    """Redis stops: open streams end (their browsers reconnect) rather than go silent; a page
    connecting meanwhile is told 503 with Retry-After; Redis back, a page reconnecting at once
    catches up on what it missed and hears what comes next."""
    assert connection.vendor == "postgresql"
    encounter = running_fight(table)
    cookie = session_cookie(table.gm)
    log = tmp_path / "server.log"
    server = start_asgi_server(server_env(own_redis), log=log)
    url = f"{server.url}/encounters/{encounter.pk}/events/"
    try:
        pages = [SseClient(url, cookie).start() for _ in range(3)]
        first = services.next_turn(encounter=encounter, actor=table.gm).pk
        assert wait_for(lambda: all(p.entries == [first] for p in pages)), [
            p.entries for p in pages
        ]

        own_redis.stop()
        started = time.monotonic()
        assert all(p.closed.wait(20) for p in pages), "a stream stayed open, silent"
        ended_after = time.monotonic() - started
        refused = httpx.get(url, cookies={"sessionid": cookie}, timeout=20)
        assert refused.status_code == 503, refused.text
        assert int(refused.headers["Retry-After"]) >= 1
        # Committed while Redis is down: the log has them, no page was told.
        missed = [services.next_turn(encounter=encounter, actor=table.gm).pk for _ in range(2)]

        own_redis.start()
        started = time.monotonic()
        again = SseClient(url, cookie, last_id=pages[0].last_id).start()
        back_after = time.monotonic() - started
        assert wait_for(lambda: again.entries == missed), (again.entries, missed)
        later = services.next_turn(encounter=encounter, actor=table.gm).pk
        assert wait_for(lambda: again.entries == [*missed, later]), again.entries
    finally:
        server.stop()
    # How long the outage took to end the streams, and the first page to come back (-s).
    print(f"streams ended {ended_after:.1f} s after Redis stopped; back {back_after:.1f} s")
    assert not [line for line in errors_in(log) if "Traceback" in line]


def test_a_burst_of_pages_opening_on_a_small_pool_gets_no_503(table, own_redis, tmp_path):
    """300 pages opening at once against a pool of 2 connections: each stream reads the
    database once, briefly, so none is turned away; /healthz stays 200 meanwhile."""
    assert connection.vendor == "postgresql"
    encounter = running_fight(table)
    cookie = session_cookie(table.gm)
    env = server_env(own_redis, DB_POOL_MIN="1", DB_POOL_MAX="2", DB_POOL_TIMEOUT="2")
    server = start_asgi_server(env, log=tmp_path / "server.log")
    streams = Streams(server.url, f"/encounters/{encounter.pk}/events/", cookie)
    health: list[int] = []
    unhealthy: list[str] = []
    done = threading.Event()

    def poll() -> None:
        while not done.is_set():
            answer = httpx.get(f"{server.url}/healthz", timeout=30)
            health.append(answer.status_code)
            if answer.status_code != 200:
                unhealthy.append(answer.text)
            done.wait(0.1)  # the next look, or none once the crowd is over

    poller = threading.Thread(target=poll)
    try:

        async def crowd() -> list[int]:
            poller.start()
            statuses = await streams.open(300)
            await streams.close_all()
            return statuses

        statuses = asyncio.run(crowd())
    finally:
        done.set()
        if poller.is_alive():
            poller.join(30)
        server.stop()
    assert health and set(health) == {200}, (health, unhealthy)
    assert statuses.count(200) == 300, (
        {s: statuses.count(s) for s in set(statuses)},
        streams.refused[:1],
    )


def test_healthz_does_not_compete_with_the_workers_own_channel_layer(table, own_redis, tmp_path):
    """The worker's channel layer has no connection free (here its pool holds one, taken by
    the open stream's receive; under a burst, by the burst): /healthz, which checks Redis
    through a layer and event loop of its own, still answers 200."""
    encounter = running_fight(table)
    cookie = session_cookie(table.gm)
    env = server_env(own_redis, CHANNEL_LAYER_MAX_CONNECTIONS="1")
    server = start_asgi_server(env, log=tmp_path / "server.log")
    try:
        SseClient(f"{server.url}/encounters/{encounter.pk}/events/", cookie).start()
        # The broadcaster's receive is waiting on Redis, on the pool's one connection.
        assert wait_for(lambda: blocked_clients(own_redis) >= 1), "no receive waiting on Redis"
        answers = [httpx.get(f"{server.url}/healthz", timeout=10) for _ in range(3)]
    finally:
        server.stop()
    assert [a.status_code for a in answers] == [200] * 3, [a.text for a in answers]
