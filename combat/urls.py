"""The combat tracker's pages: encounters of a campaign and the encounter page's controls."""

from __future__ import annotations

from django.urls import path

from combat import condition_views, record_views, timer, views

app_name = "combat"

urlpatterns = [
    path(
        "campaigns/<int:campaign_pk>/encounters/",
        views.encounter_list,
        name="encounter_list",
    ),
    path("encounters/<int:pk>/", views.encounter_detail, name="encounter_detail"),
    path("encounters/<int:pk>/start/", views.encounter_start, name="encounter_start"),
    path(
        "encounters/<int:pk>/initiative/",
        views.encounter_initiative,
        name="encounter_initiative",
    ),
    path("encounters/<int:pk>/next-turn/", views.encounter_next_turn, name="encounter_next_turn"),
    path(
        "encounters/<int:pk>/turn/<int:participant_pk>/",
        views.encounter_set_turn,
        name="encounter_set_turn",
    ),
    path("encounters/<int:pk>/finish/", views.encounter_finish, name="encounter_finish"),
    path("encounters/<int:pk>/timer/", timer.encounter_timer, name="encounter_timer"),
    path("encounters/<int:pk>/undo/", views.encounter_undo, name="encounter_undo"),
    path("encounters/<int:pk>/zones/adjust/", views.zone_adjust, name="zone_adjust"),
    path("encounters/<int:pk>/participants/add/", views.participant_add, name="participant_add"),
    path("encounters/<int:pk>/copies/add/", views.npc_copies_add, name="npc_copies_add"),
    path(
        "encounters/<int:pk>/participants/<int:participant_pk>/update/",
        views.participant_update,
        name="participant_update",
    ),
    path(
        "encounters/<int:pk>/participants/<int:participant_pk>/stamina/",
        views.participant_stamina,
        name="participant_stamina",
    ),
    path(
        "encounters/<int:pk>/participants/<int:participant_pk>/conditions/add/",
        condition_views.condition_add,
        name="condition_add",
    ),
    path(
        "encounters/<int:pk>/participants/<int:participant_pk>/conditions/remove/",
        condition_views.condition_remove,
        name="condition_remove",
    ),
    path("encounters/<int:pk>/record.md", record_views.record_markdown, name="record_markdown"),
    path("encounters/<int:pk>/record.json", record_views.record_json, name="record_json"),
    path("encounters/<int:pk>/attacks/", views.attack_declare, name="attack_declare"),
    path("attacks/<int:pk>/defense/", views.attack_defense, name="attack_defense"),
    path("attacks/<int:pk>/roll/", views.attack_roll, name="attack_roll"),
    path("attacks/<int:pk>/cancel/", views.attack_cancel, name="attack_cancel"),
    path("rolls/<int:pk>/fate/", views.roll_fate, name="roll_fate"),
]
