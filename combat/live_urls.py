"""The live feed of an encounter (server-sent events)."""

from __future__ import annotations

from django.urls import path

from combat.live import stream

app_name = "live"

urlpatterns = [
    path("encounters/<int:pk>/events/", stream.encounter_stream, name="encounter_events"),
]
