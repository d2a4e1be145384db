"""Ids in query strings, forms and headers: only ASCII digits are ids. ``str.isdigit()`` also
takes '²' (which ``int()`` then refuses) and other scripts' digits; either must get a clear 400
(or, on the live feed, a fresh start), never a server error."""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import async_to_sync
from django.test import AsyncClient

from combat import services
from tests.factories import make_thug, make_ysolde

pytestmark = pytest.mark.django_db

SUPERSCRIPT_TWO = "\u00b2"
# Superscript two, Arabic-Indic seven, full-width seven, ..., and a number no id reaches (past
# PostgreSQL's bigint; SQLite's driver raises OverflowError on it).
NOT_IDS = [
    SUPERSCRIPT_TWO,
    "\u0667",
    "\uff17",
    "1" + SUPERSCRIPT_TWO,
    "-1",
    " 7",
    "7 ",
    "",
    "9" * 30,
]


@pytest.fixture
def encounter(table):
    ysolde = make_ysolde(table.campaign, table.player)
    thug = make_thug(table.campaign, table.gm)
    encounter, _ = services.create_encounter(campaign=table.campaign, name="Ambush", actor=table.gm)
    services.add_participants(encounter=encounter, characters=[ysolde, thug], actor=table.gm)
    return encounter


@pytest.mark.parametrize("after", NOT_IDS)
def test_it_refuses_an_events_after_that_is_not_ascii_digits(encounter, table, api_for, after):
    response = api_for(table.gm).get(f"/api/encounters/{encounter.pk}/events/", {"after": after})
    assert response.status_code == 400
    assert response.json() == {"after": ["Give an entry id (a number)."]}


def test_it_still_reads_an_events_after_in_ascii_digits(encounter, table, api_for):
    url = f"/api/encounters/{encounter.pk}/events/"
    everything = api_for(table.gm).get(url, {"after": "0"}).json()
    response = api_for(table.gm).get(url, {"after": str(everything[0]["id"])})
    assert response.status_code == 200
    assert response.json() == everything[1:]


@pytest.mark.parametrize("path", ["/api/characters/", "/api/encounters/"])
@pytest.mark.parametrize("campaign", NOT_IDS)
def test_it_refuses_a_campaign_filter_that_is_not_ascii_digits(table, api_for, path, campaign):
    response = api_for(table.gm).get(path, {"campaign": campaign})
    assert response.status_code == 400
    assert response.json() == {"campaign": ["Give a campaign id (a number)."]}


def test_it_ignores_characters_that_are_not_ascii_ids_in_the_add_form(encounter, client_for, table):
    response = client_for(table.gm).post(
        f"/encounters/{encounter.pk}/participants/add/",
        {"characters": [SUPERSCRIPT_TWO, "\u0667"]},
    )
    assert response.status_code in (302, 400)
    assert encounter.participants.count() == 2


def test_it_refuses_a_target_zone_that_is_not_ascii_digits(encounter, client_for, table):
    services.start_encounter(encounter=encounter, actor=table.gm)
    attacker = encounter.participants.get(character__is_npc=False)
    response = client_for(table.gm).post(
        f"/encounters/{encounter.pk}/attacks/",
        {"attacker": attacker.pk, "target_zone": f"{SUPERSCRIPT_TWO}:{SUPERSCRIPT_TWO}"},
        follow=True,
    )
    assert response.status_code in (200, 400)
    assert b"Choose a target and a body zone." in response.content


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("where", ["query", "header"])
def test_the_live_feed_starts_afresh_from_an_after_that_is_not_ascii_digits(table, where):
    encounter, _ = services.create_encounter(campaign=table.campaign, name="Ambush", actor=table.gm)

    async def scenario() -> tuple[int, str]:
        client = AsyncClient()
        await client.aforce_login(table.gm)
        url = f"/encounters/{encounter.pk}/events/"
        if where == "query":
            response = await client.get(url, {"after": SUPERSCRIPT_TWO})
        else:
            response = await client.get(url, headers={"Last-Event-ID": SUPERSCRIPT_TWO})
        chunks = aiter(response.streaming_content)  # type: ignore[attr-defined]  # a streaming response
        first = (await asyncio.wait_for(anext(chunks), 5)).decode()
        await chunks.aclose()
        return response.status_code, first

    status, first = async_to_sync(scenario)()
    assert status == 200
    assert first.startswith("event: hello\n")
