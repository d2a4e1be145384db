"""The server-sent-events stream of one viewer (:func:`encounter_stream`, and the table
displays' through :func:`stream_response`): a queue the encounter's broadcaster fills.
Opening one waits its turn (live.streams.opening), is refused with 503 while the channel
layer cannot be reached, and announces its viewer coming and going in one go per encounter
(:class:`PresenceNews`)."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import weakref
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse

from combat.access import get_encounter
from combat.live.broadcast import Subscriber, broadcaster, viewers_here
from combat.live.presence import write_presence
from combat.live.push import PRESENCE, presence_group_name
from combat.models import Encounter
from live.streams import (
    SUBSCRIBE_SECONDS,
    give_back_connections,
    live_unavailable,
    opening,
    sse_response,
)
from sheets.ids import parse_id

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)

PRESENCE_DEBOUNCE_SECONDS = 0.25  # viewers coming and going in this window: one announcement


class PresenceNews:
    """Viewers coming and going in this process, told in one go per encounter: the cache
    written in one call, then one message to the encounter's presence group, at most once per
    :data:`PRESENCE_DEBOUNCE_SECONDS`. A stream that opens or closes only notes its viewer
    here. (One message per closing stream made a thousand pages closing at once a thousand
    sends: the Redis pool's connections ran out, and the GM's channels overflowed.)"""

    def __init__(self) -> None:
        self.touched: dict[int, set[int]] = {}  # encounter id: viewers who came or went
        self.task: asyncio.Task[None] | None = None

    def touch(self, encounter_id: int, user_id: int) -> None:
        self.touched.setdefault(encounter_id, set()).add(user_id)
        if self.task is None:
            # Outside the request that touched first (an empty context), as the broadcaster.
            loop = asyncio.get_running_loop()
            self.task = loop.create_task(self._run(loop), context=contextvars.Context())

    async def _run(self, loop: asyncio.AbstractEventLoop) -> None:
        try:
            while True:
                await asyncio.sleep(PRESENCE_DEBOUNCE_SECONDS)
                touched, self.touched = self.touched, {}
                if not touched:
                    return
                try:
                    await self._tell(loop, touched)
                except Exception:  # presence is a nicety: the next heartbeat redraws it
                    logger.exception("live: presence update failed for %s", sorted(touched))
        finally:
            self.task = None

    async def _tell(self, loop: asyncio.AbstractEventLoop, touched: dict[int, set[int]]) -> None:
        watching: dict[int, set[int]] = {}
        for encounter_id in touched:
            viewers = viewers_here(encounter_id, loop)
            if viewers is not None:
                watching[encounter_id] = viewers
        await sync_to_async(write_presence, thread_sensitive=False)(touched, watching)
        layer = get_channel_layer()
        assert layer is not None  # the feed runs only with a layer (CHANNEL_LAYERS)
        failed: list[str] = []
        for encounter_id in touched:
            try:
                await layer.group_send(presence_group_name(encounter_id), {"type": PRESENCE})
            except Exception as exc:  # a nicety: the next heartbeat redraws the GM's list
                failed.append(f"{encounter_id} ({type(exc).__name__}: {exc})")
        if failed:
            logger.warning("live: could not announce presence for encounters %s", failed)

    async def flushed(self) -> None:
        """Wait until what was touched so far is told (for tests)."""
        while self.task is not None:
            await asyncio.wait([self.task])


#: Per event loop (one per process under a server; tests run several).
_presence_news: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, PresenceNews]
_presence_news = weakref.WeakKeyDictionary()


def presence_news() -> PresenceNews:
    loop = asyncio.get_running_loop()
    news = _presence_news.get(loop)
    if news is None:
        news = _presence_news[loop] = PresenceNews()
    return news


def last_seen(request: HttpRequest) -> int | None:
    """The last entry id the browser saw (``Last-Event-ID`` on a reconnect, else ``?after=``)."""
    raw = request.headers.get("Last-Event-ID") or request.GET.get("after") or ""
    return parse_id(raw)


def _open(request: HttpRequest, pk: int) -> tuple[User | None, Encounter | None]:
    """The viewer and the encounter (its session, its user, the encounter), read in one go on
    the request's thread (at most live.streams.OPENING_AT_ONCE at once), whose connection then goes
    back at once: Django gives a request's connection back only when the response ends, hours
    later for a stream. (Read in two hops, the session's and the encounter's, a burst of pages
    opening held each connection across the wait between them, and the pool ran out.)"""
    try:
        user = request.user
        if not user.is_authenticated:
            return None, None
        return user, get_encounter(user, pk)
    finally:
        give_back_connections()


async def encounter_stream(request: HttpRequest, pk: int) -> HttpResponse | StreamingHttpResponse:
    """``GET /encounters/<pk>/events/``: the encounter's live feed for this viewer (SSE)."""
    async with opening():
        user, encounter = await sync_to_async(_open)(request, pk)
    if user is None or encounter is None:
        return HttpResponse("Log in to follow this encounter.", status=403)
    return await stream_response(encounter, user, last_seen(request))


async def stream_response(
    encounter: Encounter, user: User, after: int | None
) -> HttpResponse | StreamingHttpResponse:
    """The SSE response of one viewer of ``encounter``, fed by its broadcaster: the encounter
    page's viewers, and the table displays (combat/display.py), which are one more viewer."""
    feed = broadcaster(encounter)
    if not await feed.wait_subscribed(SUBSCRIBE_SECONDS):
        # The channel layer cannot be reached (Redis down): a stream now would hear nothing.
        return live_unavailable()
    return sse_response(_stream(encounter, user, after))


async def _stream(encounter: Encounter, user: User, after: int | None) -> AsyncIterator[bytes]:
    """A plain generator over the queue the encounter's broadcaster fills: no database, no
    thread, no channel-layer call of its own."""
    subscriber = Subscriber(user, after, asyncio.Queue())
    # The view's, or a new one if that one ended meanwhile (then, should the layer still
    # fail, the new one ends this stream at once and the browser reconnects).
    feed = broadcaster(encounter)
    feed.add(subscriber)
    news = presence_news()
    news.touch(encounter.pk, user.pk)
    try:
        while True:
            chunk = await subscriber.queue.get()
            if chunk is None:
                return
            yield chunk
    finally:
        feed.remove(subscriber)
        news.touch(encounter.pk, user.pk)
