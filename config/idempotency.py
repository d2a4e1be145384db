"""``Idempotency-Key`` for every API request that changes state.

A client that is not sure its request arrived (a timeout, a dropped connection, a double click)
sends the same request again with the same key and gets the first answer back instead of a
second effect:

* same caller + key, same method, path and body: the stored first response (status, body,
  content type), marked ``Idempotent-Replayed: true``; the view does not run again;
* same caller + key with another method, path or body: 422, nothing runs;
* the first request with that key still running: 409, nothing runs; retry a little later.

Keys belong to a caller (``user:<id>``: a user's session and all their tokens share one key
space) and live 24 hours (each process deletes the expired ones once a minute). Anonymous
requests are left alone, key or no key: the only unsafe endpoints open to them are the rules
API's, which store nothing, and keeping records for unauthenticated traffic would let anyone
fill the table.

The race between two requests carrying one key is decided by the database: both try to insert
the record and the unique constraint on (caller, key) lets exactly one through. The record is
committed before the view runs, so the loser sees it whichever process it runs in.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone

from sheets.authentication import token_for_key
from sheets.models import IdempotencyRecord

HEADER = "Idempotency-Key"
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
API_PREFIX = "/api/"
MAX_KEY_LENGTH = 255
#: How long a key is remembered.
TTL = timedelta(hours=24)
#: A record still "in flight" after this long belongs to a request that died (its transaction
#: rolled back with it), so the key may be used again.
IN_FLIGHT_TIMEOUT = timedelta(minutes=5)
#: Responses that mean the request was refused before it ran (log in, send the CSRF token,
#: slow down): not kept, so a retry with the same key runs for real. 5xx are not kept either:
#: the work was rolled back.
NOT_KEPT = frozenset({401, 403, 429})
REPLAYED_HEADER = "Idempotent-Replayed"
#: How often a process deletes the expired records.
SWEEP_EVERY = timedelta(minutes=1)


class Sweeper:
    """Deletes the records older than ``TTL``, at most once per ``SWEEP_EVERY`` in a process
    rather than on every request (one statement less per keyed write). A record past its TTL
    that is still there counts as gone (``_claim``)."""

    def __init__(self) -> None:
        self.last: datetime | None = None
        self.lock = threading.Lock()

    def __call__(self, now: datetime) -> None:
        with self.lock:
            if self.last is not None and now - self.last < SWEEP_EVERY:
                return
            self.last = now
        IdempotencyRecord.objects.filter(created_at__lt=now - TTL).delete()


sweep = Sweeper()


def _error(status: int, detail: str) -> JsonResponse:
    return JsonResponse({"detail": detail}, status=status)


def caller_of(request: HttpRequest) -> str | None:
    """Whose key space the request uses: the token's user, else the session's user; None
    for anonymous requests (and for a token that does not authenticate: the view answers
    401 for it)."""
    header = request.META.get("HTTP_AUTHORIZATION", "").split()
    if header and header[0].lower() in ("bearer", "token"):
        if len(header) != 2:
            return None
        token = token_for_key(request, header[1])
        if token is None or not token.user.is_active:
            return None
        return f"user:{token.user_id}"
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return f"user:{user.pk}"
    return None


def _fingerprint(request: HttpRequest) -> str:
    digest = hashlib.sha256()
    digest.update(request.META.get("CONTENT_TYPE", "").split(";")[0].strip().encode())
    digest.update(b"\0")
    digest.update(request.body)
    return digest.hexdigest()


def _valid_key(key: str) -> bool:
    return 0 < len(key) <= MAX_KEY_LENGTH and all(" " <= ch <= "~" for ch in key)


class IdempotencyMiddleware:
    """Honours ``Idempotency-Key`` on POST, PUT, PATCH and DELETE under /api/."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        key = request.headers.get(HEADER)
        if (
            key is None
            or request.method not in UNSAFE_METHODS
            or not request.path.startswith(API_PREFIX)
        ):
            return self.get_response(request)
        caller = caller_of(request)
        if caller is None:
            return self.get_response(request)
        if not _valid_key(key):
            return _error(
                400, f"{HEADER} must be 1 to {MAX_KEY_LENGTH} printable ASCII characters."
            )
        claim = {
            "method": request.method,
            "path": request.get_full_path(),
            "request_hash": _fingerprint(request),
        }
        record, answer = self._claim(caller, key, claim)
        if answer is not None:
            return answer
        assert record is not None
        try:
            response = self.get_response(request)
        except BaseException:
            record.delete()
            raise
        self._finish(record, response)
        return response

    def _claim(
        self, caller: str, key: str, claim: dict[str, Any]
    ) -> tuple[IdempotencyRecord | None, HttpResponse | None]:
        """Insert the in-flight record, or answer from the one already there."""
        now = timezone.now()
        sweep(now)
        for _ in range(3):
            try:
                with transaction.atomic():
                    record = IdempotencyRecord.objects.create(
                        caller=caller, key=key, created_at=now, **claim
                    )
                return record, None
            except IntegrityError:
                pass
            existing = IdempotencyRecord.objects.filter(caller=caller, key=key).first()
            if existing is None:  # finished with an answer we do not keep: try again
                continue
            if existing.created_at < now - TTL:  # expired, and not swept yet
                IdempotencyRecord.objects.filter(pk=existing.pk, created_at__lt=now - TTL).delete()
                continue
            if any(getattr(existing, field) != value for field, value in claim.items()):
                return None, _error(
                    422,
                    f"This {HEADER} was already used for a different request "
                    f"({existing.method} {existing.path} with another body). "
                    "Use a new key for a new request.",
                )
            if existing.status is None:
                if existing.created_at > now - IN_FLIGHT_TIMEOUT:
                    return None, _error(
                        409,
                        f"A request with this {HEADER} is still being processed; "
                        "retry in a moment to get its response.",
                    )
                # Abandoned: whoever deletes it first may claim the key again.
                IdempotencyRecord.objects.filter(pk=existing.pk, status=None).delete()
                continue
            return None, self._replay(existing)
        return None, _error(409, f"Too many concurrent requests with this {HEADER}; retry.")

    @staticmethod
    def _replay(record: IdempotencyRecord) -> HttpResponse:
        response = HttpResponse(
            bytes(record.body), status=record.status, content_type=record.content_type or None
        )
        response[REPLAYED_HEADER] = "true"
        return response

    @staticmethod
    def _finish(record: IdempotencyRecord, response: HttpResponse) -> None:
        keep = (
            not response.streaming
            and response.status_code < 500
            and response.status_code not in NOT_KEPT
            # An answer that must not be stored (a new API token's key) is not kept here
            # either: a retry runs again rather than the key sitting in the table for a day.
            and "no-store" not in response.get("Cache-Control", "")
        )
        if not keep:
            record.delete()
            return
        if hasattr(response, "render") and not getattr(response, "is_rendered", True):
            response.render()
        IdempotencyRecord.objects.filter(pk=record.pk).update(
            status=response.status_code,
            content_type=response.get("Content-Type", ""),
            body=response.content,
        )
