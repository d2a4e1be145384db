"""``{% webhooks_section campaign %}``: the GM's Webhooks section on the campaign page, with
any endpoint paused for failing."""

from __future__ import annotations

from typing import Any

from django import template

from integrations.models import WebhookEndpoint

register = template.Library()


@register.inclusion_tag("integrations/_campaign_section.html")
def webhooks_section(campaign: Any) -> dict[str, Any]:
    endpoints = list(WebhookEndpoint.objects.filter(campaign=campaign))
    return {
        "campaign": campaign,
        "count": len(endpoints),
        "failing": [e for e in endpoints if e.paused_reason and not e.active],
    }
