from __future__ import annotations

import json
from typing import Any

import pytest

pytestmark = pytest.mark.django_db

BLANK = {"type": "string", "maxLength": 0}


def _schema(client: Any) -> dict[str, Any]:
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    return dict(json.loads(response.content))


def _one_ofs(node: Any) -> list[list[Any]]:
    if isinstance(node, dict):
        found = [node["oneOf"]] if isinstance(node.get("oneOf"), list) else []
        return found + [o for value in node.values() for o in _one_ofs(value)]
    if isinstance(node, list):
        return [o for value in node for o in _one_ofs(value)]
    return []


def test_it_lets_a_blankable_patterned_string_be_blank_through_any_of(client):
    field = _schema(client)["components"]["schemas"]["Character"]["properties"]["pending_raises"]
    assert "oneOf" not in field
    assert BLANK in field["anyOf"]


def test_it_leaves_no_one_of_that_a_blank_string_could_match_twice(client):
    assert [o for o in _one_ofs(_schema(client)) if BLANK in o] == []


def test_it_serves_a_valid_openapi_31_schema_with_its_webhooks(client):
    from openapi_spec_validator import validate

    schema = _schema(client)
    assert schema["openapi"] == "3.1.0"
    validate(schema)
    assert "x-webhooks" not in schema
    assert "roll.resolved" in schema["webhooks"]
    # 3.1 reads null as a type; a leftover 3.0 "nullable" would be ignored.
    assert "'nullable'" not in str(schema)


def test_every_path_id_is_an_integer(client):
    schema = _schema(client)
    ids = {
        (parameter["name"], str(parameter["schema"]))
        for operations in schema["paths"].values()
        for operation in operations.values()
        for parameter in operation.get("parameters", [])
        if parameter["in"] == "path"
    }
    assert {name for name, _ in ids} >= {"id", "campaign_pk", "character_pk", "encounter_pk"}
    assert {kind for _, kind in ids} == {str({"type": "integer"})}


def test_the_rules_api_needs_no_credentials_and_the_rest_does(client):
    schema = _schema(client)
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if path.startswith("/api/rules/"):
                assert operation["security"] == [], (method, path)
            else:
                assert {"bearerAuth": []} in operation["security"], (method, path)
    assert schema["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"


def test_it_documents_the_version_a_sheet_update_sends_and_the_rest_it_answers(client):
    schema = _schema(client)
    components = schema["components"]["schemas"]
    for method in ("put", "patch"):
        body = schema["paths"]["/api/characters/{id}/"][method]["requestBody"]
        name = body["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
        assert components[name]["properties"]["version"]["type"] == "integer"
        assert not components[name]["properties"]["version"].get("readOnly")
    rest = schema["paths"]["/api/campaigns/{id}/rest/"]["post"]["responses"]["200"]
    answer = rest["content"]["application/json"]["schema"]
    assert answer["type"] == "array"
    item = components[answer["items"]["$ref"].rsplit("/", 1)[1]]
    assert {"character", "name", "itv"} <= set(item["required"])


def test_no_one_of_lists_the_same_branch_twice(client):
    # A value matching two equal branches matches "more than one": a strict validator and a
    # generated client refuse it (null did, in the forecast's answer).
    twice = [
        o
        for o in _one_ofs(_schema(client))
        if len({json.dumps(b, sort_keys=True) for b in o}) < len(o)
    ]
    assert twice == []


def test_an_empty_forecast_is_valid_against_its_schema(client):
    from jsonschema import Draft202012Validator

    schema = _schema(client)
    answer = {**schema["components"]["schemas"]["Forecast"], "components": schema["components"]}
    Draft202012Validator(answer).validate({"forecast": None, "what_if": None})
