"""``{% prep_section campaign %}``: the GM's Preparation section on the campaign page."""

from __future__ import annotations

from typing import Any

from django import template

from prep.models import PreparedEncounter

register = template.Library()


@register.inclusion_tag("prep/_campaign_section.html")
def prep_section(campaign: Any) -> dict[str, Any]:
    return {
        "campaign": campaign,
        "prepared": list(PreparedEncounter.objects.filter(campaign=campaign)[:10]),
    }
