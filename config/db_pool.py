"""The edges of the database connection pool: a request that finds no connection, and streams.

On PostgreSQL each process takes its connections from a pool of at most ``DB_POOL_MAX``
(config/settings.py). A request that finds none free within ``DB_POOL_TIMEOUT`` seconds gets
psycopg_pool's ``PoolTimeout``, which Django wraps in its own ``OperationalError``. That is an
overload, not a bug: the answer is 503 with ``Retry-After`` (JSON under /api/, a short page
elsewhere), never a 500. So is a server that goes away under a request in flight (PostgreSQL
restarting: "terminating connection due to administrator command", a connection closed
mid-request): :func:`is_database_unavailable`. Views raise it first, since the first query of
a request is where it takes its connection (DRF views re-raise exceptions that are not API
errors, so they get here too); a middleware that queries before the view
(IdempotencyMiddleware) reaches Django's 500 handler instead, which is :func:`server_error`
(config/urls.py).

An event stream stays open for hours but reads the database only now and then: between two
chunks it hands its connection back, so open encounter pages do not hold the pool. A stream that
never touches the database once it has started (the encounter's live feed: its broadcaster reads
for it) says so with ``response.reads_no_database = True`` and is left alone: that hand-back is a
hop to a thread per chunk, for every open page on every event.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from inspect import iscoroutinefunction, markcoroutinefunction
from typing import Any

from asgiref.sync import sync_to_async
from django.db import connections
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.template.loader import render_to_string
from django.views import defaults
from psycopg import InterfaceError as PsycopgInterfaceError
from psycopg import OperationalError as PsycopgOperationalError
from psycopg_pool import PoolTimeout, TooManyRequests

#: Seconds a client is asked to wait: about the pool's timeout, which this request just waited.
RETRY_AFTER = 5
API_PREFIX = "/api/"


#: The server going away, beside the class 08 connection exceptions: admin_shutdown (a restart,
#: pg_terminate_backend), crash_shutdown, cannot_connect_now (still starting up).
SERVER_GONE_STATES = frozenset({"57P01", "57P02", "57P03"})


def is_database_unavailable(exc: BaseException | None) -> bool:
    """Whether ``exc`` says the database cannot be had right now, as raised or as Django wraps
    it: the pool found no connection, or the connection was lost (the server restarting or
    gone: an error with no SQLSTATE, which psycopg raises for a socket that closed, or one of
    the connection's or the shutdown's). A deadlock, a lock or statement timeout, a bad query
    are errors of the request, and stay 500s."""
    for _ in range(5):  # a short chain: Django's OperationalError over psycopg's
        if exc is None:
            return False
        if isinstance(exc, PoolTimeout | TooManyRequests | PsycopgInterfaceError):
            return True
        if isinstance(exc, PsycopgOperationalError):
            state = exc.sqlstate
            return state is None or state.startswith("08") or state in SERVER_GONE_STATES
        exc = exc.__cause__
    return False


def busy(request: HttpRequest) -> HttpResponse:
    """503 with Retry-After. It renders without touching the database (no user, no session):
    there is no connection to be had."""
    message = f"The server is busy; please retry in {RETRY_AFTER} seconds."
    response: HttpResponse
    if request.path.startswith(API_PREFIX):
        response = JsonResponse({"detail": message}, status=503)
    else:
        html = render_to_string("503.html", {"wait": RETRY_AFTER})
        response = HttpResponse(html, status=503)
    response["Retry-After"] = str(RETRY_AFTER)
    return response


def server_error(request: HttpRequest) -> HttpResponse:
    """The site's handler500: an exhausted pool (or a lost connection) met outside a view is a
    503 too.

    Django calls it while handling the exception, so ``sys.exc_info()`` holds it (when the
    exception passed through a synchronous middleware, which is where the queries before a
    view are made here)."""
    if is_database_unavailable(sys.exc_info()[1]):
        return busy(request)
    return defaults.server_error(request)


def release_connections() -> None:
    """Hand this thread's connections back to the pool (or close them without one), unless a
    transaction is open on them (a test's, for instance)."""
    for conn in connections.all(initialized_only=True):
        if not conn.in_atomic_block:
            # CONN_MAX_AGE is 0 whenever there is a pool: this closes, which gives back.
            conn.close_if_unusable_or_obsolete()


async def _giving_back(content: AsyncIterator[Any]) -> AsyncIterator[Any]:
    async for chunk in content:
        # Run where the stream's own database calls run (its request's thread-sensitive
        # context), so that it is their connection that goes back.
        await sync_to_async(release_connections)()
        yield chunk


class ConnectionPoolMiddleware:
    """503 for an exhausted pool or a lost connection; streamed responses give their
    connection back per chunk."""

    sync_capable = True
    async_capable = True

    def __init__(
        self,
        get_response: Callable[[HttpRequest], HttpResponseBase]
        | Callable[[HttpRequest], Awaitable[HttpResponseBase]],
    ) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self._acall(request)
        return _stream_gives_back(self.get_response(request))  # type: ignore[arg-type]  # sync: a response

    async def _acall(self, request: HttpRequest) -> HttpResponseBase:
        response: HttpResponseBase = await self.get_response(request)  # type: ignore[misc]  # async: awaitable
        return _stream_gives_back(response)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        return busy(request) if is_database_unavailable(exception) else None


def _stream_gives_back(response: HttpResponseBase) -> HttpResponseBase:
    if getattr(response, "reads_no_database", False):
        return response
    if response.streaming and getattr(response, "is_async", False):
        response.streaming_content = _giving_back(response.streaming_content)  # type: ignore[attr-defined]  # a streaming response
    return response
