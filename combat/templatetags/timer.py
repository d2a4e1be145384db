"""``{% turn_timer %}``: the turn timer of the encounter in the context, for the encounter page
(with the GM's switch) and the table display (combat/timer.py)."""

from __future__ import annotations

from typing import Any

from django import template

from combat.timer import timer_context

register = template.Library()


@register.inclusion_tag("combat/_turn_timer.html", takes_context=True)
def turn_timer(context: template.Context, *, switch: bool = True) -> dict[str, Any]:
    encounter = context["encounter"]
    return {
        **timer_context(encounter),
        "encounter": encounter,
        "switch": switch and context.get("is_gm") and encounter.status != "finished",
        "live_fragment": context.get("live_fragment"),
        "csrf_token": context.get("csrf_token"),
    }
