"""Interface helpers shared by every page: icons from the vendored Lucide sprite, and whether
the page may open a live stream."""

from __future__ import annotations

import functools
from typing import Any

from django import template
from django.core.handlers.asgi import ASGIRequest
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import HttpRequest
from django.templatetags.static import static
from django.utils.html import format_html
from django.utils.safestring import SafeString

register = template.Library()


@functools.cache
def _sprite() -> str:
    """The sprite's URL, asked of the static files storage once (a 20-participant tracker
    draws some 30 icons)."""
    return static("vendor/lucide/icons.svg")


@receiver(setting_changed)
def _forget_sprite(*, setting: str, **kwargs: Any) -> None:
    if setting in {"STATIC_URL", "STORAGES"}:
        _sprite.cache_clear()


@register.simple_tag
def icon(name: str, label: str = "") -> str:
    """An icon from static/vendor/lucide/icons.svg (scripts/build_icons.py lists them). It is
    decoration next to its text unless ``label`` names it for screen readers."""
    href = f"{_sprite()}#{name}"
    if label:
        return format_html(
            '<svg class="icon" role="img" aria-label="{}"><use href="{}"></use></svg>', label, href
        )
    return format_html(
        '<svg class="icon" aria-hidden="true" focusable="false"><use href="{}"></use></svg>', href
    )


@register.simple_tag(takes_context=True)
def form_token(context: template.Context) -> str:
    """``{% csrf_token %}`` for a form that may also be drawn for the live feed: there the
    context says ``live_fragment`` and the form carries no token (one render serves many
    viewers; htmx sends the token from the page's ``<body hx-headers>``)."""
    if context.get("live_fragment"):
        return ""
    # A page draws the same input in every form (a GM's 20-participant tracker: some 130):
    # it is drawn once, kept on the context object, which every include of the page shares.
    # The token is looked up each time: a test may give the same context another one.
    token = context.get("csrf_token")
    if not token:
        return ""
    token = str(token)
    drawn: tuple[str, SafeString] | None = getattr(context, "_form_token", None)
    if drawn is None or drawn[0] != token:
        drawn = (
            token,
            format_html('<input type="hidden" name="csrfmiddlewaretoken" value="{}">', token),
        )
        context._form_token = drawn  # type: ignore[attr-defined]  # cached on the context
    return drawn[1]


@register.filter
def served_live(request: HttpRequest | None) -> bool:
    """Whether this page came from the ASGI server, the only one that can hold a live stream.
    A page served over WSGI (config/wsgi.py, which answers streams 501, or a WSGI test server)
    opens none: the fight page says live updates are off, the table display reloads itself,
    the check dock fetches its prompts every 30 s."""
    return isinstance(request, ASGIRequest)
