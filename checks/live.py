"""The campaign's live feed for checks outside combat: the GM's call reaches the asked players'
open pages at once, and each answer the GM's page of the call.

Each member's pages hold one stream per campaign (:func:`campaign_stream`). The streams of one
campaign in one process share one :class:`CampaignFeed`, the only listener on the campaign's
group (:func:`group_name`), as an encounter's streams share its broadcaster:

- A change is **one message per campaign** (checks.signals.calls_changed, after the commit,
  handed to live.pusher.Pusher: off the request's thread, in order). It names, for each user whose
  pages are out of date, what to fetch again, never what happened: ``prompts`` (the calls
  waiting for the viewer's characters) or ``call-<id>`` (the GM's results of one call). Each
  feed hands every stream of a named user its events, and nothing to anyone else's: a
  secret roll's result goes to the GM's page alone, which fetches it through its view (which
  checks access as for any request).
- **Access is checked again** at each heartbeat and whenever the feed is woken
  (:func:`wake`: a player removed, the campaign or an account deleted; combat/live/wakes.py),
  in one query for all its streams: a viewer who lost access is sent ``gone`` and their stream
  ends (the page stops following).
- **Streams coming and going cost the channel layer nothing**: the feed joins the group when
  its first stream opens and leaves it (in ``finally``, whatever ended it) when its last one
  closes. A thousand pages closing at once are one ``group_discard``, not a thousand (which
  ran the Redis pool out and left stale members behind). It joins again at each heartbeat, so
  a restarted Redis hears it again and a member left behind by a dead process expires with
  the layer's ``group_expiry``.

Every stream starts with ``hello``, on which the page fetches its fragments: what changed
between drawing the page and opening the stream (or while a lost stream reconnected) is
caught up. Opening waits its turn and is refused with 503 while the channel layer cannot be
reached, as the encounters' streams are (live.streams)."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse

from checks.access import get_campaign
from checks.signals import calls_changed
from config.throttling import CACHE_ERRORS
from live.pusher import pusher
from live.sse import GONE, HEARTBEAT, Message
from live.streams import (
    HEARTBEAT_SECONDS,
    SUBSCRIBE_SECONDS,
    give_back_connections,
    live_unavailable,
    opening,
    sse_response,
)
from sheets.models import Campaign, Membership

if TYPE_CHECKING:
    from sheets.users import User

logger = logging.getLogger(__name__)

NEWS = "campaign.news"  # channel-layer message: what some viewers' pages are to fetch again
WAKE = "campaign.wake"  # channel-layer message: check the viewers' access now
HELLO = Message("hello", "").encode().encode()
GONE_EVENT = Message(GONE, "").encode().encode()
#: A feed hands a message to this many streams at a time, and pauses :data:`DELIVER_PAUSE`
#: seconds between two slices: the event loop serves the other requests (the one that made the
#: news, say) and the threads running their views get the GIL, rather than waiting until a
#: thousand streams have written.
DELIVER_SLICE = 32
DELIVER_PAUSE = 0.001


def group_name(campaign_id: int) -> str:
    return f"campaign-{campaign_id}"


def push_news(sender: Any, *, campaign_id: int, news: dict[int, set[str]], **_: Any) -> None:
    """calls_changed listener (after the commit): one message to the campaign's feeds, sent
    off the request's thread (live.pusher.Pusher). The users are pairs, not a map: a channel layer's
    message keys are strings."""
    if get_channel_layer() is None or not news:
        return
    told = [[user_id, sorted(events)] for user_id, events in sorted(news.items())]
    pusher.send(group_name(campaign_id), {"type": NEWS, "news": told})


def wake(campaign_id: int) -> None:
    """Ask the campaign's feeds to check their viewers' access now: a removed player's and a
    deleted campaign's streams end at once, not at the next heartbeat."""
    if get_channel_layer() is None:
        return
    pusher.send(group_name(campaign_id), {"type": WAKE})


def connect_news() -> None:
    """Subscribe :func:`push_news` to the checks' news (done once, in ChecksConfig.ready)."""
    calls_changed.connect(push_news, dispatch_uid="live-campaign-news")


def allowed_viewers(campaign_id: int, user_ids: Iterable[int]) -> set[int]:
    """Which of ``user_ids`` may still follow the campaign: its GM and its players, in one
    query however many streams there are (nobody, once the campaign is deleted)."""
    ids = list(user_ids)
    players = Membership.objects.filter(campaign_id=campaign_id, user_id__in=ids)
    gm = Campaign.objects.filter(pk=campaign_id, gm_id__in=ids)
    # Unordered, its parts and itself: the models' default orders name none of its columns.
    either = (
        players.order_by()
        .values_list("user_id", flat=True)
        .union(gm.order_by().values_list("gm_id", flat=True), all=True)
    )
    return set(either.order_by())


@dataclass(eq=False)
class Viewer:
    """One open stream: its viewer, and the queue the feed fills (None: the stream ends)."""

    user_id: int
    queue: asyncio.Queue[bytes | None]


class CampaignFeed:
    """The campaign's live feed in this process: one listener on the channel layer for every
    open stream of the campaign (see the module's docstring)."""

    def __init__(self, campaign_id: int) -> None:
        self.campaign_id = campaign_id
        self.viewers: set[Viewer] = set()
        self.loop = asyncio.get_running_loop()
        self.check_due = asyncio.Event()  # access is to be checked again
        #: True once in its group on the channel layer, False when that failed.
        self.subscribed: asyncio.Future[bool] = self.loop.create_future()
        # Outside the request that opened the first stream (an empty context), as the
        # encounters' broadcaster: its database work is not bound to that request's thread.
        self.task = self.loop.create_task(self.run(), context=contextvars.Context())
        self.task.add_done_callback(lambda _: self._unsubscribed())

    def add(self, viewer: Viewer) -> None:
        self.viewers.add(viewer)

    def remove(self, viewer: Viewer) -> None:
        self.viewers.discard(viewer)
        if not self.viewers:
            self._forget()
            self.task.cancel()

    def _unsubscribed(self) -> None:
        if not self.subscribed.done():
            self.subscribed.set_result(False)

    def _forget(self) -> None:
        if _feeds.get(self.campaign_id) is self:
            del _feeds[self.campaign_id]

    async def wait_subscribed(self, timeout: float) -> bool:
        """Whether the feed is in its group, waiting up to ``timeout`` seconds."""
        try:
            return await asyncio.wait_for(asyncio.shield(self.subscribed), timeout)
        except TimeoutError:
            return False

    async def _deliver(self, chunks: dict[int, bytes]) -> None:
        """Each stream of a user named in ``chunks`` gets that user's chunk, a slice of
        :data:`DELIVER_SLICE` streams at a time."""
        told = [v for v in list(self.viewers) if v.user_id in chunks]
        for start in range(0, len(told), DELIVER_SLICE):
            if start:
                await asyncio.sleep(DELIVER_PAUSE)  # the woken streams write, the rest go on
            for v in told[start : start + DELIVER_SLICE]:
                v.queue.put_nowait(chunks[v.user_id])

    async def _news(self, message: dict[str, Any]) -> None:
        chunks: dict[int, bytes] = {}
        for user_id, events in message.get("news", []):
            chunks[int(user_id)] = "".join(Message(str(e), "").encode() for e in events).encode()
        await self._deliver(chunks)

    async def _check_access(self) -> None:
        """End the streams whose viewer may no longer follow the campaign (``gone``)."""
        viewers = list(self.viewers)
        if not viewers:
            return

        def work() -> set[int]:
            try:
                return allowed_viewers(self.campaign_id, {v.user_id for v in viewers})
            finally:
                give_back_connections()  # the feed holds no connection between checks

        try:
            allowed = await sync_to_async(work)()
        except Exception:
            # The database restarting, say: the streams carry on, the next check reads again.
            logger.exception("live: access check failed for campaign %s", self.campaign_id)
            return
        for v in viewers:
            if v.user_id not in allowed:
                self.viewers.discard(v)
                v.queue.put_nowait(GONE_EVENT)
                v.queue.put_nowait(None)

    async def _listen(self, layer: Any, channel: str) -> None:
        """Receive the group's messages as they come: news is handed to the streams at once
        (no database); a wake has :meth:`run` check access (several in a row: one check)."""
        while True:
            message = await layer.receive(channel)
            if message.get("type") == NEWS:
                await self._news(message)
            else:
                self.check_due.set()

    async def run(self) -> None:
        layer = get_channel_layer()
        assert layer is not None  # the feed runs only with a layer (CHANNEL_LAYERS)
        group = group_name(self.campaign_id)
        channel: str | None = None
        listener: asyncio.Future[None] | None = None
        try:
            channel = await layer.new_channel()
            await layer.group_add(group, channel)
            self.subscribed.set_result(True)
            # One receive stays pending for the feed's life, in a task of its own (cancelling
            # a Redis layer's receive mid-read can break its connection); its failure ends the
            # feed and its streams.
            listener = asyncio.ensure_future(self._listen(layer, channel))
            listener.add_done_callback(lambda _: self.check_due.set())
            next_beat = self.loop.time() + HEARTBEAT_SECONDS
            while True:
                timeout = max(0.0, next_beat - self.loop.time())
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.check_due.wait(), timeout)
                self.check_due.clear()
                if listener.done():
                    listener.result()  # its error, if any, ends the feed
                    return
                if self.loop.time() >= next_beat:
                    if not self.viewers:
                        return  # opened for a stream that never started
                    next_beat = self.loop.time() + HEARTBEAT_SECONDS
                    # In the group again: a restarted Redis forgot it, and the layer forgets
                    # a member after its group_expiry otherwise.
                    await layer.group_add(group, channel)
                    for v in list(self.viewers):
                        v.queue.put_nowait(HEARTBEAT.encode())
                await self._check_access()
        except Exception as exc:
            # The channel layer failed (Redis down or restarting): the streams end, and their
            # browsers reconnect and fetch again.
            logger.warning(
                "live: the channel layer failed for campaign %s (%s: %s); %d streams end",
                self.campaign_id,
                type(exc).__name__,
                exc,
                len(self.viewers),
                exc_info=not isinstance(exc, CACHE_ERRORS),  # a bug's traceback, not Redis's
            )
        finally:
            self._unsubscribed()
            if listener is not None:
                listener.cancel()
            self._forget()
            for v in self.viewers:
                v.queue.put_nowait(None)
            self.viewers.clear()
            if channel is not None:
                try:
                    await layer.group_discard(group, channel)
                except Exception as exc:  # a stale member expires with the group_expiry
                    name = type(exc).__name__
                    logger.warning("live: could not leave %s (%s: %s)", group, name, exc)


#: The campaign feeds of this process, by campaign id (the event loop's own).
_feeds: dict[int, CampaignFeed] = {}


def campaign_feed(campaign_id: int) -> CampaignFeed:
    found = _feeds.get(campaign_id)
    if found is None or found.task.done() or found.loop is not asyncio.get_running_loop():
        found = _feeds[campaign_id] = CampaignFeed(campaign_id)
    return found


def _viewer(request: HttpRequest, pk: int) -> User | None:
    """The viewer if they are the campaign's GM or one of its players (None: anonymous; 404:
    anyone else), read on the request's thread, whose connection then goes back at once."""
    try:
        user = request.user
        if not user.is_authenticated:
            return None
        get_campaign(user, pk)  # 404 to anyone but its GM and players
        return user
    finally:
        give_back_connections()


async def campaign_stream(request: HttpRequest, pk: int) -> HttpResponse | StreamingHttpResponse:
    """``GET /campaigns/<pk>/events/``: what the viewer's pages of the campaign are to fetch
    again (SSE)."""
    async with opening():
        user = await sync_to_async(_viewer)(request, pk)
    if user is None:
        return HttpResponse("Log in to follow this campaign.", status=403)
    if get_channel_layer() is None:
        return live_unavailable()
    if not await campaign_feed(pk).wait_subscribed(SUBSCRIBE_SECONDS):
        # The channel layer cannot be reached (Redis down): a stream now would hear nothing.
        return live_unavailable()
    return sse_response(_stream(pk, user.pk))


async def _stream(campaign_id: int, user_id: int) -> AsyncIterator[bytes]:
    """A plain generator over the queue the campaign's feed fills: no database, no thread, no
    channel-layer call of its own."""
    viewer = Viewer(user_id, asyncio.Queue())
    # The view's, or a new one if that one ended meanwhile (should the layer still fail, the
    # new one ends this stream at once and the browser reconnects).
    feed = campaign_feed(campaign_id)
    feed.add(viewer)
    try:
        yield HELLO
        while True:
            chunk = await viewer.queue.get()
            if chunk is None:
                return
            yield chunk
    finally:
        feed.remove(viewer)
