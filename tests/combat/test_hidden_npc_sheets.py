"""An NPC the GM hides in an encounter keeps its numbers from players everywhere, not only on
the encounter page: its sheet, print view, export, JSON and the lists all leave it out."""

from __future__ import annotations

import pytest
from django.urls import reverse

from combat import services

pytestmark = pytest.mark.django_db

SHEET_PAGES = ["character_detail", "character_print", "character_export"]


@pytest.mark.parametrize("page", SHEET_PAGES)
def test_it_answers_404_to_a_player_for_a_hidden_npc_sheet(fight, client_for, page):
    url = reverse(f"sheets:{page}", args=[fight.thug.character_id])
    assert client_for(fight.table.player).get(url).status_code == 404
    assert client_for(fight.table.gm).get(url).status_code == 200


def test_it_leaves_a_hidden_npc_out_of_the_players_json(fight, api_for):
    pk = fight.thug.character_id
    player = api_for(fight.table.player)
    assert player.get(f"/api/characters/{pk}/").status_code == 404
    listed = {c["id"] for c in player.get("/api/characters/").json()["results"]}
    assert pk not in listed
    assert fight.ysolde.character_id in listed
    gm_listed = {c["id"] for c in api_for(fight.table.gm).get("/api/characters/").json()["results"]}
    assert pk in gm_listed


def test_it_leaves_a_hidden_npc_off_the_campaign_page_for_players(fight, client_for):
    url = reverse("sheets:campaign_detail", args=[fight.table.campaign.pk])
    sheet = reverse("sheets:character_detail", args=[fight.thug.character_id])
    assert sheet not in client_for(fight.table.player).get(url).content.decode()
    assert sheet in client_for(fight.table.gm).get(url).content.decode()


def test_it_shows_the_sheet_again_once_the_gm_reveals_the_npc(fight, client_for):
    services.update_participant(participant=fight.thug, hidden=False, actor=fight.table.gm)
    url = reverse("sheets:character_detail", args=[fight.thug.character_id])
    assert client_for(fight.table.player).get(url).status_code == 200
