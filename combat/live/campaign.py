"""The campaign's live feed for checks outside combat: the GM's call reaches the asked players'
open pages at once, and each answer the GM's page of the call.

Each member's pages hold one stream per campaign (:func:`campaign_stream`). A stream listens
on a channel-layer group of its own viewer's (:func:`group_name`): whatever a change tells a
user reaches only that user's pages, never another player's nor another campaign's. The news
(checks.signals.calls_changed, after the commit) names what to fetch again, never what
happened: ``prompts`` (the calls waiting for the viewer's characters) or ``call-<id>`` (the
GM's results of one call). The page then fetches the fragment through its view, which checks
access as for any request: a secret roll's result goes to the GM's page alone.

Every stream starts with ``hello``, on which the page fetches its fragments: what changed
between drawing the page and opening the stream (or while a lost stream reconnected) is
caught up. Opening waits its turn and is refused with 503 while the channel layer cannot be
reached, as the encounters' streams are (combat.live.stream)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse

from checks.signals import calls_changed
from combat.live.broadcast import HEARTBEAT_SECONDS, give_back_connections
from combat.live.push import pusher
from combat.live.sse import HEARTBEAT, Message
from combat.live.stream import SUBSCRIBE_SECONDS, live_unavailable, opening, sse_response
from sheets.models import Campaign

logger = logging.getLogger(__name__)

NEWS = "campaign.news"  # channel-layer message: what a viewer's pages are to fetch again
HELLO = Message("hello", "").encode().encode()


def group_name(campaign_id: int, user_id: int) -> str:
    return f"campaign-{campaign_id}-user-{user_id}"


def push_news(sender: Any, *, campaign_id: int, news: dict[int, set[str]], **_: Any) -> None:
    """calls_changed listener (after the commit): each named user's streams are told, off the
    request's thread (push.Pusher)."""
    if get_channel_layer() is None:
        return
    for user_id, events in news.items():
        pusher.send(group_name(campaign_id, user_id), {"type": NEWS, "events": sorted(events)})


def connect_news() -> None:
    """Subscribe :func:`push_news` to the checks' news (done once, in CombatConfig.ready)."""
    calls_changed.connect(push_news, dispatch_uid="live-campaign-news")


def _viewer(request: HttpRequest, pk: int) -> Any:
    """The viewer if they are the campaign's GM or one of its players (None: anonymous; 404:
    anyone else), read on the request's thread, whose connection then goes back at once."""
    try:
        user = request.user
        if not user.is_authenticated:
            return None
        if not Campaign.objects.for_user(user).filter(pk=pk).exists():
            raise Http404("No such campaign.")
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
    layer = get_channel_layer()
    if layer is None:
        return live_unavailable()
    group = group_name(pk, user.pk)
    try:
        channel = await layer.new_channel()
        await asyncio.wait_for(layer.group_add(group, channel), SUBSCRIBE_SECONDS)
    except Exception as exc:  # Redis down: a stream now would hear nothing
        logger.warning("live: campaign %s stream refused (%s: %s)", pk, type(exc).__name__, exc)
        return live_unavailable()
    return sse_response(_stream(layer, group, channel))


async def _stream(layer: Any, group: str, channel: str) -> AsyncIterator[bytes]:
    """Forward the viewer's news as events, a heartbeat in between. One receive stays pending
    in a task of its own (cancelling a Redis layer's receive mid-read can break its
    connection); when it fails, the stream ends and the browser reconnects."""
    news: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()

    async def listen() -> None:
        try:
            while True:
                news.put_nowait(await layer.receive(channel))
        except Exception as exc:  # the layer failed: the stream ends, the browser reconnects
            logger.warning("live: %s stopped hearing (%s: %s)", group, type(exc).__name__, exc)
        finally:
            news.put_nowait(None)

    listener = asyncio.ensure_future(listen())
    try:
        yield HELLO
        while True:
            try:
                message = await asyncio.wait_for(news.get(), HEARTBEAT_SECONDS)
            except TimeoutError:
                yield HEARTBEAT.encode()
                # In the group again: a restarted Redis forgot it, and the layer forgets a
                # member after its group_expiry otherwise.
                await layer.group_add(group, channel)
                continue
            if message is None:
                return
            events = message.get("events", [])
            yield "".join(Message(str(e), "").encode() for e in events).encode()
    except Exception as exc:  # the layer failed: the browser reconnects and fetches again
        logger.warning("live: %s ends (%s: %s)", group, type(exc).__name__, exc)
    finally:
        listener.cancel()
        try:
            await layer.group_discard(group, channel)
        except Exception as exc:  # a stale member expires with the layer's group_expiry
            logger.warning("live: could not leave %s (%s: %s)", group, type(exc).__name__, exc)
