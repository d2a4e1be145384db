from __future__ import annotations

from django.urls import path

from checks import views

app_name = "checks"

urlpatterns = [
    path("characters/<int:pk>/check/", views.check_roll, name="check_roll"),
    path("characters/<int:pk>/resources/", views.resource_change, name="resource_change"),
    path("checks/<int:pk>/", views.check_detail, name="check_detail"),
    path("checks/<int:pk>/fate/", views.check_fate, name="check_fate"),
    path("checks/<int:pk>/reveal/", views.check_reveal, name="check_reveal"),
    path("campaigns/<int:pk>/checks/", views.campaign_checks, name="campaign_checks"),
    path("campaigns/<int:pk>/checks/undo/", views.campaign_undo, name="campaign_undo"),
    path("campaigns/<int:pk>/checks/call/", views.call_create, name="call_create"),
    path("campaigns/<int:pk>/checks/prompts/", views.prompts, name="prompts"),
    path("check-calls/<int:pk>/", views.call_detail, name="call_detail"),
    path("check-calls/<int:pk>/close/", views.call_close, name="call_close"),
    path("check-requests/<int:pk>/", views.request_answer, name="request_answer"),
]
