from __future__ import annotations

from django.urls import path

from sheets import character_views, views

app_name = "sheets"

urlpatterns = [
    path("", views.home, name="home"),
    path("dashboard/", views.dashboard, name="dashboard"),
    path("signup/", views.signup, name="signup"),
    path("campaigns/new/", views.campaign_create, name="campaign_create"),
    path("campaigns/join/", views.campaign_join, name="campaign_join"),
    path("campaigns/<int:pk>/", views.campaign_detail, name="campaign_detail"),
    path("campaigns/<int:pk>/edit/", views.campaign_edit, name="campaign_edit"),
    path("campaigns/<int:pk>/delete/", views.campaign_delete, name="campaign_delete"),
    path("campaigns/<int:pk>/leave/", views.campaign_leave, name="campaign_leave"),
    path("campaigns/<int:pk>/rest/", views.campaign_rest, name="campaign_rest"),
    path(
        "campaigns/<int:pk>/join-code/",
        views.campaign_regenerate_code,
        name="campaign_regenerate_code",
    ),
    path(
        "campaigns/<int:pk>/players/<int:user_id>/remove/",
        views.campaign_remove_player,
        name="campaign_remove_player",
    ),
    path("account/tokens/", views.token_list, name="token_list"),
    path("account/tokens/<int:pk>/revoke/", views.token_revoke, name="token_revoke"),
]

urlpatterns += [
    path(
        "campaigns/<int:campaign_pk>/characters/new/",
        character_views.character_create,
        name="character_create",
    ),
    path(
        "campaigns/<int:campaign_pk>/characters/wizard/",
        character_views.character_wizard,
        name="character_wizard",
    ),
    path(
        "campaigns/<int:campaign_pk>/characters/import/",
        character_views.character_import,
        name="character_import",
    ),
    path("characters/<int:pk>/", character_views.character_detail, name="character_detail"),
    path("characters/<int:pk>/rest/", character_views.character_rest, name="character_rest"),
    path(
        "characters/<int:pk>/reserve/", character_views.character_reserve, name="character_reserve"
    ),
    path("characters/<int:pk>/reveal/", character_views.character_reveal, name="character_reveal"),
    path(
        "characters/<int:pk>/raise/",
        character_views.character_buy_raise,
        name="character_buy_raise",
    ),
    path(
        "characters/<int:pk>/edit/",
        character_views.character_edit_field,
        name="character_edit_field",
    ),
    path(
        "characters/<int:pk>/<str:kind>/add/",
        character_views.character_add_row,
        name="character_add_row",
    ),
    path(
        "characters/<int:pk>/<str:kind>/<int:row_id>/delete/",
        character_views.character_delete_row,
        name="character_delete_row",
    ),
    path(
        "characters/<int:pk>/zones/<int:zone_id>/wound/",
        character_views.character_wound,
        name="character_wound",
    ),
    path("characters/<int:pk>/delete/", character_views.character_delete, name="character_delete"),
    path("characters/<int:pk>/print/", character_views.character_print, name="character_print"),
    path("characters/<int:pk>/export/", character_views.character_export, name="character_export"),
]
