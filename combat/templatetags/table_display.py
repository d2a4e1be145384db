"""``{% display_section campaign %}``: the GM's table display controls on the campaign page
(combat/display.py), without the sheets app importing combat."""

from __future__ import annotations

from typing import Any

from django import template

from combat.display_views import section_context

register = template.Library()


@register.inclusion_tag("combat/_display_link.html", takes_context=True)
def display_section(context: template.Context, campaign: Any) -> dict[str, Any]:
    return {**section_context(context["request"], campaign), "csrf_token": context["csrf_token"]}
