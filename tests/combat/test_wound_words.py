"""Wounds in words for hidden foes: the GM lets players see a hidden fighter's state as a word
(unhurt, hurt, badly hurt, down), never a number; the thresholds are in docs/rules.md."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from combat import render, services
from combat.live import broadcast
from combat.models import Participant
from combat.wound_words import wounds_in_words
from tests.feed import stream_text

pytestmark = pytest.mark.django_db

WORDS_SWITCH = {"hidden_shows": "words"}


@pytest.mark.parametrize(
    ("state", "vitality", "zones", "word"),
    [
        ("active", 9, [(0, 12), (0, 12)], "unhurt"),
        ("active", 9, [(1, 12)], "hurt"),  # a wound within BZF costs no Vitality
        ("active", 5, [(0, 12)], "hurt"),  # more than half of VIT 9 left
        ("active", 4, [(0, 12)], "badly hurt"),  # half or less left
        ("active", 9, [(13, 12)], "badly hurt"),  # a zone past its BZF: a grievous wound
        ("active", 0, [(0, 12)], "down"),
        ("down", 9, [], "down"),
        ("unconscious", 9, [], "down"),
        ("out", 9, [], "down"),
    ],
)
def test_the_words_follow_the_documented_thresholds(state, vitality, zones, word):
    assert wounds_in_words(state=state, vitality=vitality, vit_max=9, zones=zones) == word


def update_url(fight) -> str:
    return reverse("combat:participant_update", args=[fight.encounter.pk, fight.thug.pk])


def page(client, fight) -> str:
    return client.get(fight.encounter.get_absolute_url()).text


def thug_cell(html: str, fight) -> str:
    row = re.search(rf'data-testid="participant-{fight.thug.pk}".*?</tr>', html, re.S).group(0)
    return re.search(r'<td colspan="3" class="muted hidden-numbers">(.*?)</td>', row, re.S)[1]


def test_a_hidden_foe_shows_players_nothing_until_the_gm_chooses_words(fight, client_for):
    gm, player = client_for(fight.table.gm), client_for(fight.table.player)
    assert "numbers hidden by the GM" in thug_cell(page(player, fight), fight)
    assert gm.post(update_url(fight), WORDS_SWITCH).status_code == 302
    fight.thug.refresh_from_db()
    assert fight.thug.hidden_shows == "words"
    cell = thug_cell(page(player, fight), fight)
    assert f'data-testid="words-{fight.thug.pk}">unhurt<' in cell


def test_the_word_follows_the_wounds_and_carries_no_number(fight, client_for):
    gm, player = client_for(fight.table.gm), client_for(fight.table.player)
    gm.post(update_url(fight), WORDS_SWITCH)
    chest = fight.zone(fight.thug, "chest")  # BZF 13, VIT 7
    services.adjust_zone(encounter=fight.encounter, zone=chest, amount=2, actor=fight.table.gm)
    assert ">hurt<" in thug_cell(page(player, fight), fight)
    services.adjust_zone(encounter=fight.encounter, zone=chest, amount=13, actor=fight.table.gm)
    cell = thug_cell(page(player, fight), fight)
    assert ">badly hurt<" in cell
    assert not re.search(r"\d", re.sub(r'data-testid="words-\d+"', "", cell))
    # The GM still sees the numbers, not the word.
    gm_page = page(gm, fight)
    assert f'data-testid="vit-{fight.thug.pk}"' in gm_page
    assert f'data-testid="words-{fight.thug.pk}"' not in gm_page


def test_the_live_feed_and_the_htmx_tracker_tell_players_the_word(fight, client_for):
    gm, player = fight.table.gm, fight.table.player
    before = broadcast.latest_entry_id(fight.encounter)
    response = client_for(gm).post(
        update_url(fight), {"hidden_shows": "words"}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 200
    services.update_participant(participant=fight.thug, state="unconscious", actor=gm)
    shared = render.tracker_panels(fight.encounter, player)["tracker"]
    assert f'data-testid="words-{fight.thug.pk}">down<' in shared
    assert f'words-{fight.thug.pk}">down<' in stream_text(fight.encounter, player, before)


def test_words_never_show_for_a_fighter_in_plain_sight(fight, client_for):
    client_for(fight.table.gm).post(update_url(fight), WORDS_SWITCH)
    services.update_participant(participant=fight.thug, hidden=False, actor=fight.table.gm)
    html = page(client_for(fight.table.player), fight)
    assert f'data-testid="vit-{fight.thug.pk}"' in html
    assert f'data-testid="words-{fight.thug.pk}"' not in html


@pytest.mark.parametrize(("role", "status"), [("player", 403), ("outsider", 404)])
def test_only_the_gm_chooses(fight, client_for, role, status):
    response = client_for(getattr(fight.table, role)).post(update_url(fight), WORDS_SWITCH)
    assert response.status_code == status
    assert Participant.objects.get(pk=fight.thug.pk).hidden_shows == "nothing"


def test_an_unknown_choice_is_refused_with_its_reason(fight, client_for):
    response = client_for(fight.table.gm).post(
        update_url(fight), {"hidden_shows": "numbers"}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 422
    assert "in words" in response.text
    assert Participant.objects.get(pk=fight.thug.pk).hidden_shows == "nothing"


def test_the_gms_menu_offers_the_choice_for_a_hidden_fighter_only(fight, client_for):
    html = page(client_for(fight.table.gm), fight)
    menus = re.findall(r'<details class="row-menu" id="row-menu-(\d+)">(.*?)</details>', html, re.S)
    offered = {int(pk) for pk, body in menus if 'name="hidden_shows"' in body}
    assert offered == {fight.thug.pk}
