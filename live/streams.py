"""What every live stream does alike, an encounter's (combat.live.stream) and a campaign's
(checks.live): open in turn, give the request's database connection back at once, answer
503 while the channel layer cannot be reached, and stream without reading the database."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator

from django.db import connections
from django.http import HttpResponse, StreamingHttpResponse

HEARTBEAT_SECONDS = 15.0  # a feed checks access again, and keeps proxies awake, this often
SUBSCRIBE_SECONDS = 3.0  # a new stream waits at most this long for the channel layer
RETRY_AFTER = 5  # seconds a stream refused for want of the channel layer is asked to wait

#: How many streams of a process read what they need to open at once: a burst of pages
#: opening, each holding a connection while it waits for the pool, ran the pool dry until
#: DB_POOL_TIMEOUT turned them away (300 pages opening at once were 300 threads waiting for 2
#: connections). So opening streams takes at most this many of the pool's connections: the
#: others stay free for the actions.
OPENING_AT_ONCE = 4
_openings: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore]
_openings = weakref.WeakKeyDictionary()


def opening() -> asyncio.Semaphore:
    """Held while a stream reads what it needs to open (:data:`OPENING_AT_ONCE`)."""
    loop = asyncio.get_running_loop()
    found = _openings.get(loop)
    if found is None:
        found = _openings[loop] = asyncio.Semaphore(OPENING_AT_ONCE)
    return found


def give_back_connections() -> None:
    """This thread's database connections go back (to the pool), unless a transaction is
    open (a test's): a stream must not keep the one its request opened for its whole life."""
    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:
            connection.close()


def live_unavailable() -> HttpResponse:
    response = HttpResponse(
        f"Live updates are unavailable; retry in {RETRY_AFTER} seconds.",
        status=503,
        content_type="text/plain",
    )
    response["Retry-After"] = str(RETRY_AFTER)
    return response


def sse_response(events: AsyncIterator[bytes]) -> StreamingHttpResponse:
    """The response of a stream that reads no database while it runs (its request's
    connection went back when it opened: the broadcaster, or the channel layer, feeds it)."""
    response = StreamingHttpResponse(events, content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx: do not buffer the stream
    # config.db_pool need not hand a connection back after every chunk.
    response.reads_no_database = True  # type: ignore[attr-defined]  # read by config.db_pool
    return response
