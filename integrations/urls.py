from __future__ import annotations

from django.urls import path

from integrations import views

app_name = "integrations"

urlpatterns = [
    path("campaigns/<int:pk>/webhooks/", views.webhook_list, name="webhook_list"),
    path(
        "campaigns/<int:campaign_pk>/webhooks/<int:pk>/",
        views.webhook_detail,
        name="webhook_detail",
    ),
    path(
        "campaigns/<int:campaign_pk>/webhooks/<int:pk>/pause/",
        views.webhook_toggle,
        name="webhook_toggle",
    ),
    path(
        "campaigns/<int:campaign_pk>/webhooks/<int:pk>/secret/",
        views.webhook_rotate,
        name="webhook_rotate",
    ),
    path(
        "campaigns/<int:campaign_pk>/webhooks/<int:pk>/delete/",
        views.webhook_delete,
        name="webhook_delete",
    ),
    path(
        "campaigns/<int:campaign_pk>/webhooks/<int:pk>/deliveries/<int:delivery_pk>/",
        views.delivery_detail,
        name="delivery_detail",
    ),
]
