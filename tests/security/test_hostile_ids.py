"""Ids in query strings, forms and headers: only ASCII digits are ids. ``str.isdigit()`` also
takes '²' (which ``int()`` then refuses) and other scripts' digits; either must get a clear 400
(or, on the live feed, a fresh start), never a server error."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.core.cache import cache
from django.test import AsyncClient, Client
from django.urls import reverse

from combat import services
from tests.factories import make_thug, make_ysolde
from tests.security.pages import demo_table, routes

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


# --- Ids in paths, on every route of the URLconf ------------------------------------------------

# 5,000 digits (past the 4,300 that int() reads from text), one past a bigint (SQLite's driver
# overflows on it) and another script's digit (which int() reads as 7).
PATH_NOT_IDS = ["9" * 5000, str(2**63), "\u0667"]
# Path arguments that are no ids: the rules API's kind, the table display's secret link, the
# password reset's user and token, an email confirmation's token.
NOT_ID_KWARGS = {"kind", "secret", "uidb64", "token"}
SENTINEL = 987_654_321_987  # stands for the id under test while the URL is reversed


def _answers(client: Any, method: str, url: str) -> int:
    if method == "get":
        return int(client.get(url).status_code)
    return int(getattr(client, method)(url, "{}", content_type="application/json").status_code)


def test_every_route_answers_404_to_a_path_id_that_is_no_id():
    """Derived from the URLconf (pages and API, the checks app's among them), so a new route
    is covered by itself: each id in a path, in turn, is one no row can have. A route answers
    the 404 of a missing id to every method it takes (405 to the others); a page may answer a
    POST about a missing row of an object it found (a participant of a fight) with its form
    error, a redirect with a message. Never a server error, never another row."""
    cache.clear()
    demo = demo_table()
    client = Client(raise_request_exception=False)
    client.force_login(demo.gm)
    ids = [(r, k) for r in routes() for k in r.kwargs if k not in NOT_ID_KWARGS]
    assert len(ids) > 150
    assert {r.name for r, _ in ids} >= {"api:check-detail", "checks:check_roll"}
    wrong, not_found = [], set()
    for route, kwarg in ids:
        kwargs = {k: SENTINEL if k == kwarg else demo.value(route, k) for k in route.kwargs}
        url = reverse(route.name, kwargs=kwargs)
        for bad in PATH_NOT_IDS:
            for method in ("get", "post", "delete"):
                status = _answers(client, method, url.replace(str(SENTINEL), bad))
                if status == 404:
                    not_found.add((route.name, kwarg))
                    continue
                if status == 405 or (method == "post" and status == 302 and not route.is_api):
                    continue
                wrong.append(f"{method.upper()} {route.name} {kwarg}={bad[:12]}: {status}")
    assert wrong == []
    assert {(r.name, k) for r, k in ids} - not_found == set()
