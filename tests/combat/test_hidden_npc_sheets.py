"""An NPC the GM hides in an encounter keeps its numbers from players everywhere, not only on
the encounter page: its sheet, print view, export, JSON and the lists all leave it out."""

from __future__ import annotations

import pytest
from django.urls import reverse

from combat import services
from combat.models import Participant
from tests.feed import stream_text
from tests.fight_steps import declare

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


def test_it_shows_the_sheet_once_the_gm_unhides_the_copy_and_shows_its_sheet(fight, client_for):
    services.update_participant(participant=fight.thug, hidden=False, actor=fight.table.gm)
    url = reverse("sheets:character_detail", args=[fight.thug.character_id])
    # In plain sight on the tracker, but an NPC's sheet is the GM's until shown on purpose.
    assert client_for(fight.table.player).get(url).status_code == 404
    reveal = reverse("sheets:character_reveal", args=[fight.thug.character_id])
    client_for(fight.table.gm).post(reveal, {"revealed": "1"})
    assert client_for(fight.table.player).get(url).status_code == 200


def _thug_attacks_ysolde(fight):
    return declare(
        fight.encounter, fight.thug, fight.ysolde, action="precise", actor=fight.table.gm
    )


def _ysolde_attacks_thug(fight):
    return declare(fight.encounter, fight.ysolde, fight.thug, actor=fight.table.player)


def test_it_shows_a_player_their_own_numbers_against_a_hidden_npc(fight, client_for):
    """Ysolde's PRO when she attacks (VGR 5 + Swordsmanship 3: 90), her DIF per defense
    when attacked (dodge 25, parry 30, block 35); never the thug's, nor odds from both."""
    url = fight.encounter.get_absolute_url()
    _ysolde_attacks_thug(fight)
    page = client_for(fight.table.player).get(url).content.decode()
    assert "90v?" in page and "hidden by the GM" in page
    assert "90v20" not in page
    assert "90v20" in client_for(fight.table.gm).get(url).content.decode()
    fight.encounter.declarations.update(status="cancelled")

    _thug_attacks_ysolde(fight)
    page = client_for(fight.table.player).get(url).content.decode()
    assert "Incoming attack!" in page
    assert all(f"?v{dif}" in page for dif in (25, 30, 35))
    assert "75v25" not in page  # the thug's precise strike: SKL 3 + weapon discipline 2: 75
    assert "75v25" in client_for(fight.table.gm).get(url).content.decode()


def test_it_gives_a_player_their_own_numbers_against_a_hidden_npc_in_json(fight, api_for):
    decl = _thug_attacks_ysolde(fight)
    odds = api_for(fight.table.player).get(f"/api/attacks/{decl.pk}/").json()["odds"]
    assert {m: (o["pro"], o["dif"], o["hit"]) for m, o in odds.items()} == {
        "dodge": (None, 25, None),
        "parry": (None, 30, None),
        "block": (None, 35, None),
    }
    gm_odds = api_for(fight.table.gm).get(f"/api/attacks/{decl.pk}/").json()["odds"]
    assert gm_odds["dodge"]["pvd"] == "75v25" and gm_odds["dodge"]["hit"] > 0


def test_it_lists_fight_copies_apart_on_the_campaign_page(fight, client_for):
    page = client_for(fight.table.gm).get(fight.table.campaign.get_absolute_url()).text
    cast, copies = page.split('data-testid="fight-copies"')
    assert "Salvager Thug #1" not in cast and "Salvager Thug</a>" in cast
    assert "Salvager Thug #1" in copies and "copy of Salvager Thug" in copies


def test_one_characters_check_agrees_with_the_list_rule(fight):
    """The sheet pages check one character (``Character.is_visible_to``, a few small queries)
    by the rule every list uses (``Character.objects.visible_to``): for every character and
    user, through hiding, showing and unhiding."""
    from django.contrib.auth.models import AnonymousUser

    from sheets.models import Character

    table = fight.table
    users = [table.gm, table.player, table.outsider, table.other_gm, AnonymousUser()]
    npc = fight.npc

    def agree() -> int:
        checked = 0
        for character in Character.objects.select_related("campaign"):
            for user in users:
                listed = Character.objects.visible_to(user).filter(pk=character.pk).exists()
                assert character.is_visible_to(user) == listed, (character, user)
                checked += listed
        return checked

    hidden = agree()  # the thug copy is hidden
    npc.revealed = True
    npc.save()
    Character.objects.filter(pk=fight.thug.character_id).update(revealed=True)
    still_hidden = agree()
    services.update_participant(participant=fight.thug, hidden=False, actor=table.gm)
    shown = agree()
    assert hidden == still_hidden < shown


def test_it_leaves_a_hidden_npcs_own_d100_out_for_players(fight, client_for, api_for):
    """The hidden thug's Stamina test (64, rolled by the GM): a player reads that it stayed
    conscious or not, never the d100, which with its NRV + VGR bounds the thug's numbers."""
    gm, player = fight.table.gm, fight.table.player
    Participant.objects.filter(pk=fight.thug.pk).update(stamina_due=True)  # a grievous wound's
    entry = services.stamina_check(participant=fight.thug, roll=64, actor=gm)
    enc = fight.encounter

    def received(user):
        events = api_for(user).get(f"/api/encounters/{enc.pk}/events/").json()
        record = api_for(user).get(f"/api/encounters/{enc.pk}/record/").json()
        return {
            "events": next(e["roll"] for e in events if e["id"] == entry.pk),
            "record": next(e["roll"] for e in record["log"] if e["seq"] == entry.seq),
            "page": "dice: 64" in client_for(user).get(enc.get_absolute_url()).text,
            "feed": "dice: 64" in stream_text(enc, user, entry.pk - 1),
        }

    assert received(player) == {"events": None, "record": None, "page": False, "feed": False}
    assert received(gm) == {"events": 64, "record": 64, "page": True, "feed": True}
