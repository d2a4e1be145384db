"""Pages of the dice tools: the OMG PvD calculator and the sibling systems' dice, public under
/dice/ and, with a roll log, for a campaign's members under /dice/campaigns/<pk>/."""

from __future__ import annotations

from django.urls import path

from rules.views import pages
from rules.views.base import SYSTEMS

app_name = "dice"

urlpatterns = [
    path("", pages.dice_index, name="index"),
    path("campaigns/<int:campaign_pk>/", pages.campaign_index, name="campaign_index"),
]
for system in SYSTEMS:
    urlpatterns += [
        path(f"{system}/", pages.tool_page, {"system": system}, name=system),
        path(
            f"campaigns/<int:campaign_pk>/{system}/",
            pages.campaign_tool_page,
            {"system": system},
            name=f"campaign_{system}",
        ),
    ]
