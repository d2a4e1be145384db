"""Typed requests for views: what the middleware and ``login_required`` guarantee.

Annotations only (mypy reads them; Django passes its usual ``HttpRequest``): django-htmx's
middleware, in MIDDLEWARE, gives every request ``request.htmx``, and behind ``login_required``
``request.user`` is a signed-in ``User``, never ``AnonymousUser``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest

if TYPE_CHECKING:
    from django_htmx.middleware import HtmxDetails

    from sheets.users import AnyUser, User


class HtmxRequest(HttpRequest):
    """Any request: django-htmx's middleware has set ``htmx``."""

    htmx: HtmxDetails


class AuthedRequest(HtmxRequest):
    """A request behind ``login_required`` (or a check of ``is_authenticated``)."""

    user: User


def signed_in(user: AnyUser) -> User:
    """``request.user`` where DRF's ``IsAuthenticated`` (the default permission class) or
    ``login_required`` has let only a signed-in user through; refused (403) otherwise."""
    if not user.is_authenticated:
        raise PermissionDenied("Sign in first.")
    return user
