"""One log line per request: its id, the user, method, path, status and duration.

The first middleware, so that the duration covers the whole stack and the status is the one
sent. The id comes from the proxy's ``X-Request-ID`` header when it sends a sane one (nginx:
``proxy_set_header X-Request-ID $request_id;``), else it is made here; it goes back in the
response's ``X-Request-ID`` and onto every line logged while the request is served
(:data:`config.logging.REQUEST_ID`).

The path is logged without its query string (which may carry a token), and the user only when
the view loaded it: logging never costs a query of its own. A streamed response (the encounter
event stream) is logged when it starts, with the time to its first byte.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable
from inspect import iscoroutinefunction, markcoroutinefunction
from typing import Any

from django.http import HttpRequest, HttpResponseBase
from django.utils.functional import SimpleLazyObject

from config.logging import REQUEST_ID

logger = logging.getLogger("omg.request")

HEADER = "X-Request-ID"
_SANE_ID = re.compile(r"[A-Za-z0-9._:-]{8,64}")


def _request_id(request: HttpRequest) -> str:
    given = request.headers.get(HEADER, "")
    request_id = given if _SANE_ID.fullmatch(given) else uuid.uuid4().hex
    request.request_id = request_id  # type: ignore[attr-defined]  # ours, for the logs
    return request_id


def _user_id(request: HttpRequest) -> int | None:
    # The raw attribute: a user, the middleware's lazy object, or nothing yet.
    user = request.__dict__.get("user")
    if user is None or type(user) is SimpleLazyObject:  # type() does not load it
        # AuthenticationMiddleware's lazy user: read only what the view already loaded
        # (django.contrib.auth.middleware caches it on the request). DRF's token and session
        # authentication replace request.user with the user itself.
        user = request.__dict__.get("_cached_user") or request.__dict__.get("_acached_user")
    if user is None or not user.is_authenticated or user.pk is None:
        # No pk: a user deleted by this very request (Django clears a deleted row's pk).
        return None
    return int(user.pk)


class RequestLogMiddleware:
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
        request_id = _request_id(request)
        token = REQUEST_ID.set(request_id)
        started = time.perf_counter()
        try:
            response = self.get_response(request)
            _log(request, response, request_id, started)  # type: ignore[arg-type]  # sync: a response
        finally:
            REQUEST_ID.reset(token)
        return response

    async def _acall(self, request: HttpRequest) -> HttpResponseBase:
        request_id = _request_id(request)
        token = REQUEST_ID.set(request_id)
        started = time.perf_counter()
        try:
            response: HttpResponseBase = await self.get_response(request)  # type: ignore[misc]  # async: awaitable
            _log(request, response, request_id, started)
        finally:
            REQUEST_ID.reset(token)
        return response


def _log(request: HttpRequest, response: HttpResponseBase, request_id: str, started: float) -> None:
    duration = round((time.perf_counter() - started) * 1000, 1)
    response[HEADER] = request_id
    status = response.status_code
    fields: dict[str, Any] = {
        "request_id": request_id,
        "user_id": _user_id(request),
        "method": request.method,
        "path": request.path,
        "status": status,
        "duration_ms": duration,
    }
    if response.streaming:
        fields["streaming"] = True
    logger.log(
        logging.ERROR if status >= 500 else logging.INFO,
        "%s %s %s %.1f ms",
        request.method,
        request.path,
        status,
        duration,
        extra=fields,
    )
