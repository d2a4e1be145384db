"""The campaign streams (``/campaigns/<id>/events/``, opened by every campaign page, sheet and
fight page) under a crowd, as deployed: two uvicorn processes on PostgreSQL with a Redis of the
test's own between them.

Runs in the PostgreSQL run of scripts/test.sh (redis-server must be installed).
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import redis
from channels.layers import channel_layers
from django.conf import settings
from django.db import connection, connections
from django.test import Client

from checks import services as checks
from tests import polling
from tests.factories import make_ysolde
from tests.polling import wait_for
from tests.servers import AsgiServer, RedisServer, start_asgi_server

pytestmark = [pytest.mark.postgres, pytest.mark.live, pytest.mark.django_db(transaction=True)]

PAGES = 300  # half on each process: more than the channel layer's pool (100) closing at once


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


def session_cookie(user: Any) -> str:
    client = Client()
    client.force_login(user)
    return client.cookies["sessionid"].value


def campaign_members(own_redis: RedisServer) -> dict[str, int]:
    """Every campaign group in Redis and how many members it holds."""
    client = redis.Redis.from_url(own_redis.url)
    try:
        return {
            key.decode(): client.zcard(key) for key in client.scan_iter("asgi:group:campaign-*")
        }
    finally:
        client.close()


def warnings_in(*logs: Path) -> list[str]:
    return [
        line
        for log in logs
        for line in log.read_text(errors="replace").splitlines()
        if "WARNING" in line or "Traceback" in line or "Error" in line
    ]


class Page:
    """One open page's campaign stream, as a raw HTTP/1.1 connection."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.text = b""

    @classmethod
    async def open(cls, server: AsgiServer, path: str, cookie: str) -> Page:
        host, port = server.url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(
            f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n"
            f"Cookie: sessionid={cookie}\r\n\r\n".encode()
        )
        await writer.drain()
        page = cls(reader, writer)
        await page.hears(b"event: hello")
        assert b" 200 " in page.text.split(b"\r\n", 1)[0], page.text[:300]
        return page

    async def hears(self, event: bytes) -> None:
        while event not in self.text:
            chunk = await self.reader.read(4096)
            assert chunk, f"the stream closed before {event!r}: {self.text[-300:]!r}"
            self.text += chunk

    def close(self) -> None:
        """The page closes: its connection drops, as when a tab closes."""
        self.writer.transport.abort()


def test_campaign_streams_closing_at_once_leave_no_warning_and_no_member_behind(
    table, own_redis, tmp_path
):
    """300 campaign streams of three users on two processes each hear a call's news; then they
    all close at once: no warning in either server's log (one Redis call per closing stream
    ran the channel layer's pool out: "Too many connections"), and no member is left in any
    campaign group (the closing streams that could not leave stayed there)."""
    assert connection.vendor == "postgresql"
    ysolde = make_ysolde(table.campaign, table.player)
    cookies = [session_cookie(u) for u in (table.gm, table.player, table.outsider)]
    table.campaign.memberships.create(user=table.outsider)
    env = {"REDIS_URL": own_redis.url, "SECRET_KEY": settings.SECRET_KEY}
    logs = [tmp_path / "a.log", tmp_path / "b.log"]
    servers = [start_asgi_server(env, log=log) for log in logs]
    path = f"/campaigns/{table.campaign.pk}/events/"
    target = checks.parse_target(kind="discipline", discipline="Athletics", against="Ambitious")
    try:

        async def crowd() -> dict[str, list[bool]]:
            pages = await asyncio.wait_for(
                asyncio.gather(
                    *(Page.open(servers[i % 2], path, cookies[i % 3]) for i in range(PAGES))
                ),
                120,
            )

            def call_for_ysolde() -> Any:
                try:
                    return checks.call_checks(
                        user=table.gm, campaign=table.campaign, characters=[ysolde], target=target
                    )
                finally:
                    connections.close_all()  # this thread's: the test database is dropped

            call = await asyncio.to_thread(call_for_ysolde)
            # Each user's pages hear their own news, and only theirs.
            expected = [f"event: call-{call.pk}".encode(), b"event: prompts", None]
            heard: dict[str, list[bool]] = {"told": [], "untold": []}
            for i, page in enumerate(pages):
                if (event := expected[i % 3]) is not None:
                    await asyncio.wait_for(page.hears(event), 20)
                    heard["told"].append(True)
            await polling.nothing_within(0.5)  # what the untold pages would have heard by now
            heard["untold"] = [
                b"event: prompts" in p.text or b"event: call-" in p.text for p in pages[2::3]
            ]
            for page in pages:
                page.close()
            return heard

        heard = asyncio.run(crowd())
        assert len(heard["told"]) == PAGES - PAGES // 3
        assert not any(heard["untold"])
        assert wait_for(lambda: not any(campaign_members(own_redis).values()), 20), (
            campaign_members(own_redis)
        )
    finally:
        for s in servers:
            s.stop()
    warned = warnings_in(*logs)
    too_many = [line for line in warned if "too many connections" in line.lower()]
    assert (len(too_many), warned[:3]) == (0, [])
