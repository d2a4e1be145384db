"""A JSON body with a key the API does not know is refused with a 400 naming the key, and
nothing is stored: a typo ("speed" for "spd") used to be dropped in silence, and the NPC kept
SPD 1. Keys a GET answers (ids, versions, computed parts) may be sent back and are ignored, so
a GET-modify-PUT round trip works (sheets/fields.py, RefuseUnknownKeys)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from integrations.models import WebhookEndpoint
from prep.models import LibraryNpc, PreparedEncounter
from sheets.models import Campaign, Character, Discipline
from tests.openapi import openapi_schema
from tests.security.pages import DemoTable, api_ids, demo_table, fill, snapshot

pytestmark = [pytest.mark.django_db, pytest.mark.both_databases]

TYPO = "zz_not_a_field"


@pytest.fixture(autouse=True)
def fresh_throttles():
    cache.clear()


@pytest.fixture
def demo() -> DemoTable:
    return demo_table()


@pytest.fixture
def gm_api(demo: DemoTable) -> APIClient:
    api = APIClient()
    api.force_authenticate(demo.gm)
    return api


def _npc_body(**extra: Any) -> dict[str, Any]:
    return {"name": "Typo", "spd": 2, **extra}


def test_it_refuses_an_unknown_key_in_a_library_npc_and_stores_nothing(demo, gm_api):
    before = LibraryNpc.objects.count()
    response = gm_api.post("/api/library/", {"name": "Typo", "speed": 5}, format="json")
    assert response.status_code == 400
    assert "speed" in response.json()
    assert "spd" in response.json()["speed"][0]  # the message lists the fields it takes
    assert LibraryNpc.objects.count() == before
    assert gm_api.post("/api/library/", _npc_body(), format="json").status_code == 201


def test_it_names_an_unknown_key_in_a_nested_row(demo, gm_api):
    body = _npc_body(zones=[{"name": "Head"}, {"name": "Torso", "speedd": 1}])
    response = gm_api.post("/api/library/", body, format="json")
    assert response.status_code == 400
    # DRF's shape for a list's errors: the index of each row at fault, then its fields.
    assert list(response.json()["zones"]) == ["1"]
    assert list(response.json()["zones"]["1"]) == ["speedd"]


def test_it_still_takes_an_exported_character_as_a_stat_block(demo, gm_api):
    exported = gm_api.get(f"/api/characters/{demo.character.pk}/").json()
    response = gm_api.post("/api/library/", exported, format="json")
    assert response.status_code == 201, response.content
    exported[TYPO] = 1
    assert gm_api.post("/api/library/", exported, format="json").status_code == 400


def test_it_refuses_unknown_keys_in_a_character_and_its_rows(demo, gm_api):
    character = demo.character
    before = snapshot()
    refused = [
        gm_api.post(
            "/api/characters/",
            {"campaign": demo.campaign.pk, "name": "Typo", "speed": 5},
            format="json",
        ),
        gm_api.patch(f"/api/characters/{character.pk}/", {"speed": 5}, format="json"),
        gm_api.patch(
            f"/api/characters/{character.pk}/",
            {"zones": [{"name": "Head", "speedd": 1}]},
            format="json",
        ),
        gm_api.post(
            f"/api/characters/{character.pk}/disciplines/",
            {"name": "Archery", "level": 2, "lvl": 3},
            format="json",
        ),
        gm_api.post("/api/campaigns/", {"name": "Keep", "descripton": "typo"}, format="json"),
    ]
    assert [r.status_code for r in refused] == [400] * len(refused)
    assert [sorted(_keys(r.json())) for r in refused] == [
        ["speed"],
        ["speed"],
        ["zones"],
        ["lvl"],
        ["descripton"],
    ]
    assert refused[2].json()["zones"] == {"0": {"speedd": [_message(refused[2], "speedd")]}}
    assert snapshot() == before
    assert not Discipline.objects.filter(name="Archery").exists()


def _keys(body: dict[str, Any]) -> set[str]:
    return set(body)


def _message(response: Any, key: str) -> str:
    message = response.json()["zones"]["0"][key][0]
    assert message.startswith("Unknown field")
    return str(message)


def test_a_get_modify_put_round_trip_still_works(demo, gm_api):
    """What a GET answers is sent back whole, read-only parts included: they are ignored."""
    sheet = gm_api.get(f"/api/characters/{demo.character.pk}/").json()
    sheet["notes"] = "Round trip"
    response = gm_api.put(f"/api/characters/{demo.character.pk}/", sheet, format="json")
    assert response.status_code == 200, response.content
    assert Character.objects.get(pk=demo.character.pk).notes == "Round trip"

    campaign = gm_api.get(f"/api/campaigns/{demo.campaign.pk}/").json()
    campaign["description"] = "Round trip"
    response = gm_api.put(f"/api/campaigns/{demo.campaign.pk}/", campaign, format="json")
    assert response.status_code == 200, response.content

    prepared = PreparedEncounter.objects.get(campaign=demo.campaign)
    body = gm_api.get(f"/api/prepared/{prepared.pk}/").json()
    body["notes"] = "Round trip"
    response = gm_api.put(f"/api/prepared/{prepared.pk}/", body, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["groups"][0]["npc_name"]

    hook = WebhookEndpoint.objects.get(campaign=demo.campaign)
    url = f"/api/campaigns/{demo.campaign.pk}/webhooks/{hook.pk}/"
    body = gm_api.get(url).json()
    body["events"] = ["roll.resolved"]
    response = gm_api.put(url, body, format="json")
    assert response.status_code == 200, response.content


def test_the_rules_api_refuses_an_unknown_key_in_a_body_but_not_in_a_query_string(client):
    response = client.post(
        "/api/rules/omg/check/",
        {"pro": 70, "dif": 20, "roll": 43, "fsat": True},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert list(response.json()) == ["fsat"]
    body = {"combatants": [{"name": "A", "successes": 2, "dwn": True}]}
    response = client.post("/api/rules/okrpg/round/", body, content_type="application/json")
    assert response.status_code == 400
    assert list(response.json()["combatants"]["0"]) == ["dwn"]
    assert client.get("/api/rules/omg/odds/", {"pro": 70, "dif": 20, "utm": "x"}).status_code == 200


# --- Every documented write, from the schema -------------------------------------------------


def _write_operations() -> list[tuple[str, str]]:
    schema = openapi_schema()
    return [
        (method, path)
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
        if method in ("post", "put", "patch") and "requestBody" in operation
    ]


def test_every_documented_write_refuses_an_unknown_key(demo, gm_api, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "rules_anon": "100000/min",
            "rules_user": "100000/min",
        },
    }
    ids = api_ids(demo)
    operations = _write_operations()
    assert len(operations) >= 60
    before = {Campaign: Campaign.objects.count(), Character: Character.objects.count()}
    wrong = []
    for method, path in operations:
        url = fill(path, ids)
        assert not re.search(r"[{}]", url), url
        response = getattr(gm_api, method)(url, {TYPO: 1}, format="json")
        body = response.json() if response["Content-Type"] == "application/json" else None
        if response.status_code != 400 or not isinstance(body, dict) or TYPO not in body:
            wrong.append(f"{method.upper()} {url} {response.status_code} {body}")
    assert wrong == []
    assert {m: m._default_manager.count() for m in before} == before


# --- The schema says so ------------------------------------------------------------------------


def _objects(schema: dict[str, Any], node: Any, seen: set[str]) -> list[tuple[str, Any]]:
    """Every object schema ``node`` is or nests (through components too), named where found."""
    found: list[tuple[str, Any]] = []
    stack: list[tuple[str, Any]] = [("body", node)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, dict):
            ref = item.get("$ref")
            if isinstance(ref, str):
                name = ref.rsplit("/", 1)[1]
                if name not in seen:
                    seen.add(name)
                    stack.append((name, schema["components"]["schemas"][name]))
                continue
            if item.get("type") == "object" and "properties" in item:
                found.append((where, item))
            stack.extend((where, value) for value in item.values())
        elif isinstance(item, list):
            stack.extend((where, value) for value in item)
    return found


def test_every_request_body_in_the_served_schema_says_it_takes_no_other_key(client):
    """What the API refuses (any unknown key, nested rows included: the tests above), the
    schema says: ``additionalProperties: false`` on every request body and every object it
    nests (config/openapi.py, close_request_bodies). Answers stay open."""
    schema = client.get("/api/schema/?format=json").json()
    operations = [
        (method, path, operation)
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        if isinstance(operation, dict)
    ]
    open_bodies, closed_answers, bodies = [], [], 0
    for method, path, operation in operations:
        if "requestBody" in operation:
            bodies += 1
            for where, node in _objects(schema, operation["requestBody"], set()):
                if node.get("additionalProperties") is not False:
                    open_bodies.append(f"{method.upper()} {path}: {where}")
        answers = {k: v for k, v in operation.items() if k != "requestBody"}
        for where, node in _objects(schema, answers, set()):
            if node.get("additionalProperties") is False:
                closed_answers.append(f"{method.upper()} {path}: {where}")
    for where, node in _objects(schema, schema.get("webhooks", {}), set()):
        if node.get("additionalProperties") is False:
            closed_answers.append(f"webhook: {where}")
    assert bodies == len(_write_operations()) >= 60
    assert open_bodies == []
    assert closed_answers == []
