"""What schemathesis found the API answering otherwise than its schema says: lists documented as
pages, a 400 that was a bare list, HTML 404s under /api/, 4xx answers without a documented body.
"""

from __future__ import annotations

import pytest

from combat import services as combat
from tests.factories import make_thug, make_ysolde
from tests.openapi import openapi_schema

pytestmark = pytest.mark.django_db


@pytest.fixture
def fight(table):
    ysolde = make_ysolde(table.campaign, table.player)
    thug = make_thug(table.campaign, table.gm)
    encounter, _ = combat.create_encounter(campaign=table.campaign, name="Ambush", actor=table.gm)
    combat.add_participants(encounter=encounter, characters=[ysolde, thug], actor=table.gm)
    combat.start_encounter(encounter=encounter, actor=table.gm)
    return encounter


@pytest.mark.parametrize(
    "path",
    [
        "/api/characters/abc/",
        "/api/characters/abc/disciplines/",
        "/api/attacks/2.5e-251/",
        "/api/encounters/1/nothing-here/",
        "/api/nothing-here/",
        "/api/",
    ],
)
def test_it_answers_a_path_no_route_matches_under_api_with_a_json_404(table, api_for, path):
    for method in ("get", "delete"):
        response = getattr(api_for(table.gm), method)(path)
        assert response.status_code == 404, (method, path)
        assert response["Content-Type"] == "application/json"
        assert response.json() == {"detail": "Not found."}


def test_it_answers_a_json_404_in_debug_too(table, api_for, settings):
    settings.DEBUG = True  # Django's technical 404 page instead of its plain one
    response = api_for(table.gm).get("/api/attacks/2.5e-251/")
    assert response.status_code == 404
    assert response.json() == {"detail": "Not found."}


def test_it_still_answers_html_404_outside_the_api(client_for, table):
    response = client_for(table.gm).get("/no-such-page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


@pytest.mark.parametrize("action", ["events", "participants"])
def test_the_encounter_lists_are_arrays_as_documented(fight, table, api_for, action):
    response = api_for(table.gm).get(f"/api/encounters/{fight.pk}/{action}/")
    assert response.status_code == 200
    assert isinstance(response.json(), list)
    operation = openapi_schema()["paths"][f"/api/encounters/{{id}}/{action}/"]["get"]
    body = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert body["type"] == "array"
    assert not {"limit", "offset"} & {p["name"] for p in operation["parameters"]}


def test_the_attacks_endpoint_names_the_field_at_fault(fight, table, api_for):
    attacker = fight.participants.order_by("pk").first()
    response = api_for(table.gm).post(
        f"/api/encounters/{fight.pk}/attacks/",
        {"attacker": attacker.pk, "target": 10**9, "action": "fast"},
        format="json",
    )
    assert response.status_code == 400
    assert response.json() == {"target": ["Not a participant of this encounter."]}


def test_every_documented_error_has_a_json_body():
    missing = [
        f"{method.upper()} {path} {code}"
        for path, operations in openapi_schema()["paths"].items()
        for method, operation in operations.items()
        for code, response in operation.get("responses", {}).items()
        if code.startswith("4") and "application/json" not in response.get("content", {})
    ]
    assert missing == []


def test_every_list_with_query_parameters_documents_its_400():
    missing = [
        f"GET {path}"
        for path, operations in openapi_schema()["paths"].items()
        if (get := operations.get("get"))
        and any(p["in"] == "query" for p in get.get("parameters", []))
        and "400" not in get["responses"]
    ]
    assert missing == []


# --- Found by the fuzz test (tests/security/test_schema_fuzz.py) ----------------------------


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/api/campaigns/", {"name": "Keep", "description": 0}, "description"),
        ("/api/campaigns/", {"name": 7}, "name"),
        ("/api/campaigns/join/", {"code": 12345678}, "code"),
        ("/api/encounters/", {"campaign": "CAMPAIGN", "name": "Ambush"}, "campaign"),
        ("/api/encounters/", {"campaign": True, "name": "Ambush"}, "campaign"),
        ("/api/rules/omg/check/", {"pro": 70, "dif": 20, "roll": 43, "note": 0}, "note"),
    ],
)
def test_it_refuses_a_body_value_of_another_json_type(table, api_for, path, body, field):
    """DRF's fields took 7 for a string ("7") and "7" or true for an integer; the schema
    says which JSON type each field is, and the API now takes that type only."""
    body = {k: str(table.campaign.pk) if v == "CAMPAIGN" else v for k, v in body.items()}
    response = api_for(table.gm).post(path, body, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json()


def test_the_sheet_and_fight_endpoints_take_json_types_only(fight, table, api_for):
    api = api_for(table.gm)
    ysolde = fight.participants.get(character__is_npc=False)
    refused = [
        api.patch(f"/api/characters/{ysolde.character_id}/", {"fate": "3"}, format="json"),
        api.patch(f"/api/characters/{ysolde.character_id}/", {"fate": 3.0}, format="json"),
        api.patch(f"/api/characters/{ysolde.character_id}/", {"bzf_rolled": "yes"}, format="json"),
        api.post(
            f"/api/characters/{ysolde.character_id}/disciplines/",
            {"name": "Archery", "level": "2"},
            format="json",
        ),
        api.post(f"/api/participants/{ysolde.pk}/update/", {"hidden": "true"}, format="json"),
        api.post(
            f"/api/campaigns/{table.campaign.pk}/remove-player/",
            {"user_id": str(table.player.pk)},
            format="json",
        ),
    ]
    assert [r.status_code for r in refused] == [400] * len(refused)
    ok = api.patch(f"/api/characters/{ysolde.character_id}/", {"fate": 3}, format="json")
    assert ok.status_code == 200
    assert ok.json()["fate"] == 3


def test_the_rules_api_refuses_an_empty_query_parameter(client):
    response = client.get("/api/rules/okrpg/odds/", {"tide": ""})
    assert response.status_code == 400
    assert response.json() == {"tide": ["Give a value, or leave the parameter out."]}
    assert client.get("/api/rules/okrpg/odds/").status_code == 200


def test_the_schema_says_what_the_api_checks():
    schema = openapi_schema()
    key = next(
        p
        for p in schema["paths"]["/api/campaigns/"]["post"]["parameters"]
        if p["name"] == "Idempotency-Key"
    )
    assert key["schema"]["pattern"] == "^[ -~]{1,255}$"
    for path in ("/api/encounters/", "/api/characters/"):
        parameters = {p["name"]: p["schema"] for p in schema["paths"][path]["get"]["parameters"]}
        assert parameters["campaign"] == {"type": "integer", "minimum": 0, "maximum": 2**63 - 1}
    assigned = schema["components"]["schemas"]["OreMultiple"]["properties"]["assigned"]
    assert "null" in assigned["items"]["type"]  # OpenAPI 3.1: null is one of the types


def test_an_ore_roll_with_too_few_sets_for_its_actions_answers_as_documented(client):
    body = {"pool": 12, "expert": 1, "dice": [1] * 9, "actions": 3}
    response = client.post("/api/rules/ore/multiple/", body, content_type="application/json")
    assert response.status_code == 200
    assert None in response.json()["assigned"]
