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
