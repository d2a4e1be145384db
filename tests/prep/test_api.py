"""The preparation API: the library, prepared encounters (with their start and matchups),
library NPCs into an encounter; validation names the field and changes nothing; the schema
documents every endpoint."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from combat import services as combat
from combat.models import Encounter
from prep import matchups
from prep.models import LibraryNpc, PreparedEncounter, PreparedGroup
from sheets.models import Character

pytestmark = pytest.mark.django_db

FIGHTER = {"foc": 2, "spd": 2, "skl": 2, "vgr": 3, "nrv": 2, "chr": 2, "svy": 2}


def api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_library_crud(prep):
    client = api(prep.gm)
    listed = client.get("/api/library/").json()
    names = [n["name"] for n in listed.get("results", listed)]
    assert names == ["Thug", "Town Guard", "Veteran", "Wolf"]
    body = {
        "name": "Cultist",
        **FIGHTER,
        "weight": 140,
        "disciplines": [{"name": "Melee Combat", "level": 1}],
        "weapons": [{"name": "Knife", "category": "I", "dmg": 1, "dmg_max": 1}],
        "zones": [{"name": "head"}, {"name": "robe", "armor_type": "Padded"}],
    }
    created = client.post("/api/library/", body, format="json")
    assert created.status_code == 201, created.json()
    npc = created.json()
    assert npc["sheet"]["bzf"] == 10 and npc["sheet"]["zones"][1]["arm"] == 1
    url = f"/api/library/{npc['id']}/"
    patched = client.patch(url, {"vgr": 4, "name": "Cult Leader"}, format="json").json()
    assert patched["name"] == "Cult Leader" and patched["sheet"]["vgr"] == 4
    assert patched["sheet"]["weapons"] == npc["sheet"]["weapons"]
    # A new weight sets BZF, as on a sheet.
    assert client.patch(url, {"weight": 182}, format="json").json()["sheet"]["bzf"] == 13
    put = client.put(url, {"name": "Acolyte", **FIGHTER, "bzf": 9}, format="json").json()
    assert put["sheet"]["bzf"] == 9 and put["sheet"]["disciplines"] == []
    assert [z["name"] for z in put["sheet"]["zones"]][:2] == ["head", "chest"]
    dup = client.post(f"{url}duplicate/").json()
    assert dup["name"] == "Acolyte (copy)" and dup["sheet"] == put["sheet"]
    assert client.delete(url).status_code == 204
    assert client.post("/api/library/starter-set/").json() == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "X", "foc": 6}, "foc"),
        ({"name": "X", "foc": "2"}, "foc"),
        ({"name": "X", "weight": 5}, "weight"),
        ({"name": "X", "zones": [{"name": "a"}, {"name": "a"}]}, "zones"),
        ({"name": "X", "zones": [{"name": "a", "armor_type": "Mithril"}]}, "zones"),
        ({"name": "X", "weapons": [{"name": "W", "category": "XX", "dmg": 1}]}, "weapons"),
        ({"foc": 2}, "name"),
        ([1, 2], "non_field_errors"),
    ],
)
def test_a_bad_stat_block_is_a_400_naming_the_field_and_changes_nothing(prep, body, field):
    client = api(prep.gm)
    thug = prep.library["thug"]
    before = list(LibraryNpc.objects.values_list("pk", "name", "sheet"))
    for method, url in (
        ("post", "/api/library/"),
        ("put", f"/api/library/{thug.pk}/"),
        ("patch", f"/api/library/{thug.pk}/"),
    ):
        if method == "patch" and field == "name":
            continue  # a PATCH keeps the name it has
        response = getattr(client, method)(url, body, format="json")
        assert response.status_code == 400, (method, response.content)
        assert field in json.dumps(response.json()), (method, response.json())
    assert list(LibraryNpc.objects.values_list("pk", "name", "sheet")) == before


def test_prepared_encounters_and_their_start(prep):
    client = api(prep.gm)
    base = f"/api/campaigns/{prep.campaign.pk}/prepared/"
    body = {
        "name": "Wolves",
        "expected": [prep.ysolde.pk],
        "groups": [{"npc": prep.library["wolf"].pk, "count": 3, "on_alert": True}],
    }
    created = client.post(base, body, format="json")
    assert created.status_code == 201, created.json()
    data = created.json()
    wolves = PreparedGroup.objects.get(prepared_id=data["id"])
    assert data["groups"] == [
        {
            "id": wolves.pk,
            "npc": prep.library["wolf"].pk,
            "npc_name": "Wolf",
            "count": 3,
            "hidden": False,
            "on_alert": True,
        }
    ]
    url = f"/api/prepared/{data['id']}/"
    assert client.patch(url, {"notes": "dusk"}, format="json").json()["groups"] == data["groups"]
    started = client.post(f"{url}start/")
    assert started.status_code == 201
    encounter = Encounter.objects.get(pk=started.json()["encounter"])
    assert started.json()["url"] == encounter.get_absolute_url()
    names = sorted(p.character.name for p in encounter.participants.all())
    assert names == ["Wolf #1", "Wolf #2", "Wolf #3", "Ysolde Varr"]
    matchup = client.get(f"/api/prepared/{prep.prepared.pk}/matchups/").json()
    assert matchup == json.loads(
        json.dumps(matchups.table_as_dict(matchups.matchup_table(prep.prepared)))
    )


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": ""}, "name"),
        ({"name": "X", "groups": [{"npc": 999_999, "count": 1}]}, "groups"),
        ({"name": "X", "groups": [{"npc": "thug", "count": 21}]}, "groups"),
        ({"name": "X", "expected": [999_999]}, "expected"),
    ],
)
def test_a_bad_prepared_encounter_is_a_400(prep, body, field):
    if body.get("groups") and body["groups"][0]["npc"] == "thug":
        body["groups"][0]["npc"] = prep.library["thug"].pk
    before = PreparedEncounter.objects.count()
    response = api(prep.gm).post(
        f"/api/campaigns/{prep.campaign.pk}/prepared/", body, format="json"
    )
    assert response.status_code == 400 and field in response.json()
    assert PreparedEncounter.objects.count() == before


@pytest.mark.parametrize("method", ["patch", "put"])
def test_a_group_without_its_npc_is_a_400_in_a_patch_too(prep, method):
    """The groups sent replace them all, so each is whole, in a PATCH as well (where DRF
    asks for no field): one without its NPC was stored as a row without one, a 500."""
    url = f"/api/prepared/{prep.prepared.pk}/"
    before = list(prep.prepared.groups.values_list("npc", "count"))
    body = {"name": "Ford", "groups": [{"count": 1}]}
    response = getattr(api(prep.gm), method)(url, body, format="json")
    assert response.status_code == 400
    assert response.json() == {"groups": {"0": {"npc": ["This field is required."]}}}
    assert list(prep.prepared.groups.values_list("npc", "count")) == before
    thug = prep.library["thug"].pk
    response = api(prep.gm).patch(url, {"groups": [{"npc": thug}]}, format="json")
    assert response.status_code == 200
    assert [(g["npc"], g["count"]) for g in response.json()["groups"]] == [(thug, 1)]


def test_another_gms_npc_or_another_campaigns_character_cannot_be_prepared(prep):
    other = api(prep.other_gm).post("/api/library/starter-set/").json()[0]
    body: dict[str, Any] = {"name": "X", "groups": [{"npc": other["id"], "count": 1}]}
    url = f"/api/campaigns/{prep.campaign.pk}/prepared/"
    assert api(prep.gm).post(url, body, format="json").status_code == 400
    stranger = Character.objects.create(
        campaign=prep.other_gm.campaigns_run.get(), owner=prep.other_gm, name="Stranger"
    )
    body = {"name": "X", "expected": [stranger.pk]}
    assert api(prep.gm).post(url, body, format="json").status_code == 400


def test_library_npcs_into_an_encounter(prep):
    encounter, _ = combat.create_encounter(campaign=prep.campaign, name="Brawl", actor=prep.gm)
    url = f"/api/encounters/{encounter.pk}/library/"
    body = {"picks": [{"npc": prep.library["thug"].pk, "count": 2}], "hidden": True}
    response = api(prep.gm).post(url, body, format="json")
    assert response.status_code == 201
    assert response.json()["names"] == ["Thug #1", "Thug #2"]
    assert all(p.hidden for p in encounter.participants.all())
    bad = {"picks": [{"npc": 999_999, "count": 2}]}
    assert "picks" in api(prep.gm).post(url, bad, format="json").json()
    assert api(prep.player).post(url, body, format="json").status_code == 403
    assert api(prep.outsider).post(url, body, format="json").status_code == 404
    assert encounter.participants.count() == 2


@pytest.mark.parametrize("role", ["player", "other_player", "outsider", "other_gm"])
def test_nobody_but_the_gm_reaches_their_preparation_through_the_api(prep, role):
    client = api(getattr(prep, role))
    thug, pk = prep.library["thug"].pk, prep.prepared.pk
    for method, url in [
        ("get", f"/api/library/{thug}/"),
        ("patch", f"/api/library/{thug}/"),
        ("delete", f"/api/library/{thug}/"),
        ("post", f"/api/library/{thug}/duplicate/"),
        ("get", f"/api/campaigns/{prep.campaign.pk}/prepared/"),
        ("post", f"/api/campaigns/{prep.campaign.pk}/prepared/"),
        ("get", f"/api/prepared/{pk}/"),
        ("patch", f"/api/prepared/{pk}/"),
        ("delete", f"/api/prepared/{pk}/"),
        ("post", f"/api/prepared/{pk}/start/"),
        ("get", f"/api/prepared/{pk}/matchups/"),
    ]:
        response = getattr(client, method)(url, {"name": "x"}, format="json")
        assert response.status_code == 404, (method, url)
    listed = client.get("/api/library/").json()
    assert listed.get("results", listed) == []
    assert LibraryNpc.objects.filter(owner=prep.gm).count() == 4
    assert not Encounter.objects.exists()


def test_the_schema_documents_the_preparation_api(prep):
    schema = APIClient().get(reverse("api:schema"), {"format": "json"}).json()
    paths = schema["paths"]
    for path in (
        "/api/library/",
        "/api/library/{id}/",
        "/api/library/{id}/duplicate/",
        "/api/library/starter-set/",
        "/api/campaigns/{campaign_pk}/prepared/",
        "/api/prepared/{id}/",
        "/api/prepared/{id}/start/",
        "/api/prepared/{id}/matchups/",
        "/api/encounters/{encounter_pk}/library/",
    ):
        assert path in paths, path
    create = paths["/api/library/"]["post"]["requestBody"]["content"]["application/json"]
    assert "StatBlock" in json.dumps(create)
