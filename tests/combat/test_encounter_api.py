"""The combat API: roles, the combat sequence over HTTP, hidden numbers in JSON, 409s."""

from __future__ import annotations

import pytest

from combat import services
from combat.models import CombatLogEntry, Encounter

pytestmark = pytest.mark.django_db


@pytest.fixture
def api_for(api_for):
    """The conftest's clients, sending JSON (the API's only request format)."""

    def make(user):
        client = api_for(user)
        client.default_format = "json"
        return client

    return make


def test_it_lets_the_gm_create_and_members_list_encounters(table, api_for):
    body = {"campaign": table.campaign.pk, "name": "Bridge"}
    assert api_for(None).post("/api/encounters/", body).status_code in (401, 403)
    assert api_for(table.outsider).post("/api/encounters/", body).status_code == 400
    assert api_for(table.player).post("/api/encounters/", body).status_code == 403
    created = api_for(table.gm).post("/api/encounters/", body, format="json")
    assert created.status_code == 201 and created.json()["status"] == "preparing"
    pk = created.json()["id"]
    assert [e["id"] for e in api_for(table.player).get("/api/encounters/").json()["results"]] == [
        pk
    ] or [e["id"] for e in api_for(table.player).get("/api/encounters/").json()] == [pk]
    assert api_for(table.outsider).get(f"/api/encounters/{pk}/").status_code == 404
    assert api_for(table.player).patch(f"/api/encounters/{pk}/", {"name": "x"}).status_code == 403
    assert api_for(table.gm).patch(f"/api/encounters/{pk}/", {"name": "Ford"}).status_code == 200
    assert Encounter.objects.get(pk=pk).name == "Ford"


def test_it_runs_the_combat_sequence_over_http(fight, api_for):
    gm, player = api_for(fight.table.gm), api_for(fight.table.player)
    enc = fight.encounter.pk
    chest = fight.zone(fight.thug, "chest")
    declared = player.post(
        f"/api/encounters/{enc}/attacks/",
        {
            "attacker": fight.ysolde.pk,
            "target": fight.thug.pk,
            "zone": chest.pk,
            "weapon": fight.weapon(fight.ysolde).pk,
            "action": "mighty",
        },
        format="json",
    )
    assert declared.status_code == 201, declared.json()
    attack = declared.json()
    assert attack["status"] == "pending"
    # The thug's numbers are hidden from the player: Ysolde's PRO only, no DIF, no odds.
    assert {mode: o["pvd"] for mode, o in attack["odds"].items()} == dict.fromkeys(
        ("dodge", "parry", "block"), "90v?"
    )
    assert all(o["dif"] is None and o["hit"] is None for o in attack["odds"].values())
    gm_view = gm.get(f"/api/attacks/{attack['id']}/").json()
    assert gm_view["odds"]["parry"]["pvd"] == "90v20"
    assert (
        player.post(f"/api/attacks/{attack['id']}/defense/", {"defense": "parry"}).status_code
        == 403
    )
    assert gm.post(f"/api/attacks/{attack['id']}/defense/", {"defense": "parry"}).status_code == 200
    bad = player.post(f"/api/attacks/{attack['id']}/roll/", {"roll": 101}, format="json")
    assert bad.status_code == 400
    rolled = player.post(f"/api/attacks/{attack['id']}/roll/", {"roll": 43}, format="json")
    assert rolled.status_code == 200
    # Hidden thug involved: no details, and no d100 (with the hit it bounds his DIF).
    assert rolled.json()["roll"] is None and rolled.json()["physical"] is True
    assert rolled.json()["details"] is None
    again = player.post(f"/api/attacks/{attack['id']}/roll/", {"roll": 43}, format="json")
    assert again.status_code == 409
    full = gm.get(f"/api/rolls/{rolled.json()['id']}/").json()
    assert full["details"]["result"]["damage"] == 20 and full["roll"] == 43
    # Fate: the player revokes the roll with Ysolde's Fate.
    fate = player.post(f"/api/rolls/{rolled.json()['id']}/fate/", {"action": "revoke"})
    assert fate.status_code == 200 and fate.json()["reroll"] is None
    assert fight.zone(fight.thug, "chest").wounds == 0
    # Turn, undo (GM only), events after an id.
    assert player.post(f"/api/encounters/{enc}/undo/").status_code == 403
    assert gm.post(f"/api/encounters/{enc}/next-turn/", {}, format="json").status_code == 200
    assert gm.post(f"/api/encounters/{enc}/undo/").status_code == 200
    last = CombatLogEntry.objects.filter(encounter=fight.encounter).order_by("-pk")[2]
    events = player.get(f"/api/encounters/{enc}/events/?after={last.pk}").json()
    assert [e["kind"] for e in events] == ["turn", "undo"]
    assert player.get(f"/api/encounters/{enc}/events/?after=x").status_code == 400


def test_it_hides_npc_numbers_in_json(fight, api_for):
    enc = fight.encounter.pk
    thug = fight.thug.pk
    for url in (f"/api/encounters/{enc}/", f"/api/encounters/{enc}/participants/"):
        data = api_for(fight.table.player).get(url).json()
        ps = data if isinstance(data, list) else data["participants"]
        by_id = {p["id"]: p for p in ps}
        assert by_id[thug]["numbers"] is None
        assert by_id[fight.ysolde.pk]["numbers"]["vitality"] == 10
        gm_data = api_for(fight.table.gm).get(url).json()
        gm_ps = gm_data if isinstance(gm_data, list) else gm_data["participants"]
        assert {p["id"]: p for p in gm_ps}[thug]["numbers"]["vitality"] == 7
    assert api_for(fight.table.player).get(f"/api/participants/{thug}/").json()["numbers"] is None
    assert api_for(fight.table.outsider).get(f"/api/participants/{thug}/").status_code == 404


def test_it_adds_npc_copies_and_updates_participants_as_the_gm(fight, api_for):
    enc = fight.encounter.pk
    gm, player = api_for(fight.table.gm), api_for(fight.table.player)
    body = {"npc": fight.npc.pk, "count": 2, "hidden": True}
    assert (
        player.post(f"/api/encounters/{enc}/participants/", body, format="json").status_code == 403
    )
    added = gm.post(f"/api/encounters/{enc}/participants/", body, format="json")
    assert added.status_code == 201 and added.json()["kind"] == "join"
    assert fight.encounter.participants.count() == 4
    both = gm.post(
        f"/api/encounters/{enc}/participants/",
        {"npc": fight.npc.pk, "characters": [1]},
        format="json",
    )
    assert both.status_code == 400
    url = f"/api/participants/{fight.thug.pk}/update/"
    assert player.post(url, {"hidden": False}, format="json").status_code == 403
    assert gm.post(url, {"hidden": False}, format="json").status_code == 200
    thug = api_for(fight.table.player).get(f"/api/participants/{fight.thug.pk}/").json()
    assert thug["numbers"]["vitality"] == 7


def test_it_lets_the_gm_wound_and_heal_a_zone(fight, api_for):
    url = f"/api/encounters/{fight.encounter.pk}/adjust/"
    head = fight.zone(fight.ysolde, "head")
    assert api_for(fight.table.player).post(url, {"zone": head.pk, "amount": 3}).status_code == 403
    response = api_for(fight.table.gm).post(url, {"zone": head.pk, "amount": 14}, format="json")
    assert response.status_code == 200
    fight.refresh()
    assert fight.ysolde.character.vitality == 8 and fight.ysolde.stamina_due
    stamina = api_for(fight.table.player).post(
        f"/api/participants/{fight.ysolde.pk}/stamina/", {"roll": 50}, format="json"
    )
    assert stamina.status_code == 200
    assert services.latest_roll(fight.encounter).kind == "stamina"


def test_it_answers_a_declaration_with_the_new_attack_while_another_is_open(fight, api_for):
    gm = api_for(fight.table.gm)
    enc = fight.encounter.pk

    def declare(attacker, target):
        return gm.post(
            f"/api/encounters/{enc}/attacks/",
            {
                "attacker": attacker.pk,
                "target": target.pk,
                "zone": fight.zone(target, "chest").pk,
                "weapon": fight.weapon(attacker).pk,
                "action": "precise",
            },
        )

    first = declare(fight.ysolde, fight.thug)
    assert first.status_code == 201, first.json()
    second = declare(fight.thug, fight.ysolde)  # the GM may declare out of turn
    assert second.status_code == 201, second.json()
    assert second.json()["id"] != first.json()["id"]
    assert second.json()["attacker"] == fight.thug.pk
    assert second.json()["target"] == fight.ysolde.pk
    open_ids = {a["id"] for a in gm.get(f"/api/encounters/{enc}/").json()["attacks"]}
    assert open_ids == {first.json()["id"], second.json()["id"]}


def test_it_answers_409_to_a_next_turn_sent_for_a_turn_that_has_passed(fight, api_for):
    gm = api_for(fight.table.gm)
    url = f"/api/encounters/{fight.encounter.pk}/next-turn/"
    seen = {"round": 1, "turn": fight.ysolde.pk}
    assert gm.post(url, seen).status_code == 200
    again = gm.post(url, seen)
    assert again.status_code == 409
    assert "already moved on" in again.json()["detail"]
    assert gm.post(url, {"round": 1}).status_code == 400  # round and turn go together
    fight.refresh()
    assert (fight.encounter.round, fight.encounter.turn_id) == (1, fight.thug.pk)
    # Nothing sent: passed as before.
    assert gm.post(url, {}).status_code == 200
    fight.refresh()
    assert fight.encounter.round == 2


def test_it_answers_409_to_a_stamina_test_that_is_not_due(fight, api_for):
    url = f"/api/participants/{fight.ysolde.pk}/stamina/"
    response = api_for(fight.table.player).post(url, {"roll": 50})
    assert response.status_code == 409
    assert "No Stamina test is due" in response.json()["detail"]
    assert not CombatLogEntry.objects.filter(kind="stamina").exists()


def test_it_deletes_an_encounter_only_when_it_is_not_running(fight, api_for):
    url = f"/api/encounters/{fight.encounter.pk}/"
    gm = api_for(fight.table.gm)
    assert api_for(fight.table.player).delete(url).status_code == 403
    running = gm.delete(url)
    assert running.status_code == 409
    assert "end it before deleting" in running.json()["detail"]
    assert Encounter.objects.filter(pk=fight.encounter.pk).exists()
    services.finish_encounter(encounter=fight.encounter, actor=fight.table.gm)
    assert gm.delete(url).status_code == 204
    assert not Encounter.objects.filter(pk=fight.encounter.pk).exists()
    preparing, _ = services.create_encounter(
        campaign=fight.table.campaign, name="Ford", actor=fight.table.gm
    )
    assert gm.delete(f"/api/encounters/{preparing.pk}/").status_code == 204


def test_it_strikes_in_a_pinned_number_of_queries(fight, api_for, django_assert_num_queries):
    """Declare, defend and roll, three requests, each reading its rows through the one way
    in (combat/services/rows.py). Declare: the encounter (locked, in the user's campaigns),
    the two participants with their characters and whether the attacker has an attack
    open, the zone and the weapon (locked), the disciplines; the declaration and its log
    entry. Defend: one statement locks the encounter, the declaration and its participants;
    the declaration's UPDATE, the entry. Roll: that statement, then both characters (locked
    by pk), the zone, the weapon, the disciplines; the changes and the entry. Each count
    holds the SAVEPOINT and RELEASE of the service's transaction inside the test's own
    (bench/bench_combat.py counts them with sessions)."""
    gm = api_for(fight.table.gm)
    body = {
        "attacker": fight.ysolde.pk,
        "target": fight.thug.pk,
        "zone": fight.zone(fight.thug, "chest").pk,
        "weapon": fight.weapon(fight.ysolde).pk,
        "action": "fast",
    }
    with django_assert_num_queries(STRIKE_QUERIES["declare"]):
        declared = gm.post(f"/api/encounters/{fight.encounter.pk}/attacks/", body, format="json")
    attack = declared.json()["id"]
    with django_assert_num_queries(STRIKE_QUERIES["defend"]):
        defended = gm.post(f"/api/attacks/{attack}/defense/", {"defense": "parry"})
    with django_assert_num_queries(STRIKE_QUERIES["roll"]):
        rolled = gm.post(f"/api/attacks/{attack}/roll/", {"roll": 43})
    assert (declared.status_code, defended.status_code, rolled.status_code) == (201, 200, 200)


STRIKE_QUERIES = {"declare": 9, "defend": 5, "roll": 12}


def test_it_answers_400_to_a_stamina_test_once_the_fight_is_over(fight, api_for):
    head = fight.zone(fight.ysolde, "head")
    services.adjust_zone(encounter=fight.encounter, zone=head, amount=14, actor=fight.table.gm)
    services.finish_encounter(encounter=fight.encounter, actor=fight.table.gm)
    url = f"/api/participants/{fight.ysolde.pk}/stamina/"
    response = api_for(fight.table.player).post(url, {"roll": 95})
    assert response.status_code == 400
    assert "The fight is over" in str(response.json())
    assert not CombatLogEntry.objects.filter(kind="stamina").exists()
