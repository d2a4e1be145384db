"""The table display: the GM's link controls, the display page and its live feed."""

from __future__ import annotations

from django.urls import path

from combat import display_views

app_name = "display"

urlpatterns = [
    path(
        "campaigns/<int:pk>/display/new/",
        display_views.display_link_make,
        name="link_make",
    ),
    path(
        "campaigns/<int:pk>/display/revoke/",
        display_views.display_link_revoke,
        name="link_revoke",
    ),
    path("display/<str:secret>/", display_views.display_page, name="page"),
    path(
        "display/<str:secret>/events/<int:pk>/",
        display_views.display_events,
        name="events",
    ),
]
