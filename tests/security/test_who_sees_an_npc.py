"""Who sees an NPC (docs/security.md, "Who sees an NPC"), through the whole life of a fight.

An NPC's sheet is the GM's until the GM shows it to the players. Hiding an NPC in a fight
hides the NPC its copies were made from too (they carry its numbers), and a hidden copy stays
the GM's after its fight is finished and deleted. Every path a player has to a character is
tried: the API's list (with and without `?campaign=`), detail and nested rows, the sheet page,
its print view and export, the campaign page; in a fight, the encounter page, the participants,
attacks and events API and the live feed. Each check is also run for the GM, who sees it all,
so none passes by accident.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.urls import reverse

from combat import services as combat
from combat.models import Declaration, Encounter, Participant
from sheets.models import Character
from tests.factories import make_thug, make_ysolde
from tests.feed import stream_text
from tests.fight_steps import declare

pytestmark = pytest.mark.django_db

# Names only the NPC's sheet carries: a player who gets any of them got the sheet.
WEAPON = "Wyrmtooth Hatchet"


def _sheet_paths(character_id: int, campaign_id: int) -> list[str]:
    c = character_id
    paths = [
        f"/api/characters/{c}/",
        f"/api/characters/{c}/disciplines/",
        f"/api/characters/{c}/weapons/",
        f"/api/characters/{c}/zones/",
        reverse("sheets:character_detail", args=[c]),
        reverse("sheets:character_print", args=[c]),
        reverse("sheets:character_export", args=[c]),
    ]
    for kind, model in (("disciplines", "disciplines"), ("weapons", "weapons"), ("zones", "zones")):
        for pk in getattr(Character.objects.get(pk=c), model).values_list("pk", flat=True):
            paths.append(f"/api/characters/{c}/{kind}/{pk}/")
    return paths


def _listed(api: Any, campaign_id: int) -> set[int]:
    ids = set()
    for url in ("/api/characters/", f"/api/characters/?campaign={campaign_id}"):
        answer = api.get(url, {"limit": 1000})
        assert answer.status_code == 200
        ids |= {c["id"] for c in answer.json()["results"]}
    return ids


def sees_sheet(user: Any, character: Character, client_for: Any, api_for: Any) -> bool:
    """True when every path to the sheet answers, False when every one is a 404 and the
    lists and the campaign page leave it out; anything in between fails the test."""
    client, api = client_for(user), api_for(user)
    answers = {}
    for path in _sheet_paths(character.pk, character.campaign_id):
        answers[path] = (api if path.startswith("/api/") else client).get(path).status_code
    listed = character.pk in _listed(api, character.campaign_id)
    campaign_page = client.get(reverse("sheets:campaign_detail", args=[character.campaign_id]))
    linked = character.get_absolute_url() in campaign_page.text
    if all(code == 200 for code in answers.values()) and listed and linked:
        return True
    assert set(answers.values()) == {404}, answers
    assert not listed and not linked
    return False


@pytest.fixture
def npc(table):
    thug = make_thug(table.campaign, table.gm)
    thug.weapons.update(name=WEAPON)
    return Character.objects.get(pk=thug.pk)


def test_it_keeps_a_new_npc_to_the_gm(table, npc, client_for, api_for):
    assert not sees_sheet(table.player, npc, client_for, api_for)
    assert sees_sheet(table.gm, npc, client_for, api_for)
    assert not sees_sheet(table.outsider, npc, client_for, api_for)


def test_it_opens_an_npc_the_gm_shows_and_closes_it_again(table, npc, client_for, api_for):
    gm = client_for(table.gm)
    url = reverse("sheets:character_reveal", args=[npc.pk])
    assert "Only you can read this sheet" in gm.get(npc.get_absolute_url()).text
    assert gm.post(url, {"revealed": "1"}).status_code == 302
    assert sees_sheet(table.player, npc, client_for, api_for)
    assert "Players can read this sheet" in gm.get(npc.get_absolute_url()).text
    assert gm.post(url, {"revealed": "0"}).status_code == 302
    assert not sees_sheet(table.player, npc, client_for, api_for)


def test_it_lets_only_the_gm_show_an_npc(table, npc, client_for, api_for):
    url = reverse("sheets:character_reveal", args=[npc.pk])
    assert client_for(table.player).post(url, {"revealed": "1"}).status_code == 404
    Character.objects.filter(pk=npc.pk).update(revealed=True)
    assert client_for(table.player).post(url, {"revealed": "0"}).status_code == 403
    assert client_for(table.outsider).post(url, {"revealed": "0"}).status_code == 404
    assert Character.objects.get(pk=npc.pk).revealed
    # The GM's own button is not shown to players on a shown NPC.
    assert url not in client_for(table.player).get(npc.get_absolute_url()).text


def test_it_shows_an_npc_through_the_api_for_the_gm_only(table, npc, api_for):
    url = f"/api/characters/{npc.pk}/"
    assert api_for(table.gm).patch(url, {"revealed": True}, format="json").status_code == 200
    assert api_for(table.player).get(url).json()["revealed"] is True
    hero = make_ysolde(table.campaign, table.player)
    refused = api_for(table.player).patch(
        f"/api/characters/{hero.pk}/", {"revealed": True}, format="json"
    )
    assert refused.status_code == 400 and "revealed" in refused.json()


def test_it_never_lets_a_player_import_a_shown_npc(table, client_for):
    data = {"name": "Smuggled", "is_npc": True, "revealed": True}
    url = reverse("sheets:character_import", args=[table.campaign.pk])
    answer = client_for(table.player).post(url, {"text": json.dumps(data)})
    assert answer.status_code in (200, 302)
    made = Character.objects.filter(name="Smuggled").first()
    assert made is None or (not made.is_npc and not made.revealed)


def _fight(table: Any, npc: Character, *, hidden: bool) -> tuple[Encounter, Participant, Any]:
    hero = make_ysolde(table.campaign, table.player)
    encounter, _ = combat.create_encounter(campaign=table.campaign, name="Causeway", actor=table.gm)
    combat.add_participants(encounter=encounter, characters=[hero], actor=table.gm)
    combat.add_npc_copies(encounter=encounter, npc=npc, count=2, hidden=hidden, actor=table.gm)
    combat.start_encounter(encounter=encounter, actor=table.gm)
    copy = Participant.objects.select_related("character", "encounter__campaign").get(
        encounter=encounter, character__name=f"{npc.name} #1"
    )
    hero_p = Participant.objects.select_related("character", "encounter__campaign").get(
        encounter=encounter, character=hero
    )
    return Encounter.objects.get(pk=encounter.pk), copy, hero_p


def test_it_hides_a_shown_npc_while_its_copies_are_hidden_in_a_fight(
    table, npc, client_for, api_for
):
    Character.objects.filter(pk=npc.pk).update(revealed=True)
    npc.refresh_from_db()
    encounter, copy, _ = _fight(table, npc, hidden=True)
    assert not sees_sheet(table.player, npc, client_for, api_for)
    assert not sees_sheet(table.player, copy.character, client_for, api_for)
    assert sees_sheet(table.gm, copy.character, client_for, api_for)
    # The GM lifts the veil in the fight: the copy shows its numbers on the tracker, and the
    # NPC the GM showed is readable again once no copy of it is hidden.
    for p in encounter.participants.filter(hidden=True):
        combat.update_participant(participant=p, hidden=False, actor=table.gm)
    assert sees_sheet(table.player, npc, client_for, api_for)


def test_it_keeps_hidden_copies_secret_after_their_fight_is_deleted(
    table, npc, client_for, api_for
):
    encounter, copy, _ = _fight(table, npc, hidden=True)
    combat.finish_encounter(encounter=encounter, actor=table.gm)
    gm_api = api_for(table.gm)
    assert gm_api.delete(f"/api/encounters/{encounter.pk}/").status_code == 204
    assert not Participant.objects.filter(character=copy.character).exists()
    assert not sees_sheet(table.player, copy.character, client_for, api_for)
    assert not sees_sheet(table.player, npc, client_for, api_for)
    assert sees_sheet(table.gm, copy.character, client_for, api_for)


def test_it_keeps_the_copies_of_an_npc_the_gm_never_showed(table, npc, client_for, api_for):
    """Copies in plain sight show their numbers on the tracker, but their sheets follow the
    NPC they came from: the GM's alone."""
    _, copy, _ = _fight(table, npc, hidden=False)
    assert not sees_sheet(table.player, copy.character, client_for, api_for)
    assert not sees_sheet(table.player, npc, client_for, api_for)


def _hidden_copy_attacks(table: Any, copy: Participant, hero: Participant) -> Declaration:
    return declare(copy.encounter, copy, hero, actor=table.gm)


def test_it_never_names_a_hidden_attackers_weapon_to_players(table, npc, client_for, api_for):
    encounter, copy, hero = _fight(table, npc, hidden=True)
    first = encounter.log.order_by("pk").last()
    decl = _hidden_copy_attacks(table, copy, hero)
    page = reverse("combat:encounter_detail", args=[encounter.pk])

    def everything(user: Any) -> str:
        client, api = client_for(user), api_for(user)
        parts = [
            client.get(page).text,
            client.get(page, {"panel": "tracker"}, headers={"HX-Request": "true"}).text,
            json.dumps(api.get(f"/api/attacks/{decl.pk}/").json()),
            json.dumps(api.get(f"/api/encounters/{encounter.pk}/attacks/").json()),
            json.dumps(api.get(f"/api/encounters/{encounter.pk}/participants/").json()),
            json.dumps(api.get(f"/api/encounters/{encounter.pk}/events/").json()),
            stream_text(encounter, user, first.pk),
        ]
        return "\n".join(parts)

    player_sees = everything(table.player)
    assert WEAPON not in player_sees
    assert "Incoming attack!" in player_sees  # the attack itself is shown, without the weapon
    assert api_for(table.player).get(f"/api/attacks/{decl.pk}/").json()["weapon"] is None
    assert WEAPON in everything(table.gm)
    assert api_for(table.gm).get(f"/api/attacks/{decl.pk}/").json()["weapon"] is not None


def test_it_names_a_visible_attackers_weapon(table, npc, client_for):
    encounter, copy, hero = _fight(table, npc, hidden=False)
    _hidden_copy_attacks(table, copy, hero)
    page = client_for(table.player).get(reverse("combat:encounter_detail", args=[encounter.pk]))
    assert f"with {WEAPON}" in page.text


def test_it_answers_a_players_actions_on_a_secret_npc_like_a_missing_one(table, npc, api_for):
    """Rest, raises, reserve rolls and edits on a sheet the player may not see are 404s, the
    answer for an id that does not exist, and change nothing."""
    api = api_for(table.player)
    before = Character.objects.get(pk=npc.pk).version
    missing = 10**6
    for pk in (npc.pk, missing):
        assert api.post(f"/api/characters/{pk}/rest/").status_code == 404
        assert api.post(f"/api/characters/{pk}/buy-raise/", {"aptitude": "FOC"}).status_code == 404
        assert api.patch(f"/api/characters/{pk}/", {"name": "x"}).status_code == 404
        zone = f"/api/characters/{pk}/zones/"
        assert api.post(zone, {"name": "tail"}, format="json").status_code == 404
    assert Character.objects.get(pk=npc.pk).version == before


def test_it_keeps_the_demo_tables_salvager_thug_to_the_gm(db, client_for, api_for):
    from django.core.management import call_command

    call_command("demo", verbosity=0)
    from django.contrib.auth import get_user_model

    users = get_user_model().objects
    thug = Character.objects.get(name="Salvager Thug")
    assert not sees_sheet(users.get(username="alice"), thug, client_for, api_for)
    assert sees_sheet(users.get(username="gm"), thug, client_for, api_for)
