"""Live encounters: every committed combat log entry reaches every open screen.

The path of an event:

1. A service writes a :class:`~combat.models.CombatLogEntry` and calls ``events.publish``;
   once the transaction commits, :func:`push` sends ``{"id": entry.pk}`` to the encounter's
   group on the channel layer (in memory on a laptop, Redis across processes).
2. Each open page holds a server-sent-events stream (:func:`encounter_stream`, htmx's SSE
   extension on the page). On a message it reads the entries after the last one it sent and
   renders them *for that viewer* (hidden NPC numbers never leave the server for a player),
   then the state panels (initiative, attacks, wounds) for that viewer.
3. A browser that reconnects sends ``Last-Event-ID`` (the last entry id it saw): the stream
   replays the entries after it, or tells the page to reload its panels when the gap is larger
   than :data:`REPLAY_LIMIT`. Because the stream always re-reads the database, nothing is lost
   when a message is dropped and nothing is shown twice.

A comment line every :data:`HEARTBEAT_SECONDS` keeps proxies from closing an idle stream and
refreshes the viewer's presence, which the GM's page shows.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from asgiref.sync import async_to_sync, sync_to_async
from channels.layers import get_channel_layer
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.middleware.csrf import get_token
from django.template.loader import render_to_string
from django.utils import timezone

from combat import events
from combat.access import get_encounter, hidden_ids
from combat.models import CombatLogEntry, Encounter
from config.throttling import CACHE_ERRORS, cache_unavailable
from sheets.ids import parse_id

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

logger = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 15.0
REPLAY_LIMIT = 200
PRESENCE_SECONDS = 40  # a viewer counts as connected this long after its last heartbeat
ENTRY = "encounter.entry"  # channel-layer message: a log entry was committed
PRESENCE = "encounter.presence"  # channel-layer message: a viewer connected or left
GONE = "gone"  # SSE event: the viewer lost access; the page stops following


def group_name(encounter_id: int) -> str:
    return f"encounter-{encounter_id}"


def presence_group_name(encounter_id: int) -> str:
    """The streams that show who is connected (the GM's): a viewer coming or going is news
    to them only, so a table of n phones costs n messages to connect, not n squared."""
    return f"encounter-{encounter_id}-presence"


def push(entry: CombatLogEntry) -> None:
    """events listener: tell every stream of the encounter that an entry was committed."""
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass  # the usual case: a sync view or service in a worker thread
    else:
        logger.warning("live push skipped for entry %s: called inside an event loop", entry.pk)
        return
    async_to_sync(layer.group_send)(group_name(entry.encounter_id), {"type": ENTRY, "id": entry.pk})


def connect_push() -> Callable[[], None]:
    """Subscribe :func:`push` to the combat events (done once, in CombatConfig.ready)."""
    return events.subscribe(push)


# --- What a viewer is sent -------------------------------------------------------------------

#: Renders the state panels of an encounter for one viewer: a mapping of SSE event name ->
#: HTML. The encounter page registers its own (combat.views); until then nothing is sent.
#: The third argument is a CSRF token for the viewer's forms (None: forms without one).
StateRenderer = Callable[[Encounter, "AbstractBaseUser", str | None], dict[str, str]]
_state_renderer: list[StateRenderer] = []


def register_state_renderer(renderer: StateRenderer) -> None:
    _state_renderer[:] = [renderer]


#: Renders who is connected for one viewer (the GM), or None for viewers who are not shown it.
PresenceRenderer = Callable[[Encounter, "AbstractBaseUser"], str | None]
_presence_renderer: list[PresenceRenderer] = []


def register_presence_renderer(renderer: PresenceRenderer) -> None:
    _presence_renderer[:] = [renderer]


def presence_messages(encounter: Encounter, user: AbstractBaseUser) -> list[Message]:
    out = []
    for renderer in _presence_renderer:
        html = renderer(encounter, user)
        if html is not None:
            out.append(Message("presence", html))
    return out


@dataclass(frozen=True)
class Message:
    """One server-sent event."""

    event: str
    data: str
    id: int | None = None

    def encode(self) -> str:
        lines = [f"event: {self.event}"]
        if self.id is not None:
            lines.append(f"id: {self.id}")
        # SSE data may span lines: each line gets its own "data:" prefix.
        lines += [f"data: {line}" for line in (self.data.splitlines() or [""])]
        return "\n".join(lines) + "\n\n"


def hidden_participants(encounter: Encounter, user: AbstractBaseUser) -> set[int]:
    """The same rule as the page: hidden from everyone but the GM and the character's owner."""
    return hidden_ids(encounter, user)


def still_allowed(encounter: Encounter, user: AbstractBaseUser) -> bool:
    """Whether the viewer may still follow the encounter (a player removed from the campaign,
    or a deleted encounter, may not): checked on every message and heartbeat."""
    return Encounter.objects.for_user(user).filter(pk=encounter.pk).exists()


def messages_after(
    encounter: Encounter,
    user: AbstractBaseUser,
    after: int | None,
    csrf_token: str | None = None,
) -> list[Message]:
    """Everything a viewer who saw entries up to ``after`` needs: the newer entries, one event
    each (or a ``reset`` when there are too many), then the state panels. ``after`` None is a
    fresh page, which already shows the current state."""
    if after is None:
        return []
    hidden = hidden_participants(encounter, user)
    entries = list(
        CombatLogEntry.objects.filter(encounter=encounter, pk__gt=after)
        .select_related("actor")
        .order_by("pk")[: REPLAY_LIMIT + 1]
    )
    out: list[Message] = []
    if len(entries) > REPLAY_LIMIT:
        latest = CombatLogEntry.objects.filter(encounter=encounter).order_by("-pk").first()
        out.append(Message("reset", "", latest.pk if latest else after))
    else:
        for entry in entries:
            html = render_to_string(
                "combat/live_entry.html", {"entry": entry, "text": entry.text_for(user, hidden)}
            )
            out.append(Message("entry", html, entry.pk))
    if entries:
        # The stream holds the Encounter it opened with: its status, round and turn are read
        # again here, or every panel would show the fight as it was when the page connected.
        try:
            encounter.refresh_from_db()
        except Encounter.DoesNotExist:
            return out  # deleted meanwhile: the stream's next check says it is gone
        for renderer in _state_renderer:
            for event, html in renderer(encounter, user, csrf_token).items():
                out.append(Message(event, html))
    return out


def latest_entry_id(encounter: Encounter) -> int:
    latest = CombatLogEntry.objects.filter(encounter=encounter).order_by("-pk").first()
    return latest.pk if latest else 0


# --- Presence -----------------------------------------------------------------------------


def _presence_key(encounter_id: int, user_id: int) -> str:
    return f"presence:{encounter_id}:{user_id}"


# Presence is a nicety for the GM: with the cache down (Redis restarting), streams and pages
# carry on and the GM sees nobody as connected until it is back (docs/deploy.md).


def mark_present(encounter_id: int, user_id: int) -> None:
    try:
        cache.set(
            _presence_key(encounter_id, user_id), timezone.now().isoformat(), PRESENCE_SECONDS
        )
    except CACHE_ERRORS as exc:
        cache_unavailable(exc)


def mark_absent(encounter_id: int, user_id: int) -> None:
    try:
        cache.delete(_presence_key(encounter_id, user_id))
    except CACHE_ERRORS as exc:
        cache_unavailable(exc)


def present_users(encounter: Encounter, user_ids: list[int]) -> set[int]:
    """Which of ``user_ids`` have an open stream on the encounter (any process, when the cache
    is shared: Redis in a deployment). Nobody, while the cache cannot be reached."""
    try:
        found = cache.get_many([_presence_key(encounter.pk, uid) for uid in user_ids])
    except CACHE_ERRORS as exc:
        cache_unavailable(exc)
        return set()
    return {uid for uid in user_ids if _presence_key(encounter.pk, uid) in found}


# --- The stream ---------------------------------------------------------------------------


def _last_seen(request: HttpRequest) -> int | None:
    raw = request.headers.get("Last-Event-ID") or request.GET.get("after") or ""
    return parse_id(raw)


async def encounter_stream(request: HttpRequest, pk: int) -> HttpResponse:
    """``GET /encounters/<pk>/events/``: the encounter's live feed for this viewer (SSE)."""
    user = await request.auser()
    if not user.is_authenticated:
        return HttpResponse("Log in to follow this encounter.", status=403)
    encounter = await sync_to_async(get_encounter)(user, pk)
    after = _last_seen(request)
    # Forms in the panels sent down the stream carry a token for this viewer's CSRF cookie.
    csrf_token = get_token(request)
    response = StreamingHttpResponse(
        _stream(encounter, user, after, csrf_token), content_type="text/event-stream"
    )
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx: do not buffer the stream
    return response


async def _stream(
    encounter: Encounter, user: AbstractBaseUser, after: int | None, csrf_token: str | None
) -> AsyncIterator[str]:
    layer = get_channel_layer()
    channel = await layer.new_channel()
    group = group_name(encounter.pk)
    presence_group = presence_group_name(encounter.pk)
    shows_presence = await sync_to_async(lambda: encounter.campaign.is_gm(user))()
    await layer.group_add(group, channel)
    if shows_presence:
        await layer.group_add(presence_group, channel)
    await sync_to_async(mark_present)(encounter.pk, user.pk)
    await layer.group_send(presence_group, {"type": PRESENCE})
    try:
        # Subscribe first, then read: an entry committed in between is read now and its
        # message only makes us look again (and find nothing new), never lost.
        if after is None:
            after = await sync_to_async(latest_entry_id)(encounter)
        else:
            for message in await sync_to_async(messages_after)(encounter, user, after, csrf_token):
                after = message.id if message.id is not None else after
                yield message.encode()
        # Always something at once: some servers (daphne, behind runserver) send the headers
        # only with the first bytes, and a page with nothing to catch up on would otherwise
        # wait for the first heartbeat before the browser calls the stream open.
        yield Message("hello", "", after).encode()
        # One receive is kept pending across heartbeats rather than cancelled and restarted:
        # cancelling a Redis layer's receive mid-read can break its connection.
        pending: asyncio.Future[Any] | None = None
        try:
            while True:
                if pending is None:
                    pending = asyncio.ensure_future(layer.receive(channel))
                done, _ = await asyncio.wait({pending}, timeout=HEARTBEAT_SECONDS)
                if not await sync_to_async(still_allowed)(encounter, user):
                    yield Message(GONE, "").encode()
                    return
                if not done:
                    await sync_to_async(mark_present)(encounter.pk, user.pk)
                    yield ": heartbeat\n\n"
                    if shows_presence:
                        # Viewers whose heartbeat stopped drop off the GM's list here.
                        for message in await sync_to_async(presence_messages)(encounter, user):
                            yield message.encode()
                    continue
                received = pending.result()
                pending = None
                if received.get("type") == PRESENCE:
                    # Someone came or went: the GM's list is drawn again. (A viewer who closes
                    # one of two tabs shows as away until the other tab's next heartbeat.)
                    for message in await sync_to_async(presence_messages)(encounter, user):
                        yield message.encode()
                    continue
                for message in await sync_to_async(messages_after)(
                    encounter, user, after, csrf_token
                ):
                    after = message.id if message.id is not None else after
                    yield message.encode()
        finally:
            if pending is not None:
                pending.cancel()
    finally:
        await layer.group_discard(group, channel)
        if shows_presence:
            await layer.group_discard(presence_group, channel)
        await sync_to_async(mark_absent)(encounter.pk, user.pk)
        await layer.group_send(presence_group, {"type": PRESENCE})
