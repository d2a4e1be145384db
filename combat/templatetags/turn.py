"""``{% turn_dock %}``: the player's "Your turn" dock and "You're next" (combat/turn_dock.py)."""

from __future__ import annotations

from typing import Any

from django import template

from combat.turn_dock import docks

register = template.Library()


@register.inclusion_tag("combat/_turn_dock.html", takes_context=True)
def turn_dock(context: template.Context) -> dict[str, Any]:
    return {
        **docks(
            context.get("rows") or [],
            shared=bool(context.get("shared")),
            is_gm=bool(context.get("is_gm")),
            running=bool(context.get("running")),
            declared={d.decl.attacker_id for d in context.get("declarations") or []},
        ),
        "encounter": context["encounter"],
        "actions": context.get("actions"),
        "live_fragment": context.get("live_fragment"),
        "csrf_token": context.get("csrf_token"),
    }
