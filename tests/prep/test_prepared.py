"""Prepared encounters: built ahead, started with one press; library NPCs into a fight in one
step; the sheets made for a fight go with it; only the GM sees any of it."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from django.db import connection
from django.urls import reverse
from rest_framework.exceptions import ValidationError
from rest_framework.test import APIClient

from combat import services as combat
from combat.models import Encounter, Participant
from prep import services
from prep.api import PreparedSerializer
from prep.models import FightSheet, LibraryNpc, PreparedEncounter, PreparedGroup
from sheets.models import Character

pytestmark = [pytest.mark.django_db, pytest.mark.both_databases]


def _fight(encounter: Encounter) -> list[tuple[str, bool, bool]]:
    return [
        (p.character.name, p.hidden, p.on_alert)
        for p in encounter.participants.select_related("character").order_by("position")
    ]


def test_one_press_starts_the_prepared_encounter_with_its_participants(prep):
    response = prep.client("gm").post(reverse("prep:prepared_start", args=[prep.prepared.pk]))
    encounter = Encounter.objects.get(campaign=prep.campaign)
    assert response.status_code == 302 and response["Location"] == encounter.get_absolute_url()
    assert encounter.name == "Ambush at the ford"
    assert encounter.status == Encounter.Status.PREPARING
    assert _fight(encounter) == [
        ("Farmhand", False, False),
        ("Ysolde Varr", False, False),
        ("Thug #1", True, True),
        ("Thug #2", True, True),
        ("Veteran #1", False, False),
    ]
    # The copies are the tracker's own NPC copies (copied_from a template sheet), each its
    # own sheet with the stat block's numbers, and every sheet made is tied to this fight.
    thug1 = Character.objects.get(name="Thug #1")
    assert thug1.copied_from.name == "Thug" and thug1.is_npc and not thug1.revealed
    assert thug1.fight_only and thug1.copied_from.fight_only
    assert (thug1.vgr, thug1.bzf, thug1.vitality) == (4, 13, 1 + 2 + 4)
    assert [(w.name, w.dmg) for w in thug1.weapons.all()] == [("Hatchet", 4)]
    assert thug1.zones.get(name="chest").arm == 1
    assert FightSheet.objects.filter(encounter=encounter).count() == 2 + 3
    # The prepared encounter stays: it can be started again another night.
    assert PreparedEncounter.objects.filter(pk=prep.prepared.pk).exists()
    # The tracker can run it: initiative for everyone, then the fight.
    combat.start_encounter(encounter=encounter, actor=prep.gm)


def test_the_campaign_page_folds_fight_sheets_and_players_never_see_hidden_ones(prep):
    services.start_prepared(prepared=prep.prepared, actor=prep.gm)
    gm_page = prep.client("gm").get(prep.campaign.get_absolute_url()).content.decode()
    cast = gm_page.split('data-testid="fight-copies"')[0]
    assert "Thug #1" not in cast and "Veteran #1" not in cast
    assert "Thug #1" in gm_page and "Veteran #1" in gm_page
    player_page = prep.client("player").get(prep.campaign.get_absolute_url()).content.decode()
    assert "Thug" not in player_page
    thug1 = Character.objects.get(name="Thug #1")
    assert prep.client("player").get(thug1.get_absolute_url()).status_code == 404


def test_deleting_the_encounter_deletes_its_sheets_finishing_keeps_them(prep):
    encounter = services.start_prepared(prepared=prep.prepared, actor=prep.gm)
    other = services.start_prepared(prepared=prep.prepared, actor=prep.gm)
    made = set(FightSheet.objects.filter(encounter=encounter).values_list("character", flat=True))
    combat.start_encounter(encounter=encounter, actor=prep.gm)
    combat.finish_encounter(encounter=encounter, actor=prep.gm)
    assert Character.objects.filter(pk__in=made).count() == len(made) == 5
    combat.delete_encounter(encounter=Encounter.objects.get(pk=encounter.pk), actor=prep.gm)
    assert not Character.objects.filter(pk__in=made).exists()
    assert not FightSheet.objects.filter(encounter_id=encounter.pk).exists()
    # The other fight's sheets, and the campaign's own characters, are untouched.
    assert FightSheet.objects.filter(encounter=other).count() == 5
    assert Character.objects.filter(pk__in=[prep.ysolde.pk, prep.farmhand.pk]).count() == 2
    assert Participant.objects.filter(encounter=other).count() == 5


def test_library_npcs_into_an_encounter_in_one_step(prep):
    encounter, _ = combat.create_encounter(campaign=prep.campaign, name="Brawl", actor=prep.gm)
    combat.add_participants(encounter=encounter, characters=[prep.ysolde], actor=prep.gm)
    client = prep.client("gm")
    url = reverse("prep:encounter_add", args=[encounter.pk])
    page = client.get(url).content.decode()
    assert "Town Guard" in page and "Wolf" in page
    data = {
        f"count-{prep.library['wolf'].pk}": "3",
        f"count-{prep.library['thug'].pk}": "1",
        f"count-{prep.library['veteran'].pk}": "0",
        "on_alert": "1",
    }
    assert client.post(url, data).status_code == 302
    assert _fight(encounter) == [
        ("Ysolde Varr", False, False),
        ("Thug #1", False, True),
        ("Wolf #1", False, True),
        ("Wolf #2", False, True),
        ("Wolf #3", False, True),
    ]
    wolf = Character.objects.get(name="Wolf #1")
    assert [z.name for z in wolf.zones.all()] == [
        "head",
        "neck",
        "body",
        "forelegs",
        "hind legs",
        "tail",
    ]
    # Numbering goes on from the fight's own names.
    client.post(url, {f"count-{prep.library['wolf'].pk}": "1"})
    assert "Wolf #4" in [name for name, *_ in _fight(encounter)]


def test_it_names_copies_the_same_way_from_a_prepared_start_and_the_tracker(prep):
    encounter = services.start_prepared(prepared=prep.prepared, actor=prep.gm)
    template = Character.objects.get(name="Thug", campaign=prep.campaign)
    combat.add_npc_copies(encounter=encounter, npc=template, count=1, actor=prep.gm)
    thugs = [name for name, *_ in _fight(encounter) if name.startswith("Thug")]
    assert thugs == ["Thug #1", "Thug #2", "Thug #3"]
    assert combat.copy_name("Thug", 3) == "Thug #3"


@pytest.mark.parametrize(
    ("data", "message"),
    [({}, "Pick at least one NPC."), ({"count": "21"}, "How many of each: 0 to 20.")],
)
def test_a_bad_pick_adds_nothing(prep, data, message):
    encounter, _ = combat.create_encounter(campaign=prep.campaign, name="Brawl", actor=prep.gm)
    body = {f"count-{prep.library['wolf'].pk}": data["count"]} if "count" in data else {}
    url = reverse("prep:encounter_add", args=[encounter.pk])
    response = prep.client("gm").post(url, body, follow=True)
    assert message in response.content.decode()
    assert not encounter.participants.exists()
    assert not Character.objects.filter(fight_only=True).exists()


def test_a_finished_fight_takes_no_library_npcs_and_nothing_is_left_behind(prep):
    encounter = services.start_prepared(prepared=prep.prepared, actor=prep.gm)
    combat.start_encounter(encounter=encounter, actor=prep.gm)
    combat.finish_encounter(encounter=encounter, actor=prep.gm)
    before = Character.objects.count()
    url = reverse("prep:encounter_add", args=[encounter.pk])
    response = prep.client("gm").post(url, {f"count-{prep.library['wolf'].pk}": "2"}, follow=True)
    assert "This encounter is over." in response.content.decode()
    assert Character.objects.count() == before


def test_the_prepared_page_edits_groups_and_expected_characters(prep):
    client = prep.client("gm")
    url = prep.prepared.get_absolute_url()
    client.post(
        reverse("prep:group_add", args=[prep.prepared.pk]),
        {"npc": prep.library["wolf"].pk, "count": "4", "hidden": "1"},
    )
    wolf = prep.prepared.groups.get(npc=prep.library["wolf"])
    assert (wolf.count, wolf.hidden, wolf.on_alert) == (4, True, False)
    client.post(url, {"name": "Wolves", "notes": "at dusk", "expected": [str(prep.ysolde.pk)]})
    prep.prepared.refresh_from_db()
    assert prep.prepared.name == "Wolves" and prep.prepared.notes == "at dusk"
    assert list(prep.prepared.expected.all()) == [prep.ysolde]
    client.post(reverse("prep:group_delete", args=[wolf.pk]))
    assert not PreparedGroup.objects.filter(pk=wolf.pk).exists()
    # Another GM's NPC or a count out of range adds no group.
    other = services.add_starter_set(owner=prep.other_gm)[0]
    for body in ({"npc": other.pk, "count": "1"}, {"npc": prep.library["wolf"].pk, "count": "0"}):
        client.post(reverse("prep:group_add", args=[prep.prepared.pk]), body)
    assert prep.prepared.groups.count() == 2
    # A character of another campaign cannot be expected.
    elsewhere = Character.objects.create(
        campaign=prep.other_gm.campaigns_run.get(), owner=prep.other_gm, name="Stranger"
    )
    client.post(url, {"name": "Wolves", "expected": [str(elsewhere.pk)]})
    assert not prep.prepared.expected.exists()
    client.post(reverse("prep:prepared_delete", args=[prep.prepared.pk]))
    assert not PreparedEncounter.objects.filter(pk=prep.prepared.pk).exists()


def test_the_gm_finds_it_from_the_campaign_and_encounter_pages(prep):
    client = prep.client("gm")
    campaign_page = client.get(prep.campaign.get_absolute_url()).content.decode()
    assert reverse("prep:prepared_list", args=[prep.campaign.pk]) in campaign_page
    assert reverse("prep:library") in client.get(reverse("sheets:dashboard")).content.decode()
    listing = client.get(reverse("combat:encounter_list", args=[prep.campaign.pk]))
    assert reverse("prep:prepared_list", args=[prep.campaign.pk]) in listing.content.decode()
    encounter = services.start_prepared(prepared=prep.prepared, actor=prep.gm)
    tracker = client.get(encounter.get_absolute_url()).content.decode()
    assert reverse("prep:encounter_add", args=[encounter.pk]) in tracker
    player = prep.client("player")
    assert "prep-section" not in player.get(prep.campaign.get_absolute_url()).content.decode()
    assert reverse("prep:encounter_add", args=[encounter.pk]) not in (
        player.get(encounter.get_absolute_url()).content.decode()
    )


@pytest.mark.parametrize("role", ["player", "other_player", "outsider", "other_gm"])
def test_nobody_but_the_gm_sees_or_starts_a_prepared_encounter(prep, role):
    client = prep.client(role)
    pk, group = prep.prepared.pk, prep.prepared.groups.first()
    for name, method, arg in [
        ("prep:prepared_list", "get", prep.campaign.pk),
        ("prep:prepared_list", "post", prep.campaign.pk),
        ("prep:prepared_detail", "get", pk),
        ("prep:prepared_detail", "post", pk),
        ("prep:prepared_matchups", "get", pk),
        ("prep:prepared_start", "post", pk),
        ("prep:prepared_delete", "post", pk),
        ("prep:group_add", "post", pk),
        ("prep:group_delete", "post", group.pk),
    ]:
        response = getattr(client, method)(reverse(name, args=[arg]), {"name": "x"})
        assert response.status_code == 404, (name, method)
    assert not Encounter.objects.exists()
    assert PreparedEncounter.objects.get(pk=pk).name == "Ambush at the ford"
    assert prep.prepared.groups.count() == 2


def test_players_cannot_put_library_npcs_into_a_fight(prep):
    encounter, _ = combat.create_encounter(campaign=prep.campaign, name="Brawl", actor=prep.gm)
    url = reverse("prep:encounter_add", args=[encounter.pk])
    body = {f"count-{prep.library['wolf'].pk}": "1"}
    assert prep.client("player").post(url, body).status_code == 403
    assert prep.client("player").get(url).status_code == 403
    assert prep.client("outsider").post(url, body).status_code == 404
    # Another GM cannot use their own library in this GM's fight either.
    assert prep.client("other_gm").post(url, body).status_code == 404
    assert not encounter.participants.exists()


def test_a_library_npc_deleted_meanwhile_is_named_and_nothing_is_made(prep):
    """The GM's page (or the API) read the wolf; it is deleted before the add runs: a clear
    refusal naming it, and not one sheet, copy or tie made (no 500 at commit)."""
    encounter, _ = combat.create_encounter(campaign=prep.campaign, name="Night", actor=prep.gm)
    wolf = prep.library["wolf"]
    LibraryNpc.objects.filter(pk=wolf.pk).delete()
    characters = Character.objects.count()
    with pytest.raises(services.PrepError, match=r"deleted meanwhile\): Wolf\. Nothing was done"):
        services.put_into_encounter(
            encounter=encounter, picks=[services.Pick(wolf, 2)], actor=prep.gm
        )
    assert Character.objects.count() == characters
    assert not FightSheet.objects.exists() and not encounter.participants.exists()


def test_a_group_of_a_deleted_npc_is_a_400_naming_it(prep):
    """A prepared encounter's groups written through the API with an NPC deleted after it
    was validated: the NPCs are locked and read again first."""
    wolf = prep.library["wolf"]
    LibraryNpc.objects.filter(pk=wolf.pk).delete()  # after the serializer read it
    with pytest.raises(ValidationError) as refused:
        PreparedSerializer().update(prep.prepared, {"groups": [{"npc": wolf, "count": 1}]})
    detail: Any = refused.value.detail  # a dict here
    assert "Wolf" in str(detail["groups"])
    assert sorted(prep.prepared.groups.values_list("npc__starter", flat=True)) == [
        "thug",
        "veteran",
    ]


def _in_threads(n: int, job) -> list:
    barrier = threading.Barrier(n)
    out: list = []
    lock = threading.Lock()

    def run(i: int) -> None:
        try:
            barrier.wait()
            result = job(i)
        finally:
            connection.close()
        with lock:
            out.append(result)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def _api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_starts_every_time_while_deletes_of_its_npcs_are_refused(prep):
    """Starts and deletes of the thug at once: each delete is refused (a prepared encounter
    uses it) and each start completes whole; no 500 and no group left pointing at nothing."""
    thug = prep.library["thug"]
    start = f"/api/prepared/{prep.prepared.pk}/start/"

    def job(i: int) -> tuple[str, int]:
        if i % 2:
            return "delete", _api(prep.gm).delete(f"/api/library/{thug.pk}/").status_code
        return "start", _api(prep.gm).post(start).status_code

    results = _in_threads(12, job)
    assert sorted(results) == [("delete", 400)] * 6 + [("start", 201)] * 6
    assert LibraryNpc.objects.filter(pk=thug.pk).exists()
    for encounter in Encounter.objects.filter(campaign=prep.campaign):
        assert len(_fight(encounter)) == 2 + 2 + 1  # the expected two, two thugs, a veteran


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_an_add_and_a_delete_at_once_either_adds_whole_or_names_the_npc(prep):
    """The wolf (in no prepared encounter) put into a fight by several presses while it is
    deleted: each add is whole (before the delete) or a 400 naming the wolf (after)."""
    wolf = prep.library["wolf"]
    encounter, _ = combat.create_encounter(campaign=prep.campaign, name="Night", actor=prep.gm)
    url = f"/api/encounters/{encounter.pk}/library/"
    body = {"picks": [{"npc": wolf.pk, "count": 2}]}

    def job(i: int) -> tuple[str, int, str]:
        if i == 3:
            return "delete", _api(prep.gm).delete(f"/api/library/{wolf.pk}/").status_code, ""
        response = _api(prep.gm).post(url, body, format="json")
        return "add", response.status_code, json.dumps(response.json())

    results = _in_threads(8, job)
    assert ("delete", 204, "") in results
    adds = [r for r in results if r[0] == "add"]
    assert all(code in (201, 400) for _, code, _ in adds), adds
    refused = [text for _, code, text in adds if code == 400]
    assert all("Wolf" in text or "library" in text for text in refused), refused
    added = sum(1 for _, code, _ in adds if code == 201)
    assert encounter.participants.count() == 2 * added
    assert not LibraryNpc.objects.filter(pk=wolf.pk).exists()
    # The sheets made before the delete stay with their fight (their source is cleared).
    assert FightSheet.objects.filter(encounter=encounter).count() == 3 * added


@pytest.mark.parametrize(
    ("page", "body", "message"),
    [
        ("list", {"name": "Ford\x00"}, "Null characters are not allowed."),
        ("list", {"name": "F" * 121}, "at most 120 characters"),
        ("list", {"name": "  "}, "Give the prepared encounter a name."),
        ("detail", {"name": "Ford\x00"}, "Null characters are not allowed."),
        ("detail", {"name": "Ford", "notes": "at \x00dusk"}, "Null characters are not allowed."),
        ("detail", {"name": "F" * 121}, "at most 120 characters"),
    ],
)
def test_a_bad_name_or_notes_on_the_prepared_pages_changes_nothing(prep, page, body, message):
    """PostgreSQL cannot store a NUL character: it was a server error there (SQLite stored
    it); a name past 120 characters was cut short in silence."""
    url = (
        reverse("prep:prepared_list", args=[prep.campaign.pk])
        if page == "list"
        else prep.prepared.get_absolute_url()
    )
    before = list(PreparedEncounter.objects.values_list("pk", "name", "notes"))
    response = prep.client("gm").post(url, body, follow=True)
    assert response.status_code == 200
    assert message in response.content.decode()
    assert list(PreparedEncounter.objects.values_list("pk", "name", "notes")) == before
