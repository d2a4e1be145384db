"""Pages of the dice tools: the OMG PvD calculator and the sibling systems' dice, public under
/dice/ and, with a roll log, for a campaign's members under /dice/campaigns/<pk>/."""

from __future__ import annotations

from django.urls import path

from combat import dice_views

app_name = "dice"

urlpatterns = [
    path("", dice_views.dice_index, name="index"),
    path("campaigns/<int:campaign_pk>/", dice_views.campaign_index, name="campaign_index"),
]
for system in dice_views.SYSTEMS:
    urlpatterns += [
        path(f"{system}/", dice_views.tool_page, {"system": system}, name=system),
        path(
            f"campaigns/<int:campaign_pk>/{system}/",
            dice_views.campaign_tool_page,
            {"system": system},
            name=f"campaign_{system}",
        ),
    ]
