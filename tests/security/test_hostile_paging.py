"""``limit`` and ``offset`` on every paginated list: plain whole numbers in range, or a 400 that
says so. A limit past 2**63 reached the database as LIMIT and answered 500 ("bigint out of
range" on PostgreSQL, OverflowError on SQLite)."""

from __future__ import annotations

import pytest

from combat import services as combat
from config.pagination import MAX_LIMIT, MAX_OFFSET
from sheets.services import create_character

pytestmark = pytest.mark.django_db

PAST_BIGINT = str(2**63)


@pytest.fixture
def lists(table):
    hero = create_character(campaign=table.campaign, owner=table.player, name="Ysolde")
    combat.create_encounter(campaign=table.campaign, name="Ambush", actor=table.gm)
    return [
        "/api/campaigns/",
        "/api/characters/",
        "/api/encounters/",
        f"/api/characters/{hero.pk}/zones/",
    ]


@pytest.mark.parametrize(
    "query",
    [
        {"limit": PAST_BIGINT},
        {"limit": "1", "offset": PAST_BIGINT},
        {"limit": str(MAX_LIMIT + 1)},
        {"offset": str(MAX_OFFSET + 1)},
        {"limit": "0"},
        {"limit": "-1"},
        {"offset": "-1"},
        {"limit": "\u00b2"},
        {"offset": "\u0667"},
        {"limit": "ten"},
        {"offset": "null"},
        {"limit": ""},
        {"limit": "5.0"},
    ],
)
def test_it_refuses_a_limit_or_offset_out_of_range_with_400(lists, table, api_for, query):
    api = api_for(table.gm)
    for url in lists:
        response = api.get(url, query)
        assert response.status_code == 400, (url, query, response.content)
        (field,) = response.json()
        assert field in query
        assert "whole number" in response.json()[field][0]


def test_it_pages_within_the_range(lists, table, api_for):
    api = api_for(table.gm)
    for url in lists:
        everything = api.get(url, {"limit": MAX_LIMIT}).json()
        assert everything["count"] >= 1
        first = api.get(url, {"limit": "1", "offset": "0"}).json()
        assert first["results"] == everything["results"][:1]
        past_the_end = api.get(url, {"offset": str(MAX_OFFSET)})
        assert past_the_end.status_code == 200
        assert past_the_end.json()["results"] == []


def test_the_schema_documents_the_range(table, api_for):
    schema = api_for(table.gm).get("/api/schema/?format=json").json()
    parameters = {
        p["name"]: p["schema"] for p in schema["paths"]["/api/campaigns/"]["get"]["parameters"]
    }
    assert parameters["limit"] == {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT}
    assert parameters["offset"] == {"type": "integer", "minimum": 0, "maximum": MAX_OFFSET}


def test_every_documented_list_answers_a_hostile_limit_without_a_server_error(table, api_for):
    """Derived from the schema, so a new list (the checks API's among them) is covered by
    itself: a list that documents ``limit`` refuses one past a bigint with 400; one that is
    not paged (the checks log, calls and prompts are bounded) ignores it."""
    from tests.openapi import openapi_schema

    hero = create_character(campaign=table.campaign, owner=table.player, name="Ysolde")
    ids = {"campaign_pk": table.campaign.pk, "character_pk": hero.pk}
    api = api_for(table.gm)
    paged: set[str] = set()
    unpaged: set[str] = set()
    wrong: list[str] = []
    for path, item in openapi_schema()["paths"].items():
        operation = item.get("get")
        if operation is None or path.rstrip("/").endswith("}") or path.startswith("/api/rules/"):
            continue
        try:
            url = path.format(**ids)
        except KeyError:  # a list under an object the walk did not make: covered elsewhere
            continue
        names = {p["name"] for p in operation.get("parameters", [])}
        for query in ({"limit": PAST_BIGINT}, {"offset": PAST_BIGINT}, {"limit": "\u00b2"}):
            response = api.get(url, query)
            expected = 400 if "limit" in names else 200
            if response.status_code != expected:
                wrong.append(f"{path} {query}: {response.status_code}")
        (paged if "limit" in names else unpaged).add(path)
    assert wrong == []
    assert {"/api/campaigns/", "/api/characters/"} <= paged
    assert {"/api/check-calls/", "/api/campaigns/{campaign_pk}/checks/"} <= unpaged
