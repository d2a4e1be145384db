"""Login attempts are limited per username and per client address.

Guessing a password means many POSTs to a login page, the site's or Django admin's: each one
counts, on the same counters whichever page it was sent to, for the username it names (however
its case is typed) and for the address it comes from, in fixed windows at the rate
``REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]["login"]`` (``THROTTLE_LOGIN``, 10/min). Over
the limit the answer is 429 with ``Retry-After`` and a page that says how long to wait; the
password is not even checked. An attempt is counted before the password is checked (so racing
requests cannot slip past the count) and given back when it logs in: only failures use up the
allowance, so a table of players behind one home router can all log in.

The client address is found as the rules API's throttles find it (``client_ident``: the
request's REMOTE_ADDR, and ``X-Forwarded-For`` only from a proxy listed in TRUSTED_PROXIES, so a
client cannot name itself a new address for each guess), and the counters live in the default
cache, as DRF's do: with several processes, configure a shared cache.

When that cache is down (Redis stopped, unreachable), the login pages and the rules API let
requests through unthrottled rather than fail them all with 500s: a warning is logged, once a
minute at most, so the outage is seen without flooding the log.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import ipaddress
import logging
import math
import threading
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from redis.exceptions import RedisError
from rest_framework.request import Request
from rest_framework.settings import api_settings

logger = logging.getLogger(__name__)

SCOPE = "login"

#: What a cache that cannot be reached raises: Redis's errors, and socket errors for others.
CACHE_ERRORS = (RedisError, OSError)
CACHE_WARNING_INTERVAL = 60.0  # seconds between two warnings that the cache is down
_warned_at: float | None = None
_warn_lock = threading.Lock()


def cache_unavailable(exc: Exception) -> None:
    """Log that the cache failed, once per CACHE_WARNING_INTERVAL per process (throttles and
    the encounter page's presence list both carry on without it)."""
    global _warned_at
    now = time.monotonic()
    with _warn_lock:
        if _warned_at is not None and now - _warned_at < CACHE_WARNING_INTERVAL:
            return
        _warned_at = now
    logger.warning(
        "The cache is unavailable (%s): login attempts and rules API calls are let through "
        "unthrottled, and the GM sees no player as connected, until it is back.",
        exc,
    )


class FailOpenThrottleMixin:
    """For DRF throttles: a request is allowed, not failed, while the cache is down."""

    def allow_request(self, request: Any, view: Any) -> bool:
        try:
            allowed: bool = super().allow_request(request, view)  # type: ignore[misc]  # a mixin of DRF throttles
        except CACHE_ERRORS as exc:
            cache_unavailable(exc)
            return True
        return allowed


def scope_rate(scope: str) -> tuple[int | None, int | None]:
    """(requests, seconds) from a scope's rate in ``DEFAULT_THROTTLE_RATES``, read at request
    time (a changed setting takes effect); (None, None) when unset."""
    rate = api_settings.DEFAULT_THROTTLE_RATES.get(scope)
    if not rate:
        return None, None
    # The same notation as DRF's throttles: "10/min", "100/hour", "5/s".
    count, period = rate.split("/")  # type: ignore[union-attr]  # DRF's stubs say a number; it is "10/min"
    return int(count), {"s": 1, "m": 60, "h": 3600, "d": 86400}[period[0]]


def login_rate() -> tuple[int | None, int | None]:
    """(requests, seconds) from the ``login`` throttle rate; (None, None) when unset."""
    return scope_rate(SCOPE)


@functools.cache
def _networks(
    proxies: tuple[str, ...],
) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.ip_network(p, strict=False) for p in proxies)


def _trusted(address: str, networks: tuple[Any, ...]) -> bool:
    try:
        ip = ipaddress.ip_address(address.strip())
    except ValueError:
        return False
    return any(ip in network for network in networks)


def client_ident(request: HttpRequest | Request) -> str:
    """The client's address, as every rate limit counts it: REMOTE_ADDR, unless that is one of
    TRUSTED_PROXIES; then the rightmost ``X-Forwarded-For`` address that is not one of them
    (each proxy appends the address it got the request from, so entries left of the first
    untrusted one may be the client's own inventions)."""
    remote = str(request.META.get("REMOTE_ADDR", ""))
    networks = _networks(tuple(settings.TRUSTED_PROXIES))
    if not networks or not _trusted(remote, networks):
        return remote
    forwarded = [a.strip() for a in request.headers.get("x-forwarded-for", "").split(",")]
    for address in reversed([a for a in forwarded if a]):
        if not _trusted(address, networks):
            return address
    return remote


class ClientAddressMixin:
    """For DRF throttles: count the client by ``client_ident``, not by DRF's own reading of
    ``X-Forwarded-For`` (which believes whatever the client sent)."""

    def get_ident(self, request: Any) -> str:
        return client_ident(request)


def _window(bucket: str, window: int, now: float) -> tuple[str, int]:
    start = int(now // window) * window
    return f"throttle:{SCOPE}:{bucket}:{start}", start


def _hit(bucket: str, limit: int, window: int, now: float) -> float | None:
    """Count one attempt in ``bucket``; the seconds to wait when over ``limit``, else None."""
    key, start = _window(bucket, window, now)
    cache.add(key, 0, timeout=window + 1)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=window + 1)
        count = 1
    if count > limit:
        return start + window - now
    return None


def _give_back(bucket: str, window: int, now: float) -> None:
    key, _ = _window(bucket, window, now)
    with contextlib.suppress(ValueError):  # the window is over: nothing to give back
        cache.decr(key)


def over_limit(bucket: str, limit: int, window: int) -> float | None:
    """Count one request in ``bucket``: the seconds to wait when it is over ``limit`` per
    ``window`` seconds, else None. Fails open (None) while the cache cannot be reached."""
    try:
        return _hit(bucket, limit, window, time.time())
    except CACHE_ERRORS as exc:
        cache_unavailable(exc)
        return None


class LoginThrottleMiddleware:
    """Answers 429 to a POST to a login page (the site's or the admin's) once the username or
    the address is over the limit."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method != "POST" or request.path not in (
            reverse("login"),
            reverse("admin:login"),
        ):
            return self.get_response(request)
        limit, window = login_rate()
        if limit is None or window is None:
            return self.get_response(request)
        now = time.time()
        buckets = _buckets(request)
        try:
            waits = [w for b in buckets if (w := _hit(b, limit, window, now)) is not None]
        except CACHE_ERRORS as exc:
            cache_unavailable(exc)
            return self.get_response(request)
        if waits:
            seconds = max(1, math.ceil(max(waits)))
            response = render(
                request, "registration/login_throttled.html", {"wait": seconds}, status=429
            )
            response["Retry-After"] = str(seconds)
            return response
        response = self.get_response(request)
        if response.status_code in (301, 302, 303) and request.user.is_authenticated:
            try:
                for bucket in buckets:
                    _give_back(bucket, window, now)
            except CACHE_ERRORS as exc:  # went down meanwhile: the login stands
                cache_unavailable(exc)
        return response


def _buckets(request: HttpRequest) -> list[str]:
    buckets = [f"ip:{client_ident(request)}"]
    username = request.POST.get("username", "").strip().casefold()
    if username:
        # Hashed: the cache key stays short and free of whatever was typed.
        buckets.append("user:" + hashlib.sha256(username.encode()).hexdigest()[:32])
    return buckets


def digest(value: str) -> str:
    """What a bucket keeps of an address or a name: hashed, so the cache key stays short and
    free of whatever was typed; case and surrounding spaces do not make a new bucket."""
    return hashlib.sha256(value.strip().casefold().encode()).hexdigest()[:32]


def client_bucket(request: HttpRequest | Request) -> str:
    return f"ip:{client_ident(request)}"


def wait_seconds(scope: str, buckets: list[str]) -> int | None:
    """Count one request at ``scope``'s rate in each of ``buckets`` (the client's address, an
    address mailed, a user...). The whole seconds to wait when any of them is over the limit,
    else None; None too when the scope has no rate, or while the cache cannot be reached (fail
    open, with the warning). One mechanism for every limit on a page: login, reset and
    confirmation mails, sign-ups, join codes."""
    limit, window = scope_rate(scope)
    if limit is None or window is None:
        return None
    now = time.time()
    try:
        waits = [w for b in buckets if (w := _hit(f"{scope}:{b}", limit, window, now)) is not None]
    except CACHE_ERRORS as exc:
        cache_unavailable(exc)
        return None
    return max(1, math.ceil(max(waits))) if waits else None


RESET_SCOPE = "password_reset"


class PasswordResetThrottleMiddleware:
    """Answers 429 to a request for a password reset mail once the client or the address asked
    for (whether or not an account has it) is over the ``password_reset`` rate
    (``THROTTLE_PASSWORD_RESET``, 5/hour): nobody floods a mailbox or probes addresses fast.
    Every request counts, as each one may send a mail; the counters are the login throttle's."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method != "POST" or request.path != reverse("password_reset"):
            return self.get_response(request)
        buckets = [client_bucket(request)]
        if email := request.POST.get("email", "").strip():
            buckets.append(f"email:{digest(email)}")
        seconds = wait_seconds(RESET_SCOPE, buckets)
        if seconds is None:
            return self.get_response(request)
        response = render(
            request, "registration/password_reset_throttled.html", {"wait": seconds}, status=429
        )
        response["Retry-After"] = str(seconds)
        return response
