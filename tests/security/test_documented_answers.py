"""Answers and refusals as the schema documents them (found by schemathesis, all checks):
a declaration's defense is null until the target defends (it was "", outside its enum); a
webhook's roll result may carry a null abbr; an array of ids is an array, not {}; a name's
120 characters hold for the string as sent; a body past Django's size limit gets a JSON 400.

Each answer is checked against the schema itself (OpenAPI 3.1: its schemas are JSON Schema)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from combat import services as combat
from combat.models import CombatLogEntry
from integrations.payloads import combat_data, envelope
from prep.models import PreparedEncounter
from sheets.models import Campaign, Character, Discipline
from tests.factories import make_thug, make_ysolde
from tests.fight_steps import strike
from tests.openapi import openapi_schema

pytestmark = pytest.mark.django_db


@pytest.fixture
def schema() -> dict[str, Any]:
    return openapi_schema()


def _json_schema(node: Any) -> Any:
    """An OpenAPI 3.1 schema object, with its references pointing into ``definitions``."""
    if isinstance(node, list):
        return [_json_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _json_schema(v) for k, v in node.items()}
    if "$ref" in out:
        out["$ref"] = out["$ref"].replace("#/components/schemas/", "#/definitions/")
    return out


def assert_documented(schema: dict[str, Any], body_schema: dict[str, Any], body: Any) -> None:
    whole = {
        **_json_schema(body_schema),
        "definitions": _json_schema(schema["components"]["schemas"]),
    }
    # The schema itself is checked once, by test_platform's `spectacular --validate`.
    jsonschema.Draft202012Validator(whole).validate(body)


def _response_schema(schema: dict[str, Any], path: str, method: str, status: str) -> Any:
    operation = schema["paths"][path][method]
    return operation["responses"][status]["content"]["application/json"]["schema"]


@pytest.fixture
def fight(table):
    ysolde = make_ysolde(table.campaign, table.player)
    thug = make_thug(table.campaign, table.gm)
    encounter, _ = combat.create_encounter(campaign=table.campaign, name="Ambush", actor=table.gm)
    combat.add_participants(encounter=encounter, characters=[ysolde, thug], actor=table.gm)
    combat.start_encounter(encounter=encounter, actor=table.gm)
    return encounter


def test_a_declaration_sends_null_for_its_defense_until_the_target_defends(
    fight, table, api_for, schema
):
    api = api_for(table.gm)
    attacker, target = fight.participants.order_by("pk")
    zone = target.character.zones.first()
    body = {"attacker": attacker.pk, "target": target.pk, "action": "fast", "zone": zone.pk}
    declared = api.post(f"/api/encounters/{fight.pk}/attacks/", body, format="json")
    assert declared.status_code == 201
    assert declared.json()["defense"] is None
    post_schema = _response_schema(schema, "/api/encounters/{id}/attacks/", "post", "201")
    assert_documented(schema, post_schema, declared.json())

    attack = declared.json()["id"]
    read = api.get(f"/api/attacks/{attack}/").json()
    assert read["defense"] is None
    assert_documented(schema, _response_schema(schema, "/api/attacks/{id}/", "get", "200"), read)
    detail = api.get(f"/api/encounters/{fight.pk}/").json()
    assert [a["defense"] for a in detail["attacks"]] == [None]
    encounter_schema = _response_schema(schema, "/api/encounters/{id}/", "get", "200")
    assert_documented(schema, encounter_schema, detail)

    defended = api.post(f"/api/attacks/{attack}/defense/", {"defense": "parry"}, format="json")
    assert defended.status_code == 200
    assert api.get(f"/api/attacks/{attack}/").json()["defense"] == "parry"
    assert api.get(f"/api/encounters/{fight.pk}/").json()["attacks"][0]["defense"] == "parry"


def test_a_one_call_strike_answers_its_declaration_as_documented(fight, table, api_for, schema):
    attacker, target = fight.participants.order_by("pk")
    zone = target.character.zones.first()
    body = {
        "attacker": attacker.pk,
        "target": target.pk,
        "action": "fast",
        "zone": zone.pk,
        "defense": "dodge",
        "roll": 43,
    }
    response = api_for(table.gm).post(f"/api/encounters/{fight.pk}/strike/", body, format="json")
    assert response.status_code in (200, 201), response.content
    status = str(response.status_code)
    strike_schema = _response_schema(schema, "/api/encounters/{id}/strike/", "post", status)
    assert_documented(schema, strike_schema, response.json())


def test_a_roll_resolved_webhook_with_a_plain_result_is_as_documented(fight, table, schema):
    attacker, target = fight.participants.order_by("pk")
    zone = target.character.zones.first()
    entry = strike(
        fight,
        attacker,
        target,
        action="fast",
        zone=zone,
        weapon=None,
        actor=table.gm,
        defender=table.gm,
        defense="dodge",
        roll=43,
    )
    entry = CombatLogEntry.objects.get(pk=entry.pk)
    body = envelope("roll.resolved", combat_data(entry))
    assert body["data"]["result"]["abbr"] is None  # 43 against this PvD: a plain result
    webhook = schema["webhooks"]["roll.resolved"]["post"]["requestBody"]
    assert_documented(schema, webhook["content"]["application/json"]["schema"], body)


@pytest.mark.parametrize("expected", [{}, {"7": 1}, "7"])
def test_an_array_of_ids_must_be_an_array(table, api_for, expected):
    response = api_for(table.gm).post(
        f"/api/campaigns/{table.campaign.pk}/prepared/",
        {"name": "Ford", "expected": expected},
        format="json",
    )
    assert response.status_code == 400
    assert list(response.json()) == ["expected"]
    assert not PreparedEncounter.objects.exists()


# 121 characters as sent; 120 once stripped (\x1f counts as white space for str.strip).
LONG_NAMES = ["\x1f" + "a" * 120, " " + "a" * 120, "a" * 121]


@pytest.mark.parametrize("name", LONG_NAMES)
def test_a_name_past_its_limit_as_sent_is_refused(table, api_for, name):
    ysolde = make_ysolde(table.campaign, table.player)
    api = api_for(table.gm)
    campaign = table.campaign.pk
    before = (
        Campaign.objects.count(),
        Character.objects.count(),
        Discipline.objects.count(),
        PreparedEncounter.objects.count(),
    )
    for url, body in [
        ("/api/campaigns/", {}),
        ("/api/encounters/", {"campaign": campaign}),
        ("/api/library/", {}),
        (f"/api/campaigns/{campaign}/prepared/", {}),
        ("/api/characters/", {"campaign": campaign}),
        (f"/api/characters/{ysolde.pk}/disciplines/", {"level": 1}),
    ]:
        response = api.post(url, {"name": name, **body}, format="json")
        assert response.status_code == 400, (url, response.content)
        assert response.json() == {
            "name": ["Ensure this field has no more than 120 characters."]
        }, url
    after = (
        Campaign.objects.count(),
        Character.objects.count(),
        Discipline.objects.count(),
        PreparedEncounter.objects.count(),
    )
    assert after == before
    # 120 characters as sent still pass, stripped as before.
    response = api.post("/api/campaigns/", {"name": " " + "a" * 119}, format="json")
    assert response.status_code == 201
    assert response.json()["name"] == "a" * 119


def test_a_body_past_the_size_limit_gets_a_json_400_under_the_api(table, api_for, client_for):
    body = json.dumps({"name": "Keep", "description": "x" * 2_700_000})
    response = api_for(table.gm).post("/api/campaigns/", body, content_type="application/json")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": "The request body is too large: at most 2.5 MB."}
    assert not Campaign.objects.filter(name="Keep").exists()
    # The pages keep Django's own page.
    page = client_for(table.gm).post("/campaigns/new/", {"name": "Keep", "x": "y" * 2_700_000})
    assert page.status_code == 400
    assert page["Content-Type"].startswith("text/html")
