"""The result card after a roll: everyone involved sees how it went; a player sees their own
character's outcome in full, even against a hidden NPC, and never the NPC's numbers."""

from __future__ import annotations

import re

import pytest

from combat import services
from sheets.models import BodyZone, Character
from tests.fight_steps import strike

pytestmark = pytest.mark.django_db


def _roll(fight, attacker, target, zone, defense, actor, roll):
    strike(
        fight.encounter,
        attacker,
        target,
        action="precise",
        zone=zone,
        actor=actor,
        defender=fight.table.gm,
        defense=defense,
        roll=roll,
    )


def _card(client, fight):
    page = client.get(fight.encounter.get_absolute_url()).text
    match = re.search(r'<section class="result-card.*?</section>', page, re.S)
    assert match, "no result card"
    return match.group(0)


def test_it_shows_the_attacked_player_their_own_wounds_against_a_hidden_npc(fight, client_for):
    # The thug's precise strike (75 vs Ysolde's dodge DIF 25) rolled 43: a plain success.
    chest = fight.zone(fight.ysolde, "chest")
    _roll(fight, fight.thug, fight.ysolde, chest, "dodge", fight.table.gm, 43)
    wounds = BodyZone.objects.get(pk=chest.pk).wounds
    assert wounds > 0
    card = _card(client_for(fight.table.player), fight)
    assert 'data-testid="result-degree">Success</span>' in card
    assert f"Ysolde Varr&#x27;s chest: wounds 0 → {wounds}" in card
    assert "75v25" not in card and "Hatchet" not in card  # the thug's numbers and weapon
    gm_card = _card(client_for(fight.table.gm), fight)
    assert "75v25" in gm_card


def test_it_shows_a_player_their_own_roll_against_a_hidden_npc_without_its_wounds(
    fight, client_for
):
    # Ysolde's precise strike (SKL 4 + Swordsmanship 3: 85) against the thug's parry.
    chest = fight.zone(fight.thug, "chest")
    _roll(fight, fight.ysolde, fight.thug, chest, "parry", fight.table.player, 43)
    thug_wounds = BodyZone.objects.get(pk=chest.pk).wounds
    assert thug_wounds > 0
    card = _card(client_for(fight.table.player), fight)
    assert 'data-testid="result-degree">Success</span>' in card
    assert "1 hit" in card
    assert "Salvager Thug #1&#x27;s chest: wounds" not in card
    assert f"→ {thug_wounds}" not in card
    gm_card = _card(client_for(fight.table.gm), fight)
    assert f"Salvager Thug #1&#x27;s chest: wounds 0 → {thug_wounds}" in gm_card


def test_it_shows_no_card_before_a_roll_or_once_the_fight_moved_on(fight, client_for):
    page = client_for(fight.table.player).get(fight.encounter.get_absolute_url()).text
    assert "result-card" not in page
    _roll(
        fight,
        fight.ysolde,
        fight.thug,
        fight.zone(fight.thug, "chest"),
        "parry",
        fight.table.player,
        43,
    )
    services.next_turn(encounter=fight.encounter, actor=fight.table.gm)
    page = client_for(fight.table.player).get(fight.encounter.get_absolute_url()).text
    assert "result-card" not in page
    assert Character.objects.filter(name="Ysolde Varr").exists()
