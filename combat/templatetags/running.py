"""``{% running_fights %}``: the viewer's running fights, each a button into it
(combat/running.py), on the dashboard and the campaign page."""

from __future__ import annotations

from typing import Any

from django import template

from combat.running import running_fights as fights_of

register = template.Library()


@register.inclusion_tag("combat/_running_fights.html", takes_context=True)
def running_fights(context: template.Context, campaign: Any = None) -> dict[str, Any]:
    return {"fights": fights_of(context["user"], campaign=campaign)}
