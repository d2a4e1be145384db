from __future__ import annotations

from django.urls import path

from prep import views

app_name = "prep"

urlpatterns = [
    path("library/", views.library, name="library"),
    path("library/starter-set/", views.starter_set, name="starter_set"),
    path("library/new/", views.npc_create, name="npc_create"),
    path("library/import/", views.npc_import, name="npc_import"),
    path("library/<int:pk>/", views.npc_edit, name="npc_edit"),
    path("library/<int:pk>/duplicate/", views.npc_duplicate, name="npc_duplicate"),
    path("library/<int:pk>/delete/", views.npc_delete, name="npc_delete"),
    path("library/<int:pk>/export/", views.npc_export, name="npc_export"),
    path("campaigns/<int:campaign_pk>/prepared/", views.prepared_list, name="prepared_list"),
    path("prepared/<int:pk>/", views.prepared_detail, name="prepared_detail"),
    path("prepared/<int:pk>/groups/", views.group_add, name="group_add"),
    path("prepared/groups/<int:pk>/delete/", views.group_delete, name="group_delete"),
    path("prepared/<int:pk>/delete/", views.prepared_delete, name="prepared_delete"),
    path("prepared/<int:pk>/start/", views.prepared_start, name="prepared_start"),
    path("prepared/<int:pk>/matchups/", views.prepared_matchups, name="prepared_matchups"),
    path("prepared/<int:pk>/forecast/", views.prepared_forecast, name="prepared_forecast"),
    path("encounters/<int:pk>/library/", views.encounter_add, name="encounter_add"),
    path("encounters/<int:pk>/forecast/", views.encounter_forecast, name="encounter_forecast"),
]
