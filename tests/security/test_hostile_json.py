"""Bodies built to break the JSON parser get a 400 with a message, never a server error."""

from __future__ import annotations

import json

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile

from combat import services as combat
from sheets.models import Campaign
from tests.factories import make_thug, make_ysolde

pytestmark = [pytest.mark.django_db, pytest.mark.both_databases]

DEEP = "[" * 20_000 + "]" * 20_000  # 40 KB: past Python's recursion limit in json.loads


@pytest.fixture(autouse=True)
def fresh_throttles():
    cache.clear()


@pytest.mark.parametrize("path", ["/api/rules/omg/check/", "/api/rules/omg/strike/"])
def test_it_refuses_a_deeply_nested_body_on_the_open_rules_api(client, path):
    response = client.post(path, DEEP, content_type="application/json")
    assert response.status_code == 400
    assert "nested too deeply" in response.json()["detail"]


def test_it_refuses_a_deeply_nested_body_and_creates_nothing(table, api_for):
    before = Campaign.objects.count()
    response = api_for(table.gm).post("/api/campaigns/", DEEP, content_type="application/json")
    assert response.status_code == 400
    assert "nested too deeply" in response.json()["detail"]
    assert Campaign.objects.count() == before


def test_it_still_reads_ordinary_nesting_and_judges_it_by_field(client):
    body = '{"pro": 70, "dif": 20, "roll": 43, "note": [[[[[]]]]]}'
    response = client.post("/api/rules/omg/check/", body, content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {"note": ["Not a valid string."]}


# A lone surrogate is valid JSON ("\\ud800") but no text: nothing can encode it, so the 400
# that quoted it back ('"\\ud800" is not a valid choice') failed while rendering, as a 500.
LONE = "\ud800"


@pytest.fixture
def fight(table):
    ysolde = make_ysolde(table.campaign, table.player)
    thug = make_thug(table.campaign, table.gm)
    encounter, _ = combat.create_encounter(campaign=table.campaign, name="Ambush", actor=table.gm)
    combat.add_participants(encounter=encounter, characters=[ysolde, thug], actor=table.gm)
    combat.start_encounter(encounter=encounter, actor=table.gm)
    return encounter, ysolde


def _lone_surrogate_bodies(fight):
    encounter, ysolde = fight
    attacker, target = encounter.participants.order_by("pk")
    bodies = [
        (f"/api/characters/{ysolde.pk}/buy-raise/", {"aptitude": LONE}),
        (
            f"/api/encounters/{encounter.pk}/attacks/",
            {"attacker": attacker.pk, "target": target.pk, "action": LONE},
        ),
        ("/api/campaigns/", {"name": LONE}),
        ("/api/campaigns/", {"name": "Keep", LONE: 1}),
        ("/api/campaigns/join/", {"code": ["ok", {"deep": "x\udfffy"}]}),
        (f"/api/characters/{ysolde.pk}/disciplines/", {"name": LONE, "level": 1}),
        ("/api/rules/omg/check/", {"pro": 70, "dif": 20, "roll": 43, "note": LONE}),
    ]
    # json.dumps escapes them as \\ud800, as a hostile client would send them.
    return [(path, json.dumps(body)) for path, body in bodies]


def test_it_refuses_a_body_with_a_lone_surrogate_with_400(fight, table, api_for):
    api = api_for(table.gm)
    for path, body in _lone_surrogate_bodies(fight):
        response = api.post(path, body, content_type="application/json")
        assert response.status_code == 400, (path, response.content)
        assert "lone surrogate" in response.json()["detail"], path


def test_it_still_reads_a_surrogate_pair_as_the_character_it_spells(table, api_for):
    body = json.dumps({"name": "Keep \N{DRAGON}"})
    assert "\\ud83d\\udc09" in body
    response = api_for(table.gm).post("/api/campaigns/", body, content_type="application/json")
    assert response.status_code == 201
    assert response.json()["name"] == "Keep \N{DRAGON}"


def test_it_refuses_a_body_that_is_not_utf8(table, api_for):
    response = api_for(table.gm).post(
        "/api/campaigns/", b'{"name": "\xed\xa0\x80"}', content_type="application/json"
    )
    assert response.status_code == 400
    assert "detail" in response.json()


def test_the_import_page_refuses_a_file_with_a_lone_surrogate(table, client_for):
    body = json.dumps({"name": LONE, "archetype": LONE}).encode()
    response = client_for(table.gm).post(
        f"/campaigns/{table.campaign.pk}/characters/import/",
        {"file": SimpleUploadedFile("sheet.json", body)},
    )
    assert response.status_code == 422
    assert b"lone surrogate" in response.content
    assert not table.campaign.characters.exists()


@pytest.mark.parametrize("field", ["attacker", "target", "zone", "weapon"])
@pytest.mark.parametrize("number", [2**63, -(2**63), 10**40])
def test_it_refuses_an_id_past_the_databases_integers_with_400(
    fight, table, api_for, field, number
):
    """JSON integers have no size limit; a bigint does, and SQLite's driver raised
    OverflowError on a larger one (a 500 the schema fuzz found on the declare endpoint)."""
    encounter, ysolde = fight
    thug = encounter.participants.exclude(character=ysolde).get()
    me = encounter.participants.get(character=ysolde)
    body = {"attacker": me.pk, "target": thug.pk, "action": "fast", field: number}
    response = api_for(table.gm).post(
        f"/api/encounters/{encounter.pk}/attacks/", body, format="json"
    )
    assert response.status_code == 400
    assert "between" in response.json()[field][0]
    assert not encounter.declarations.exists()


def test_every_documented_write_refuses_a_hostile_body_with_400(settings):
    """Derived from the schema, so a new write (the checks API's among them) is covered by
    itself: 40 KB of nested brackets, a lone surrogate in a value and in a key, and a body
    that is not UTF-8 are each a 400 with a message, and nothing is stored."""
    from rest_framework.test import APIClient

    from tests.openapi import openapi_schema
    from tests.security.pages import api_ids, demo_table, fill, snapshot

    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "rules_anon": "100000/min",
            "rules_user": "100000/min",
        },
    }
    demo = demo_table()
    ids = api_ids(demo)
    api = APIClient(raise_request_exception=False)
    api.force_authenticate(demo.gm)
    bodies = [DEEP, '{"note": "\\ud800"}', '{"\\udfff": 1}', b'{"name": "\xed\xa0\x80"}']
    before = snapshot()
    wrong, writes = [], set()
    for path, item in openapi_schema()["paths"].items():
        for method, operation in item.items():
            if method not in ("post", "put", "patch") or "requestBody" not in operation:
                continue
            writes.add(path)
            for body in bodies:
                response = getattr(api, method)(
                    fill(path, ids), body, content_type="application/json"
                )
                if response.status_code != 400 or "detail" not in response.json():
                    wrong.append(f"{method.upper()} {path} {body[:12]!r}: {response.status_code}")
    assert wrong == []
    assert len(writes) >= 50
    assert {"/api/check-calls/", "/api/characters/{character_pk}/checks/"} <= writes
    assert snapshot() == before
