"""The live feeds' sends on the channel layer, off the caller's thread and in order
(:class:`Pusher`): an encounter's log entries and wake-ups (combat.live.push), a campaign's
news about its checks (checks.live)."""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import threading
import weakref
from typing import Any

from asgiref.sync import SyncToAsync
from channels.layers import get_channel_layer

from config.throttling import CACHE_ERRORS

logger = logging.getLogger(__name__)


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
        return loop  # type: ignore[no-any-return]  # asyncio's loop, kept by asgiref untyped

    def _own_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._own is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="live-push", daemon=True).start()
                self._own = loop
            return self._own

    def _schedule(
        self, loop: asyncio.AbstractEventLoop, group: str, message: dict[str, Any]
    ) -> None:
        """On ``loop``: start the send after the one before it."""
        task = loop.create_task(self._send(self._tails.get(loop), group, message))
        self._tails[loop] = task

    async def _send(
        self, before: asyncio.Future[None] | None, group: str, message: dict[str, Any]
    ) -> None:
        if before is not None:
            await asyncio.wait([before])
        try:
            await get_channel_layer().group_send(group, message)  # type: ignore[union-attr]  # push is connected only with a layer
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


pusher = Pusher()
atexit.register(pusher.flush, 2.0)


def flush_pushes(timeout: float = 5.0) -> bool:
    """Wait until the live pushes sent outside a server have gone out (:meth:`Pusher.flush`)."""
    return pusher.flush(timeout)
