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
