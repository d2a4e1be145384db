"""Sending a delivery: the address check (no loopback, private or link-local targets in
production), the Standard Webhooks signature, the HTTP POST, and retries with exponential
backoff and jitter over about a day.

Crash safety: before an attempt is sent, the attempt is counted and the *next* attempt is
enqueued in the same transaction (the database queue's insert commits with it). A worker
killed while the request is in flight leaves that next attempt behind: it runs later and sends
the same body with the same ``webhook-id``, and a receiver that remembers ids drops the
duplicate. After a success the queued attempt finds the delivery done and does nothing.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import json
import logging
import random
import socket
import ssl
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.tasks import task, task_backends
from django.utils import timezone
from standardwebhooks.webhooks import Webhook

from integrations.models import WebhookDelivery, WebhookEndpoint

logger = logging.getLogger(__name__)

#: Seconds to wait after attempt n (1-based) failed: 30 s, 2 min, 10 min, 30 min, 1 h, 3 h,
#: 6 h, 12 h: nine attempts spread over about 22 hours, each delay ±20 % (jitter, so that a
#: receiver back from an outage is not hit by every retry at once).
BACKOFF = (30, 120, 600, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600)
MAX_ATTEMPTS = len(BACKOFF) + 1
JITTER = 0.2
#: At most this much of a receiver's answer is read (the status is all that counts).
MAX_RESPONSE_BYTES = 64 * 1024
#: A URL longer than this is refused (the column's length).
MAX_URL_LENGTH = 500
#: An endpoint whose deliveries ran out of retries this many times in a row is paused.
PAUSE_AFTER_FAILED_DELIVERIES = 1
USER_AGENT = "OMG-Table-Webhooks/1"


class RefusedURL(ValueError):
    """The URL is not one webhooks may be sent to."""


class DeadlineExceeded(OSError):
    """The attempt (connect, send, the whole answer) took longer than its deadline."""


def deadline_seconds() -> float:
    """One attempt's whole budget, ``WEBHOOKS_DELIVERY_TIMEOUT`` (read at each attempt)."""
    return float(settings.WEBHOOKS_DELIVERY_TIMEOUT)


def backoff(attempt: int, rng: random.Random | None = None) -> timedelta:
    """How long to wait after failed attempt ``attempt`` (1-based), with jitter.

    >>> backoff(1, random.Random(1)).total_seconds() // 1
    26.0
    """
    base = BACKOFF[min(attempt, len(BACKOFF)) - 1]
    spread = (rng or random.SystemRandom()).uniform(-JITTER, JITTER)
    return timedelta(seconds=base * (1 + spread))


def _refused(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return (
        ip.is_loopback
        or ip.is_private
        or ip.is_link_local
        or ip.is_reserved
        or ip.is_multicast
        or ip.is_unspecified
        or not ip.is_global
    )


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int
    path: str
    address: str  # the IP the request goes to (checked)


def check_url_text(url: str) -> None:
    """The characters of ``url``: printable ASCII only, and at most MAX_URL_LENGTH of them.

    Non-ASCII is refused outright rather than encoded on the way out: a path such as
    ``/\u202e`` (a right-to-left override) reads differently from what is sent, and an
    international host name can be given in its ``xn--`` form. Spaces and control characters
    cannot go in a request line at all.

    ``http://1.1.1.1/\u202e`` is refused; ``https://xn--bcher-kva.example/hook`` is not.
    """
    if len(url) > MAX_URL_LENGTH:
        raise RefusedURL(f"The URL is longer than {MAX_URL_LENGTH} characters.")
    bad = next((c for c in url if not "\x21" <= c <= "\x7e"), None)
    if bad is not None:
        raise RefusedURL(
            f"Use printable ASCII only: the URL holds U+{ord(bad):04X}. Percent-encode the "
            "path and give an international host name in its xn-- form."
        )


def check_url(url: str) -> Target:
    """Resolve ``url``'s host and check every address it has; raises RefusedURL.

    Loopback, private, link-local, reserved and other non-public addresses are refused unless
    ``WEBHOOKS_ALLOW_PRIVATE`` (tests, a laptop). The request then goes to the address checked
    here, so a DNS answer that changes in between cannot redirect it."""
    check_url_text(url)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RefusedURL("Give an http:// or https:// URL.")
    if parts.username or parts.password:
        raise RefusedURL("Credentials in the URL are not allowed.")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise RefusedURL("The port is not a number from 1 to 65535.") from exc
    try:
        infos = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise RefusedURL(f"The host {parts.hostname!r} does not resolve.") from exc
    addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
    if not addresses:
        raise RefusedURL(f"The host {parts.hostname!r} does not resolve.")
    if not settings.WEBHOOKS_ALLOW_PRIVATE and any(_refused(ip) for ip in addresses):
        raise RefusedURL(
            "Webhooks may not go to loopback, private, link-local or reserved addresses."
        )
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return Target(parts.scheme, parts.hostname, port, path, str(addresses[0]))


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """HTTPS to a checked address, with the certificate checked for the host name."""

    def __init__(self, target: Target, **kwargs: Any) -> None:
        super().__init__(target.host, target.port, context=ssl.create_default_context(), **kwargs)
        self._address = target.address

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        # The handshake after self.sock is set, so that the delivery's watchdog can cut a
        # receiver that trickles it too.
        self.sock = self._context.wrap_socket(  # type: ignore[attr-defined]  # HTTPSConnection's private SSL context
            sock, server_hostname=self.host, do_handshake_on_connect=False
        )
        self.sock.do_handshake()


def body_of(delivery: WebhookDelivery) -> str:
    """The exact bytes sent (and signed): compact JSON, keys in a fixed order."""
    return json.dumps(delivery.payload, separators=(",", ":"), sort_keys=True)


def signed_headers(secret: str, webhook_id: str, sent_at: datetime, body: str) -> dict[str, str]:
    return {
        "webhook-id": webhook_id,
        "webhook-timestamp": str(int(sent_at.timestamp())),
        "webhook-signature": Webhook(secret).sign(webhook_id, sent_at, body),
        "content-type": "application/json",
        "user-agent": USER_AGENT,
    }


def post(url: str, headers: dict[str, str], body: str) -> int:
    """POST ``body``; the status code. Raises RefusedURL or OSError (connection, a timeout,
    DeadlineExceeded). Redirects are not followed (a 3xx is a failure).

    One deadline covers the whole attempt: connecting, sending and reading the answer, of
    which at most MAX_RESPONSE_BYTES are read. Each socket operation waits at most what is
    left of it, and a watchdog shuts the socket down when it passes, so a receiver that
    trickles a byte now and then cannot hold the worker past it."""
    limit = deadline_seconds()
    deadline = time.monotonic() + limit

    def left() -> float:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise DeadlineExceeded(f"Timed out: no full answer within {limit:g} s.")
        return remaining

    target = check_url(url)
    conn: http.client.HTTPConnection
    if target.scheme == "https":
        conn = _PinnedHTTPSConnection(target, timeout=left())
    else:
        conn = http.client.HTTPConnection(target.address, target.port, timeout=left())
    host = target.host if ":" not in target.host else f"[{target.host}]"
    watchdog = _Watchdog(conn, left())
    try:
        conn.connect()
        assert conn.sock is not None
        conn.sock.settimeout(left())
        conn.request(
            "POST",
            target.path,
            body=body.encode(),
            headers={**headers, "host": f"{host}:{target.port}"},
        )
        conn.sock.settimeout(left())
        response = conn.getresponse()
        read = 0
        while read < MAX_RESPONSE_BYTES:  # a little of the answer, never all of it
            left()
            chunk = response.read1(min(4096, MAX_RESPONSE_BYTES - read))
            if not chunk:
                break
            read += len(chunk)
        left()
        return response.status
    except (OSError, http.client.HTTPException, ValueError) as exc:
        if watchdog.fired or time.monotonic() >= deadline:
            raise DeadlineExceeded(f"Timed out: no full answer within {limit:g} s.") from exc
        if isinstance(exc, OSError):
            raise
        raise OSError(str(exc)) from exc
    finally:
        watchdog.cancel()
        conn.close()


class _Watchdog:
    """Shuts ``conn``'s socket down after ``seconds``: a blocked read or write then returns
    at once, whatever the receiver keeps trickling."""

    def __init__(self, conn: http.client.HTTPConnection, seconds: float) -> None:
        self._conn = conn
        self._lock = threading.Lock()
        self._done = False
        self.fired = False
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True
        self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            if self._done or self._conn.sock is None:
                return
            self.fired = True
            # The plain socket's shutdown, under TLS too (SSLSocket's own drops its state).
            with contextlib.suppress(OSError):
                socket.socket.shutdown(self._conn.sock, socket.SHUT_RDWR)

    def cancel(self) -> None:
        with self._lock:
            self._done = True
        self._timer.cancel()


# --- Queueing ---------------------------------------------------------------------------------


def new_webhook_id() -> str:
    return f"msg_{uuid.uuid4().hex}"


def enqueue(delivery: WebhookDelivery, *, at: datetime | None = None) -> None:
    """Queue an attempt of ``delivery`` (at ``at``, when the task backend can wait; a backend
    that cannot, such as the tests' immediate one, leaves it to :func:`deliver_due`)."""
    if at is None:
        deliver.enqueue(delivery.pk)
    elif task_backends[deliver.backend].supports_defer:
        deliver.using(run_after=at).enqueue(delivery.pk)


def create_deliveries(endpoints: list[WebhookEndpoint], event_type: str, payloads: Any) -> None:
    """One delivery per endpoint, queued now. ``payloads(endpoint)`` builds its body."""
    for endpoint in endpoints:
        with transaction.atomic():
            delivery = WebhookDelivery.objects.create(
                endpoint=endpoint,
                event_type=event_type,
                webhook_id=new_webhook_id(),
                payload=payloads(endpoint),
                next_attempt_at=timezone.now(),
            )
            enqueue_after_commit(delivery)


def enqueue_after_commit(delivery: WebhookDelivery) -> None:
    # The database queue commits with the delivery; the immediate backend (tests) must not
    # run before the delivery row exists for other connections.
    transaction.on_commit(lambda: enqueue(delivery), robust=True)


@task()
def deliver(delivery_id: int) -> str:
    """One attempt of a delivery, if it is due; the task the worker runs."""
    return attempt(delivery_id)


def attempt(
    delivery_id: int, *, now: datetime | None = None, rng: random.Random | None = None
) -> str:
    now = now or timezone.now()
    with transaction.atomic():
        delivery = (
            WebhookDelivery.objects.select_for_update()
            .select_related("endpoint")
            .filter(pk=delivery_id)
            .first()
        )
        if delivery is None or delivery.status != WebhookDelivery.Status.PENDING:
            return "nothing to do"
        if delivery.next_attempt_at is not None and delivery.next_attempt_at > now:
            return "not due"
        endpoint = delivery.endpoint
        if not endpoint.active:
            delivery.status = WebhookDelivery.Status.CANCELLED
            delivery.last_error = "The endpoint is paused."
            delivery.save(update_fields=["status", "last_error", "updated_at"])
            return "cancelled"
        delivery.attempts += 1
        # The lease: if this worker dies before recording the answer, the attempt queued here
        # sends it again (same webhook-id) once this time has passed.
        if delivery.attempts < MAX_ATTEMPTS:
            delivery.next_attempt_at = now + backoff(delivery.attempts, rng)
        else:
            delivery.next_attempt_at = now + timedelta(seconds=BACKOFF[-1])
        delivery.save(update_fields=["attempts", "next_attempt_at", "updated_at"])
        enqueue(delivery, at=delivery.next_attempt_at)
    status: int | None = None
    error = ""
    try:
        body = body_of(delivery)
        status = post(
            endpoint.url, signed_headers(endpoint.secret, delivery.webhook_id, now, body), body
        )
        if not 200 <= status < 300:
            error = f"Answered {status}."
    except (RefusedURL, DeadlineExceeded) as exc:
        error = str(exc)
    except OSError as exc:
        error = f"{type(exc).__name__}: {exc}"
    except Exception as exc:
        # Whatever else goes wrong is this attempt's failure, recorded and shown with the
        # delivery: an attempt that raised would leave it "pending" with no reason given.
        logger.exception("webhook delivery %s failed unexpectedly", delivery.pk)
        error = f"Could not be sent ({type(exc).__name__}: {exc})"
    return _record(delivery.pk, status, error[:300], now)


def _record(delivery_id: int, status: int | None, error: str, now: datetime) -> str:
    with transaction.atomic():
        delivery = WebhookDelivery.objects.select_for_update().get(pk=delivery_id)
        endpoint = WebhookEndpoint.objects.select_for_update().get(pk=delivery.endpoint_id)
        delivery.last_status_code = status
        delivery.last_error = error
        if not error:
            delivery.status = WebhookDelivery.Status.DELIVERED
            delivery.delivered_at = now
            delivery.next_attempt_at = None
            endpoint.consecutive_failures = 0
            endpoint.failed_deliveries = 0
        else:
            endpoint.consecutive_failures += 1
            if delivery.attempts >= MAX_ATTEMPTS:
                delivery.status = WebhookDelivery.Status.FAILED
                delivery.next_attempt_at = None
                endpoint.failed_deliveries += 1
                if endpoint.failed_deliveries >= PAUSE_AFTER_FAILED_DELIVERIES:
                    endpoint.active = False
                    endpoint.paused_reason = (
                        f"Paused on {now:%Y-%m-%d %H:%M} UTC: a delivery failed "
                        f"{delivery.attempts} times over a day ({error[:80]})"
                    )
        delivery.save()
        endpoint.save()
    return delivery.status


def deliver_due(*, now: datetime | None = None) -> int:
    """Attempt every pending delivery that is due (a safety net beside the queued attempts,
    and how the tests run retries without waiting). The number attempted."""
    now = now or timezone.now()
    due = list(
        WebhookDelivery.objects.filter(
            status=WebhookDelivery.Status.PENDING, next_attempt_at__lte=now
        ).values_list("pk", flat=True)
    )
    for pk in due:
        attempt(pk, now=now)
    return len(due)


def send_again(delivery: WebhookDelivery) -> WebhookDelivery:
    """The GM's "send again": a new delivery of the same body, with a new webhook-id (the
    receiver asked for it again, so it must not be dropped as a duplicate)."""
    with transaction.atomic():
        copy = WebhookDelivery.objects.create(
            endpoint=delivery.endpoint,
            event_type=delivery.event_type,
            webhook_id=new_webhook_id(),
            payload=delivery.payload,
            next_attempt_at=timezone.now(),
        )
        enqueue_after_commit(copy)
    return copy
