"""Limits on what a stranger could repeat to flood a mailbox or to guess: sign-ups per client,
confirmation mails per client and per address mailed, join codes per client and per user.

They count with the throttles' fixed windows (``config.throttling.wait_seconds``: the same
counters, client address and fail-open rule as the login and reset-mail limits), at the rates
``signup``, ``confirm_mail`` and ``join`` of ``DEFAULT_THROTTLE_RATES`` (``THROTTLE_SIGNUP``,
``THROTTLE_CONFIRM_MAIL``, ``THROTTLE_JOIN``). Each check counts one attempt and raises
``RateLimited`` once a limit is reached; pages show its message with a 429, the API answers
DRF's 429.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.http import HttpRequest
from rest_framework.request import Request

from config.throttling import client_bucket, digest, wait_seconds

if TYPE_CHECKING:
    from sheets.users import User

SIGNUP = "signup"
CONFIRM_MAIL = "confirm_mail"
JOIN = "join"


class RateLimited(Exception):
    """Too many attempts: ``wait`` seconds until the next one counts."""

    def __init__(self, message: str, wait: int) -> None:
        super().__init__(message)
        self.wait = wait


def _after(wait: int) -> str:
    if wait < 90:
        return f"{wait} second{'s' * (wait != 1)}"
    minutes = -(-wait // 60)
    return f"{minutes} minutes"


def check_signup(request: HttpRequest) -> None:
    """Every sign-up attempt counts, per client: accounts cannot be made (or names probed) in
    bulk from one address."""
    if (wait := wait_seconds(SIGNUP, [client_bucket(request)])) is not None:
        raise RateLimited(
            f"Too many sign-ups from your network. Try again in {_after(wait)}.", wait
        )


def check_confirm_mail(request: HttpRequest, email: str) -> None:
    """Counts a confirmation mail about to be sent, per client and per address: nobody can
    flood an address that never asked for our mail."""
    buckets = [client_bucket(request), f"email:{digest(email)}"]
    if (wait := wait_seconds(CONFIRM_MAIL, buckets)) is not None:
        raise RateLimited(
            "Too many confirmation mails were asked for, to this address or from your "
            f"network; none was sent. Try again in {_after(wait)}.",
            wait,
        )


def check_join(request: HttpRequest | Request, user: User) -> None:
    """Every join-code attempt counts, per client and per user: codes cannot be guessed."""
    buckets = [client_bucket(request), f"user:{user.pk}"]
    if (wait := wait_seconds(JOIN, buckets)) is not None:
        raise RateLimited(f"Too many join codes tried. Try again in {_after(wait)}.", wait)
