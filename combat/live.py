"""Live encounters: every committed combat log entry reaches every open screen.

The path of an event:

1. A service writes a :class:`~combat.models.CombatLogEntry` and calls ``events.publish``;
   once the transaction commits, :func:`push` hands ``{"id": entry.pk}`` for the encounter's
   group on the channel layer (in memory on a laptop, Redis across processes) to the
   :class:`Pusher`, which sends it off the request's thread, in order.
2. Each open page holds a server-sent-events stream (:func:`encounter_stream`, htmx's SSE
   extension on the page). The streams of one encounter in one process share one
   :class:`Broadcaster`: it alone listens to the group, and on a message it reads the new
   entries once, checks once who may still see the encounter, draws the entries and the
   tracker once per audience (the GM; the players, hidden NPCs masked; a player who may see
   more than the others, on their own: combat.render.LiveTracker) and hands the same text to
   every stream of that audience. Its database work runs on one thread of its own, and the
   connection goes back (to the pool) after each pass: a stream holds none.
3. A browser that reconnects sends ``Last-Event-ID`` (the last entry id it saw): the
   broadcaster replays the entries after it, or tells the page to reload its panels when the
   gap is larger than :data:`REPLAY_LIMIT`. Each stream remembers the last entry it was sent,
   and every pass re-reads the database from the oldest of them: nothing is lost when a
   message is dropped, and nothing is sent twice.

Every :data:`HEARTBEAT_SECONDS` the broadcaster checks access again, sends each stream a comment
line (proxies keep an idle stream open), refreshes its viewers' presence, which the GM's page
shows, and subscribes to its groups again (a Redis that restarted has forgotten them).

When the channel layer fails under it (Redis down), the broadcaster ends all its streams rather
than leave them silent: each browser reconnects on its own and catches up from the last entry it
saw. A stream that opens while the layer cannot be reached is answered 503 with Retry-After
(htmx's SSE extension tries again, backing off), and works again as soon as Redis is back.
Viewers coming and going are announced once per encounter and per
:data:`PRESENCE_DEBOUNCE_SECONDS` in each process (:class:`PresenceNews`), not once per stream: a
thousand pages closing at once cost a few channel-layer messages, not a thousand.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import contextvars
import logging
import os
import threading
import weakref
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from asgiref.sync import SyncToAsync, sync_to_async
from channels.layers import get_channel_layer
from django.core.cache import cache
from django.db import connections
from django.db.models import F
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.template.loader import render_to_string
from django.utils import timezone

from combat import events
from combat.access import get_encounter, hidden_ids
from combat.models import CombatLogEntry, DisplayLink, Encounter
from config.throttling import CACHE_ERRORS, cache_unavailable
from sheets.ids import parse_id
from sheets.models import Membership

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

logger = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 15.0
REPLAY_LIMIT = 200
EARLY_WAIT_SECONDS = 0.05  # at most this long a pass waits for its entries to be written
PRESENCE_SECONDS = 40  # a viewer counts as connected this long after its last heartbeat
PRESENCE_DEBOUNCE_SECONDS = 0.25  # viewers coming and going in this window: one announcement
SUBSCRIBE_SECONDS = 3.0  # a new stream waits at most this long for the channel layer
RETRY_AFTER = 5  # seconds a stream refused for want of the channel layer is asked to wait
ENTRY = "encounter.entry"  # channel-layer message: a log entry was committed
PRESENCE = "encounter.presence"  # channel-layer message: a viewer connected or left
GONE = "gone"  # SSE event: the viewer lost access; the page stops following
HEARTBEAT = ": heartbeat\n\n"  # an SSE comment: keeps proxies from closing an idle stream


def group_name(encounter_id: int) -> str:
    return f"encounter-{encounter_id}"


def presence_group_name(encounter_id: int) -> str:
    """The streams that show who is connected (the GM's): a viewer coming or going is news
    to them only, so a table of n phones costs n messages to connect, not n squared."""
    return f"encounter-{encounter_id}-presence"


def push(entry: CombatLogEntry) -> None:
    """events listener: tell every stream of the encounter that an entry was committed.

    Runs after the commit (events.publish), and only hands the message over: the channel
    layer's send happens off the request's thread (:class:`Pusher`)."""
    if get_channel_layer() is None:
        return
    _pusher.send(group_name(entry.encounter_id), {"type": ENTRY, "id": entry.pk})


class Pusher:
    """Sends channel-layer messages off the caller's thread, in the order they were handed
    over (per event loop).

    Under ASGI a request's sync code runs in a worker thread while the server's event loop
    runs the streams: the send is scheduled on that loop (which is also the loop the
    in-memory layer's listeners wait on) and the request goes on at once. Anywhere else (a
    management command, WSGI, the test client) the sends go to one daemon thread with an
    event loop of its own. Each send waits for the one handed over before it on the same
    loop, so one encounter's messages go out in order. A send that fails is logged: the
    broadcasters re-read the log from what each stream was last sent, so a lost wake-up
    only delays an event until the next one or the next heartbeat."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._own: asyncio.AbstractEventLoop | None = None
        #: The last send scheduled on each loop (the next one waits for it).
        self._tails: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Future[None]]
        self._tails = weakref.WeakKeyDictionary()

    def send(self, group: str, message: dict[str, Any]) -> None:
        loop = self._server_loop() or self._own_loop()
        loop.call_soon_threadsafe(self._schedule, loop, group, message)

    def _server_loop(self) -> asyncio.AbstractEventLoop | None:
        """The event loop of the ASGI server this thread serves a request for, if any."""
        loop = getattr(SyncToAsync.threadlocal, "main_event_loop", None)
        pid = getattr(SyncToAsync.threadlocal, "main_event_loop_pid", None)
        if loop is None or pid != os.getpid() or loop.is_closed() or not loop.is_running():
            return None
        return loop

    def _own_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._own is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="live-push", daemon=True).start()
                self._own = loop
            return self._own

    def _schedule(self, loop: asyncio.AbstractEventLoop, group: str, message: dict) -> None:
        """On ``loop``: start the send after the one before it."""
        task = loop.create_task(self._send(self._tails.get(loop), group, message))
        self._tails[loop] = task

    async def _send(self, before: asyncio.Future[None] | None, group: str, message: dict) -> None:
        if before is not None:
            await asyncio.wait([before])
        try:
            await get_channel_layer().group_send(group, message)
        except CACHE_ERRORS as exc:
            # Redis down: one line per action, not a traceback each; its pages catch up when
            # they reconnect (their streams ended with the layer).
            name = type(exc).__name__
            logger.warning("live push failed (%s: %s): %s to %s", name, exc, message, group)
        except Exception:  # a live push must never break anything: the log holds the entry
            logger.exception("live push failed: %s to %s", message, group)

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait (from a thread that is not the loop's) until the sends handed over from
        threads outside a server have gone out; False on timeout. For tests, benchmarks and
        the process's exit."""
        loop = self._own
        if loop is None or not loop.is_running():
            return True

        async def last() -> None:
            tail = self._tails.get(loop)
            if tail is not None:
                await asyncio.wait([tail])

        done = threading.Event()
        loop.call_soon_threadsafe(
            lambda: loop.create_task(last()).add_done_callback(lambda _: done.set())
        )
        return done.wait(timeout)


_pusher = Pusher()
atexit.register(_pusher.flush, 2.0)


def flush_pushes(timeout: float = 5.0) -> bool:
    """Wait until the live pushes sent outside a server have gone out (:meth:`Pusher.flush`)."""
    return _pusher.flush(timeout)


def wake(encounter_id: int) -> None:
    """Ask the encounter's broadcasters for a pass now, with no new entry: each checks access
    again (a revoked table display's streams end at once, not at the next heartbeat)."""
    if get_channel_layer() is None:
        return
    _pusher.send(group_name(encounter_id), {"type": "encounter.wake"})


def connect_push() -> Callable[[], None]:
    """Subscribe :func:`push` to the combat events (done once, in CombatConfig.ready)."""
    return events.subscribe(push)


# --- What a viewer is sent -------------------------------------------------------------------


class StateRenderer(Protocol):
    """Draws the state panels of an encounter after an event (combat.render.LiveTracker):
    loaded once, drawn once per audience."""

    def __init__(self, encounter: Encounter) -> None: ...

    def hidden_for(self, user: AbstractBaseUser) -> set[int]: ...

    def panels(self, user: AbstractBaseUser) -> dict[str, str]: ...

    def encoded(self, user: AbstractBaseUser) -> list[str]: ...


#: The encounter page registers its own (combat.render); until then no panel is sent.
_state_renderer: list[type[StateRenderer]] = []


def register_state_renderer(renderer: type[StateRenderer]) -> None:
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


def allowed_users(encounter: Encounter, user_ids: set[int]) -> set[int]:
    """Which of ``user_ids`` may still follow the encounter: its campaign's GM and players (a
    player removed from the campaign may not), in one query however many viewers there are.
    The broadcaster checks it on every message and heartbeat, with ``encounter`` just read
    again (a deleted encounter is followed by nobody)."""
    followers = (
        Membership.objects.filter(campaign_id=encounter.campaign_id, user_id__in=user_ids)
        .order_by()
        .values_list("user_id", flat=True)
    )
    # A table display follows as the negative of its link's id, while its link stands: asked
    # in the same query, so an open display adds no round trip to a pass.
    displays = [-uid for uid in user_ids if uid < 0]
    if displays:
        links = (
            DisplayLink.objects.filter(campaign_id=encounter.campaign_id, pk__in=displays)
            .order_by()
            .annotate(follower=-F("pk"))
            .values_list("follower", flat=True)
        )
        # Unordered, its parts and itself: the models' default orders name none of its columns.
        followers = followers.union(links, all=True).order_by()
    allowed = set(followers)
    if encounter.campaign.gm_id in user_ids:
        allowed.add(encounter.campaign.gm_id)
    return allowed


def messages_after(
    encounter: Encounter, user: AbstractBaseUser, after: int | None
) -> list[Message]:
    """Everything one viewer who saw entries up to ``after`` needs: the newer entries, one
    event each (or a ``reset`` when there are too many), then the state panels. ``after`` None
    is a fresh page, which already shows the current state. (The broadcaster does the same
    for all its streams at once: :func:`fan_out`.)"""
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
                "combat/live_entry.html",
                {
                    "entry": entry,
                    "text": entry.text_for(user, hidden),
                    "roll": entry.roll_for(hidden),
                },
            )
            out.append(Message("entry", html, entry.pk))
    if entries:
        # The caller may hold the Encounter as it was loaded long ago: its status, round and
        # turn are read again here, or every panel would show the fight as it was then.
        try:
            encounter.refresh_from_db()
        except Encounter.DoesNotExist:
            return out  # deleted meanwhile: the stream's next check says it is gone
        for renderer in _state_renderer:
            for event, html in renderer(encounter).panels(user).items():
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
            feed = _broadcasters.get(encounter_id)
            if feed is not None and feed.loop is loop:
                watching[encounter_id] = {s.user.pk for s in feed.subscribers}
        await sync_to_async(_write_presence, thread_sensitive=False)(touched, watching)
        layer = get_channel_layer()
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


def _write_presence(touched: dict[int, set[int]], watching: dict[int, set[int]]) -> None:
    """The viewers still watching here are present; the others who left are not (a viewer who
    closes the last of two tabs on this process; one with a tab on another process shows as
    away until that tab's next heartbeat)."""
    now = timezone.now().isoformat()
    here = {
        _presence_key(eid, uid): now
        for eid, uids in watching.items()
        for uid in uids & touched[eid]
    }
    gone = [
        _presence_key(eid, uid)
        for eid, uids in touched.items()
        for uid in uids - watching.get(eid, set())
    ]
    try:
        if here:
            cache.set_many(here, PRESENCE_SECONDS)
        if gone:
            cache.delete_many(gone)
    except CACHE_ERRORS as exc:
        cache_unavailable(exc)


#: Per event loop (one per process under a server; tests run several).
_presence_news: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, PresenceNews]
_presence_news = weakref.WeakKeyDictionary()


def presence_news() -> PresenceNews:
    loop = asyncio.get_running_loop()
    news = _presence_news.get(loop)
    if news is None:
        news = _presence_news[loop] = PresenceNews()
    return news


# --- The broadcaster ----------------------------------------------------------------------


@dataclass(eq=False)
class Subscriber:
    """One open stream: what its viewer has been sent, and the queue the broadcaster fills
    (encoded events; None: the stream ends)."""

    user: AbstractBaseUser
    after: int | None  # the last entry id sent; None: a fresh page (it shows the state)
    queue: asyncio.Queue[bytes | None]
    greeted: bool = False


def fan_out(
    encounter: Encounter,
    subscribers: list[Subscriber],
    *,
    presence: bool = False,
    early: Callable[[dict[Subscriber, list[str]]], None] | None = None,
) -> dict[Subscriber, list[str]]:
    """One pass of the broadcaster, in its thread: what each stream is sent. Every stream
    behind the newest entry gets the entries it has not seen (or a ``reset``) and the tracker,
    each drawn once per audience; a stream whose viewer lost access gets ``gone``; a stream
    not greeted yet gets ``hello``; with ``presence``, the GM's streams get who is connected.

    ``early``, when given, is handed what is ready before the tracker is loaded and drawn
    (``gone``, the new entries), and the returned lists hold only the rest: the log line
    reaches every page without waiting for the tracker (most of a pass's work)."""
    out: dict[Subscriber, list[str]] = {s: [] for s in subscribers}
    try:
        # The campaign too: whether its GM is watching decides what they are sent.
        encounter.refresh_from_db(from_queryset=Encounter.objects.select_related("campaign"))
    except Encounter.DoesNotExist:
        for s in subscribers:
            out[s].append(Message(GONE, "").encode())
        return out
    allowed = allowed_users(encounter, {s.user.pk for s in subscribers})
    live = [s for s in subscribers if s.user.pk in allowed]
    for s in subscribers:
        if s.user.pk not in allowed:
            out[s].append(Message(GONE, "").encode())
    # The entries after the oldest entry a stream was sent, newest first, and at most the
    # newest REPLAY_LIMIT + 1 (a stream back from a long gap gets a reset, so the older ones
    # are never loaded): one query, which also says which entry is the newest. An entry
    # committed after it is the next pass's (its own message follows).
    known = [s.after for s in live if s.after is not None]
    entries: list[CombatLogEntry] = []
    if known:
        newer = CombatLogEntry.objects.filter(encounter=encounter, pk__gt=min(known))
        entries = list(newer.order_by("-pk")[: REPLAY_LIMIT + 1])[::-1]
    if entries:
        latest = entries[-1].pk
    elif len(known) < len(live):
        latest = latest_entry_id(encounter)  # fresh pages: they start from the newest
    else:
        latest = 0  # nothing newer than what every stream was sent
    for s in live:
        if s.after is None:
            s.after = latest
    behind = [s for s in live if s.after is not None and s.after < latest]
    if behind:
        truncated = len(entries) > REPLAY_LIMIT
        oldest = entries[0].pk if entries else latest
        # Who is hidden from whom: the hidden participants only, the tracker's own load comes
        # after the entries are on their way.
        hidden_rows = list(
            encounter.participants.filter(hidden=True)
            .select_related("character")
            .only("pk", "hidden", "character__owner_id")
        )
        drawn: dict[tuple[int, frozenset[int]], str] = {}
        hidden_of: dict[int, frozenset[int]] = {}
        for s in behind:
            mine = [e for e in entries if e.pk > (s.after or 0)]
            if len(mine) > REPLAY_LIMIT or (truncated and (s.after or 0) < oldest):
                out[s].append(Message("reset", "", latest).encode())
            else:
                if s.user.pk not in hidden_of:
                    hidden_of[s.user.pk] = frozenset(hidden_ids(encounter, s.user, hidden_rows))
                hidden = hidden_of[s.user.pk]
                for entry in mine:
                    if (entry.pk, hidden) not in drawn:
                        html = render_to_string(
                            "combat/live_entry.html",
                            {
                                "entry": entry,
                                "text": entry.text_for(s.user, set(hidden)),
                                "roll": entry.roll_for(set(hidden)),
                            },
                        )
                        drawn[entry.pk, hidden] = Message("entry", html, entry.pk).encode()
                    out[s].append(drawn[entry.pk, hidden])
        if early is not None:
            early({s: chunks for s, chunks in out.items() if chunks})
            out = {s: [] for s in subscribers}
        tracker = _state_renderer[0](encounter) if _state_renderer else None
        for s in behind:
            if tracker is not None:
                out[s] += tracker.encoded(s.user)
            s.after = latest
    for s in live:
        if not s.greeted:
            s.greeted = True
            # Always something at once: some servers (daphne, behind runserver) send the
            # headers only with the first bytes, and a page with nothing to catch up on would
            # otherwise wait for the first heartbeat before the browser calls the stream open.
            out[s].append(Message("hello", "", s.after).encode())
    if presence:
        gm_streams = [s for s in live if encounter.campaign.is_gm(s.user)]
        if gm_streams:
            encoded = [m.encode() for m in presence_messages(encounter, gm_streams[0].user)]
            for s in gm_streams:
                out[s] += encoded
    return out


class Broadcaster:
    """The live feed of one encounter in this process: one listener on the channel layer, one
    thread for the database, every open stream fed from it (see the module's docstring)."""

    def __init__(self, encounter: Encounter) -> None:
        self.encounter = encounter
        self.subscribers: set[Subscriber] = set()
        self.loop = asyncio.get_running_loop()
        self.wake = asyncio.Event()  # a pass is due: a message came, or a stream was added
        self.presence_due = False  # the GM's list of who is connected is to be drawn again
        #: True once in its groups on the channel layer, False when that failed.
        self.subscribed: asyncio.Future[bool] = self.loop.create_future()
        # Started outside the request that opened the first stream (an empty context): its
        # database work then runs on the process's one thread for work outside requests
        # (asgiref's thread-sensitive executor), not on a request's thread that ends with it.
        self.task = self.loop.create_task(self.run(), context=contextvars.Context())
        # Cancelled before it ran, it never says: a stream waiting to open must not wait on.
        self.task.add_done_callback(lambda _: self._unsubscribed())

    def add(self, subscriber: Subscriber) -> None:
        self.subscribers.add(subscriber)
        self.wake.set()  # greeted (and caught up) on the next pass

    def remove(self, subscriber: Subscriber) -> None:
        self.subscribers.discard(subscriber)
        if not self.subscribers:
            self._forget()
            self.task.cancel()

    def _unsubscribed(self) -> None:
        if not self.subscribed.done():
            self.subscribed.set_result(False)

    def _forget(self) -> None:
        if _broadcasters.get(self.encounter.pk) is self:
            del _broadcasters[self.encounter.pk]

    async def wait_subscribed(self, timeout: float) -> bool:
        """Whether the broadcaster is in its groups, waiting up to ``timeout`` seconds."""
        try:
            return await asyncio.wait_for(asyncio.shield(self.subscribed), timeout)
        except TimeoutError:
            return False

    def _end_streams(self) -> None:
        """Every stream ends (its browser reconnects and catches up from its last entry)."""
        for s in self.subscribers:
            s.queue.put_nowait(None)
        self.subscribers.clear()

    async def _pass(self, *, presence: bool = False, heartbeat: bool = False) -> None:
        subscribers = list(self.subscribers)
        if not subscribers:
            return

        def early(ready: dict[Subscriber, list[str]]) -> None:
            # The entries are written to every stream before the tracker's work begins: that
            # work holds the GIL for most of a pass, and the event loop writing a hundred
            # streams would otherwise get it only every few milliseconds. The loop's callback
            # runs after each woken stream has written its chunk (they were scheduled first).
            written = threading.Event()

            def deliver() -> None:
                self._deliver(ready, False)
                self.loop.call_soon(written.set)

            self.loop.call_soon_threadsafe(deliver)
            written.wait(EARLY_WAIT_SECONDS)

        def work() -> dict[Subscriber, list[str]]:
            try:
                out = fan_out(self.encounter, subscribers, presence=presence, early=early)
                if heartbeat:
                    for uid in {s.user.pk for s in subscribers}:
                        mark_present(self.encounter.pk, uid)
                return out
            finally:
                # The connection goes back (to the pool) between events: streams hold none.
                give_back_connections()

        try:
            out = await sync_to_async(work)()
        except Exception:
            # A failed pass (the database restarting, say) must not end every stream: the
            # next event or heartbeat reads again from what each stream was last sent.
            logger.exception("live: pass failed for encounter %s", self.encounter.pk)
            return
        self._deliver(out, heartbeat)

    def _deliver(self, out: dict[Subscriber, list[str]], heartbeat: bool) -> None:
        """Each stream's chunks of a pass as one write of bytes; streams of one audience are
        sent the same chunks, so each distinct sequence is joined and encoded once."""
        joined: dict[tuple[int, ...], bytes] = {}
        for s, chunks in out.items():
            if heartbeat and s.greeted:
                chunks.insert(0, HEARTBEAT)
            if chunks:
                key = tuple(map(id, chunks))  # the chunks are shared objects: ids name them
                if key not in joined:
                    joined[key] = "".join(chunks).encode()
                s.queue.put_nowait(joined[key])
            if any(c.startswith(f"event: {GONE}\n") for c in chunks):
                s.queue.put_nowait(None)
                self.subscribers.discard(s)

    async def _listen(self, layer: Any, channel: str) -> None:
        """Receive the group's messages as they come and note what they ask for; the passes
        run in :meth:`run`. Messages that arrive while a pass runs are served by one next
        pass (a hundred pages opening at once announce themselves a hundred times: one pass
        draws the GM's list of who is connected, not a hundred, and an entry committed
        meanwhile does not queue behind them)."""
        while True:
            received = await layer.receive(channel)
            if received.get("type") == PRESENCE:
                # Someone came or went: the GM's list is drawn again. (A viewer who closes one
                # of two tabs shows as away until the other tab's next heartbeat.)
                self.presence_due = True
            self.wake.set()

    async def run(self) -> None:
        layer = get_channel_layer()
        groups = (group_name(self.encounter.pk), presence_group_name(self.encounter.pk))
        channel: str | None = None
        listener: asyncio.Future[None] | None = None
        try:
            channel = await layer.new_channel()
            for group in groups:
                await layer.group_add(group, channel)
            self.subscribed.set_result(True)
            # One receive stays pending for the broadcaster's life, in a task of its own,
            # rather than cancelled and restarted: cancelling a Redis layer's receive mid-read
            # can break its connection. Its failure ends the broadcaster and its streams.
            listener = asyncio.ensure_future(self._listen(layer, channel))
            listener.add_done_callback(lambda _: self.wake.set())
            next_beat = self.loop.time() + HEARTBEAT_SECONDS
            while True:
                timeout = max(0.0, next_beat - self.loop.time())
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.wake.wait(), timeout)
                self.wake.clear()
                if listener.done():
                    listener.result()  # its error, if any, ends the broadcaster
                    return
                presence, self.presence_due = self.presence_due, False
                heartbeat = False
                if self.loop.time() >= next_beat:
                    if not self.subscribers:
                        return  # opened for a stream that never started
                    # Viewers whose heartbeat stopped drop off the GM's list here.
                    heartbeat = presence = True
                    next_beat = self.loop.time() + HEARTBEAT_SECONDS
                    # In the groups again: a Redis restarted meanwhile has lost them (its
                    # listener may not have noticed), and the layer forgets a member after
                    # its group_expiry (config/settings.py) otherwise. The pass reads what
                    # was missed.
                    for group in groups:
                        await layer.group_add(group, channel)
                await self._pass(presence=presence, heartbeat=heartbeat)
        except Exception as exc:
            # The channel layer failed (Redis down or restarting). Silent streams would wait
            # for events that no longer come: they end, and their browsers reconnect.
            logger.warning(
                "live: the channel layer failed for encounter %s (%s: %s); %d streams end",
                self.encounter.pk,
                type(exc).__name__,
                exc,
                len(self.subscribers),
                exc_info=not isinstance(exc, CACHE_ERRORS),  # a bug's traceback, not Redis's
            )
        finally:
            self._unsubscribed()
            if listener is not None:
                listener.cancel()
            self._forget()
            self._end_streams()
            if channel is not None:
                await _leave(layer, groups, channel)


async def _leave(layer: Any, groups: tuple[str, ...], channel: str) -> None:
    """Leave every group, each on its own: one that fails (Redis down) leaves the others, and
    says so in one line, not a traceback (a group's stale member expires with the layer's
    ``group_expiry``; a Redis that restarted has lost it anyway)."""
    for group in groups:
        try:
            await layer.group_discard(group, channel)
        except Exception as exc:  # a failed discard must not stop the others, nor the stream
            logger.warning("live: could not leave %s (%s: %s)", group, type(exc).__name__, exc)


#: The broadcasters of this process, by encounter id (the event loop's own: one per process).
_broadcasters: dict[int, Broadcaster] = {}


def broadcaster(encounter: Encounter) -> Broadcaster:
    found = _broadcasters.get(encounter.pk)
    if found is None or found.task.done() or found.loop is not asyncio.get_running_loop():
        found = _broadcasters[encounter.pk] = Broadcaster(encounter)
    return found


# --- The stream ---------------------------------------------------------------------------


def last_seen(request: HttpRequest) -> int | None:
    """The last entry id the browser saw (``Last-Event-ID`` on a reconnect, else ``?after=``)."""
    raw = request.headers.get("Last-Event-ID") or request.GET.get("after") or ""
    return parse_id(raw)


def give_back_connections() -> None:
    """This thread's database connections go back (to the pool), unless a transaction is
    open (a test's): a stream must not keep the one its request opened for its whole life."""
    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:
            connection.close()


#: How many streams of a process read what they need to open at once: a burst of pages
#: opening waits its turn here, holding no connection, instead of in the pool, where
#: DB_POOL_TIMEOUT turns it away (300 pages opening at once were 300 threads waiting for 2
#: connections). So opening streams also takes at most this many of the pool's connections:
#: the others stay free for the actions.
OPENING_AT_ONCE = 4
_openings: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore]
_openings = weakref.WeakKeyDictionary()


def _opening() -> asyncio.Semaphore:
    loop = asyncio.get_running_loop()
    found = _openings.get(loop)
    if found is None:
        found = _openings[loop] = asyncio.Semaphore(OPENING_AT_ONCE)
    return found


def _open(request: HttpRequest, pk: int) -> tuple[AbstractBaseUser, Encounter | None]:
    """The viewer and the encounter (its session, its user, the encounter), read in one go on
    the request's thread (at most :data:`OPENING_AT_ONCE` at once), whose connection then goes
    back at once: Django gives a request's connection back only when the response ends, hours
    later for a stream. (Read in two hops, the session's and the encounter's, a burst of pages
    opening held each connection across the wait between them, and the pool ran out.)"""
    try:
        user = request.user
        if not user.is_authenticated:
            return user, None
        return user, get_encounter(user, pk)
    finally:
        give_back_connections()


def live_unavailable() -> HttpResponse:
    response = HttpResponse(
        f"Live updates are unavailable; retry in {RETRY_AFTER} seconds.",
        status=503,
        content_type="text/plain",
    )
    response["Retry-After"] = str(RETRY_AFTER)
    return response


async def encounter_stream(request: HttpRequest, pk: int) -> HttpResponse:
    """``GET /encounters/<pk>/events/``: the encounter's live feed for this viewer (SSE)."""
    async with _opening():
        user, encounter = await sync_to_async(_open)(request, pk)
    if encounter is None:
        return HttpResponse("Log in to follow this encounter.", status=403)
    return await stream_response(encounter, user, last_seen(request))


async def stream_response(
    encounter: Encounter, user: AbstractBaseUser, after: int | None
) -> HttpResponse:
    """The SSE response of one viewer of ``encounter``, fed by its broadcaster: the encounter
    page's viewers, and the table displays (combat/display.py), which are one more viewer."""
    feed = broadcaster(encounter)
    if not await feed.wait_subscribed(SUBSCRIBE_SECONDS):
        # The channel layer cannot be reached (Redis down): a stream now would hear nothing.
        return live_unavailable()
    response = StreamingHttpResponse(
        _stream(encounter, user, after), content_type="text/event-stream"
    )
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx: do not buffer the stream
    # Its request's connection went back in _open, and the stream reads nothing itself (the
    # broadcaster does): config.db_pool need not hand a connection back after every chunk.
    response.reads_no_database = True  # type: ignore[attr-defined]
    return response


async def _stream(
    encounter: Encounter, user: AbstractBaseUser, after: int | None
) -> AsyncIterator[bytes]:
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
