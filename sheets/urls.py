from __future__ import annotations

from django.urls import path

from sheets.views import accounts, campaigns, characters

app_name = "sheets"

urlpatterns = [
    path("", accounts.home, name="home"),
    path("dashboard/", accounts.dashboard, name="dashboard"),
    path("signup/", accounts.signup, name="signup"),
    path("campaigns/new/", campaigns.campaign_create, name="campaign_create"),
    path("campaigns/join/", campaigns.campaign_join, name="campaign_join"),
    path("campaigns/<int:pk>/", campaigns.campaign_detail, name="campaign_detail"),
    path("campaigns/<int:pk>/edit/", campaigns.campaign_edit, name="campaign_edit"),
    path("campaigns/<int:pk>/delete/", campaigns.campaign_delete, name="campaign_delete"),
    path("campaigns/<int:pk>/leave/", campaigns.campaign_leave, name="campaign_leave"),
    path("campaigns/<int:pk>/rest/", campaigns.campaign_rest, name="campaign_rest"),
    path(
        "campaigns/<int:pk>/join-code/",
        campaigns.campaign_regenerate_code,
        name="campaign_regenerate_code",
    ),
    path(
        "campaigns/<int:pk>/players/<int:user_id>/remove/",
        campaigns.campaign_remove_player,
        name="campaign_remove_player",
    ),
    path("account/", accounts.account, name="account"),
    path("account/email/<str:token>/", accounts.email_confirm, name="email_confirm"),
    path("account/delete/", accounts.account_delete, name="account_delete"),
    path("campaigns/<int:pk>/handover/", accounts.campaign_handover, name="campaign_handover"),
    path("handovers/<int:pk>/accept/", accounts.handover_accept, name="handover_accept"),
    path("handovers/<int:pk>/decline/", accounts.handover_decline, name="handover_decline"),
    path("account/sessions/end/", accounts.sessions_end, name="sessions_end"),
    path("account/tokens/", accounts.token_list, name="token_list"),
    path("account/tokens/<int:pk>/revoke/", accounts.token_revoke, name="token_revoke"),
]

urlpatterns += [
    path(
        "campaigns/<int:campaign_pk>/characters/new/",
        characters.character_create,
        name="character_create",
    ),
    path(
        "campaigns/<int:campaign_pk>/characters/wizard/",
        characters.character_wizard,
        name="character_wizard",
    ),
    path(
        "campaigns/<int:campaign_pk>/characters/import/",
        characters.character_import,
        name="character_import",
    ),
    path("characters/<int:pk>/", characters.character_detail, name="character_detail"),
    path("characters/<int:pk>/rest/", characters.character_rest, name="character_rest"),
    path("characters/<int:pk>/reserve/", characters.character_reserve, name="character_reserve"),
    path("characters/<int:pk>/reveal/", characters.character_reveal, name="character_reveal"),
    path(
        "characters/<int:pk>/raise/",
        characters.character_buy_raise,
        name="character_buy_raise",
    ),
    path(
        "characters/<int:pk>/edit/",
        characters.character_edit_field,
        name="character_edit_field",
    ),
    path(
        "characters/<int:pk>/<str:kind>/add/",
        characters.character_add_row,
        name="character_add_row",
    ),
    path(
        "characters/<int:pk>/<str:kind>/<int:row_id>/delete/",
        characters.character_delete_row,
        name="character_delete_row",
    ),
    path(
        "characters/<int:pk>/zones/<int:zone_id>/wound/",
        characters.character_wound,
        name="character_wound",
    ),
    path("characters/<int:pk>/delete/", characters.character_delete, name="character_delete"),
    path("characters/<int:pk>/print/", characters.character_print, name="character_print"),
    path("characters/<int:pk>/export/", characters.character_export, name="character_export"),
]
