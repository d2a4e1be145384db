"""Interface helpers shared by every page: icons from the vendored Lucide sprite."""

from __future__ import annotations

from django import template
from django.templatetags.static import static
from django.utils.html import format_html

register = template.Library()


@register.simple_tag
def icon(name: str, label: str = "") -> str:
    """An icon from static/vendor/lucide/icons.svg (scripts/build_icons.py lists them). It is
    decoration next to its text unless ``label`` names it for screen readers."""
    href = f"{static('vendor/lucide/icons.svg')}#{name}"
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
    token = context.get("csrf_token")
    if not token:
        return ""
    return format_html('<input type="hidden" name="csrfmiddlewaretoken" value="{}">', token)
