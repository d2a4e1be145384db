"""The broadcaster: one per encounter and process, the only listener on the encounter's
groups; on each message it reads the new entries once, checks once who may still follow, and
draws the entries and the tracker (combat/render.py) once per audience for every open stream."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.db.models import F
from django.template.loader import render_to_string

from combat.access import hidden_ids
from combat.live.presence import mark_present
from combat.live.push import PRESENCE, group_name, presence_group_name
from combat.models import CombatLogEntry, DisplayLink, Encounter
from combat.render import LiveTracker, presence_panel
from config.throttling import CACHE_ERRORS
from live.sse import GONE, HEARTBEAT, Message
from live.streams import HEARTBEAT_SECONDS, give_back_connections
from sheets.models import Membership

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)

REPLAY_LIMIT = 200
EARLY_WAIT_SECONDS = 0.05  # at most this long a pass waits for its entries to be written


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


def latest_entry_id(encounter: Encounter) -> int:
    latest = CombatLogEntry.objects.filter(encounter=encounter).order_by("-pk").first()
    return latest.pk if latest else 0


@dataclass(eq=False)
class Subscriber:
    """One open stream: what its viewer has been sent, and the queue the broadcaster fills
    (encoded events; None: the stream ends)."""

    user: User
    after: int | None  # the last entry id sent; None: a fresh page (it shows the state)
    queue: asyncio.Queue[bytes | None]
    greeted: bool = False


def presence_messages(encounter: Encounter, user: User) -> list[Message]:
    """Who is connected, drawn for ``user`` (the GM's streams only: nothing for the others)."""
    html = presence_panel(encounter, user)
    return [] if html is None else [Message("presence", html)]


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
        tracker = LiveTracker(encounter)
        for s in behind:
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
        assert layer is not None  # the feed runs only with a layer (CHANNEL_LAYERS)
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


def viewers_here(encounter_id: int, loop: asyncio.AbstractEventLoop) -> set[int] | None:
    """The viewers whose streams the encounter's broadcaster on ``loop`` feeds (None: it has
    none on that loop)."""
    feed = _broadcasters.get(encounter_id)
    if feed is None or feed.loop is not loop:
        return None
    return {s.user.pk for s in feed.subscribers}


def broadcaster(encounter: Encounter) -> Broadcaster:
    found = _broadcasters.get(encounter.pk)
    if found is None or found.task.done() or found.loop is not asyncio.get_running_loop():
        found = _broadcasters[encounter.pk] = Broadcaster(encounter)
    return found
