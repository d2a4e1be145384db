"""``{% past_fights campaign %}``: the campaign page's list of its finished fights with their
outcome (combat/record.py), without the sheets app importing combat."""

from __future__ import annotations

from typing import Any

from django import template

from combat import record
from combat.models import Encounter

register = template.Library()

#: The campaign page shows the latest fights; the encounters page has them all.
SHOWN = 10


@register.inclusion_tag("combat/_past_fights.html")
def past_fights(campaign: Any) -> dict[str, Any]:
    finished = list(
        Encounter.objects.filter(campaign=campaign, status=Encounter.Status.FINISHED).order_by(
            "-updated_at", "-pk"
        )[:SHOWN]
    )
    return {"campaign": campaign, "fights": record.past_fights(finished)}
