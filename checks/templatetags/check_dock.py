"""``{% check_dock campaign %}``: the calls waiting for the viewer's characters, kept live by
the campaign's stream (checks/live.py), on every page a player is at when the GM
calls: the campaign's pages, the sheet, the fight."""

from __future__ import annotations

from typing import Any

from django import template

from checks.services import pending_requests
from sheets.models import Campaign
from sheets.templatetags.ui import served_live

register = template.Library()


@register.inclusion_tag("checks/_dock.html", takes_context=True)
def check_dock(context: template.Context, campaign: Campaign) -> dict[str, Any]:
    user = context["user"]
    # Only the campaign's GM and players may open its stream (anyone else is answered 404).
    member = campaign.is_gm(user) or campaign.is_member(user)
    return {
        "campaign": campaign,
        "member": member,
        # Over WSGI (no stream) the dock fetches its prompts every 30 s instead.
        "live": served_live(context.get("request")),
        "prompts": pending_requests(user, campaign) if member else [],
    }
