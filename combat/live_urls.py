"""The live feeds (server-sent events): an encounter's, and a campaign's for its checks."""

from __future__ import annotations

from django.urls import path

from checks import live as checks_live
from combat.live import stream

app_name = "live"

urlpatterns = [
    path("encounters/<int:pk>/events/", stream.encounter_stream, name="encounter_events"),
    path("campaigns/<int:pk>/events/", checks_live.campaign_stream, name="campaign_events"),
]
