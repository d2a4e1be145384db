"""Hostile input on the checks pages and API: '²' (a digit to ``str.isdigit()``, none to
``int()``), a number of 5,000 digits (past what ``int()`` reads from text) and a NUL character
(which PostgreSQL cannot store) in each field a player or the GM types. Each answers a form
error (a page) or a 400 naming the field (the API), never a server error, and stores nothing."""

from __future__ import annotations

import random
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from checks import services
from checks.models import Check, CheckCall, ResourceChange
from sheets import randomness

pytestmark = [pytest.mark.django_db, pytest.mark.both_databases]

SUPERSCRIPT_TWO = "\u00b2"
LONG = "9" * 5000
NUL = "Lock\x00picking"
HOSTILE = [SUPERSCRIPT_TWO, LONG, NUL]
HX = {"HX-Request": "true"}


@pytest.fixture(autouse=True)
def seeded(monkeypatch):
    monkeypatch.setattr(randomness, "RNG", random.Random(7))


def page(user: Any) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


def api(user: Any) -> APIClient:
    client = APIClient(raise_request_exception=False)
    client.force_authenticate(user)
    return client


def rows() -> dict[str, int]:
    return {
        "checks": Check.objects.count(),
        "calls": CheckCall.objects.count(),
        "changes": ResourceChange.objects.count(),
    }


ROLL = {"kind": "aptitude", "aptitude": "SKL", "against": "Moderate"}
DISCIPLINE = {"kind": "discipline", "discipline": "Lock-picking", "against": "Moderate"}


# --- The check page --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        *(("number", v, "number: ") for v in HOSTILE),
        *(("roll", v, "A d100 roll is a whole number") for v in HOSTILE),
        ("note", LONG, "note: "),
        ("note", NUL, "Null characters are not allowed."),
        ("discipline", SUPERSCRIPT_TWO, "has no discipline named"),
        ("discipline", LONG, "discipline: "),
        ("discipline", NUL, "Null characters are not allowed."),
    ],
)
@pytest.mark.parametrize("htmx", [False, True])
def test_the_check_page_refuses_a_hostile_field_with_a_form_error(table, field, value, said, htmx):
    before = rows()
    data = {**(DISCIPLINE if field == "discipline" else ROLL), field: value}
    url = reverse("checks:check_roll", args=[table.ysolde.pk])
    response = page(table.owner).post(url, data, headers=HX if htmx else None)
    assert response.status_code == 422
    assert said in response.content.decode()
    assert rows() == before


@pytest.mark.parametrize("value", HOSTILE)
def test_the_check_page_shows_a_hostile_number_as_a_form_error(table, value):
    url = reverse("checks:check_roll", args=[table.ysolde.pk])
    response = page(table.owner).get(url, {**ROLL, "number": value, "roll": value})
    assert response.status_code == 200
    assert "number: " in response.content.decode()
    assert 'data-testid="check-pvd"' not in response.content.decode()


# --- Mana and Chi ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        *(("amount", v, "A whole number of points from 1 to 100.") for v in HOSTILE),
        ("note", LONG, "note: "),
        ("note", NUL, "Null characters are not allowed."),
    ],
)
def test_the_resource_form_refuses_a_hostile_field_and_changes_nothing(table, field, value, said):
    before = (rows(), table.fresh(table.ysolde).mana)
    data = {"pool": "mana", "amount": "1", "direction": "restore", field: value}
    url = reverse("checks:resource_change", args=[table.ysolde.pk])
    response = page(table.owner).post(url, data, follow=True)
    assert response.status_code == 200
    assert said in response.content.decode()
    assert (rows(), table.fresh(table.ysolde).mana) == before


# --- Fate ------------------------------------------------------------------------------------


@pytest.fixture
def check(table: Any) -> Check:
    target = services.parse_target(**ROLL)
    return services.roll_check(
        user=table.owner, character=table.ysolde, target=target, rng=random.Random(7)
    )


@pytest.mark.parametrize(
    ("field", "said"),
    [("spender", "Choose whose Fate to spend."), ("roll", "A d100 roll is a whole number")],
)
@pytest.mark.parametrize("value", HOSTILE)
def test_fate_refuses_a_hostile_spender_or_roll_and_spends_nothing(
    table, check, field, said, value
):
    before = (rows(), table.fresh(table.ysolde).fate)
    data = {"action": "reroll", "spender": str(table.ysolde.pk), field: value}
    url = reverse("checks:check_fate", args=[check.pk])
    response = page(table.owner).post(url, data, follow=True)
    assert response.status_code == 200
    assert said in response.content.decode()
    assert (rows(), table.fresh(table.ysolde).fate) == before
    check.refresh_from_db()
    assert check.status == Check.Status.ACTIVE


# --- The GM's calls, the log, the answers ------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        *(("characters", v, "Ask at least one character.") for v in HOSTILE),
        *(("number", v, "number: ") for v in HOSTILE),
        ("note", LONG, "note: "),
        ("note", NUL, "Null characters are not allowed."),
        ("discipline", LONG, "discipline: "),
        ("discipline", NUL, "Null characters are not allowed."),
    ],
)
def test_the_call_form_refuses_a_hostile_field_with_a_form_error(table, field, value, said):
    before = rows()
    data = {
        **(DISCIPLINE if field == "discipline" else ROLL),
        "characters": [str(table.ysolde.pk)],
        field: value,
    }
    url = reverse("checks:call_create", args=[table.campaign.pk])
    response = page(table.gm).post(url, data)
    assert response.status_code == 422
    assert said in response.content.decode()
    assert rows() == before


@pytest.mark.parametrize("value", HOSTILE)
def test_the_log_ignores_preselected_characters_that_are_no_ids(table, value):
    url = reverse("checks:campaign_checks", args=[table.campaign.pk])
    response = page(table.gm).get(url, {"characters": [value, str(table.ysolde.pk)]})
    assert response.status_code == 200
    assert response.context["preselected"] == {table.ysolde.pk}


@pytest.mark.parametrize("value", HOSTILE)
def test_an_answer_refuses_a_hostile_roll_with_a_form_error(table, value):
    target = services.parse_target(**ROLL)
    call = services.call_checks(
        user=table.gm, campaign=table.campaign, characters=[table.ysolde], target=target
    )
    asked = call.requests.get()
    before = rows()
    url = reverse("checks:request_answer", args=[asked.pk])
    response = page(table.owner).post(url, {"roll": value})
    assert response.status_code == 422
    assert "A d100 roll is a whole number" in response.content.decode()
    assert rows() == before
    asked.refresh_from_db()
    assert asked.check_made is None


# --- The API ---------------------------------------------------------------------------------


@pytest.mark.parametrize("against", [*HOSTILE, "20", 10**40, -(10**40)])
@pytest.mark.parametrize("where", ["roll", "call"])
def test_the_api_refuses_a_hostile_against_naming_it(table, where, against):
    before = rows()
    body = {"kind": "aptitude", "aptitude": "SKL", "against": against}
    if where == "roll":
        response = api(table.owner).post(
            f"/api/characters/{table.ysolde.pk}/checks/", body, format="json"
        )
    else:
        body.update(campaign=table.campaign.pk, characters=[table.ysolde.pk])
        response = api(table.gm).post("/api/check-calls/", body, format="json")
    assert response.status_code == 400
    assert list(response.json()) == ["against"]
    assert rows() == before


@pytest.mark.parametrize("where", ["roll", "call"])
def test_the_api_refuses_an_against_of_5000_digits(table, where):
    """A JSON number longer than Python reads from text: the parser's 400."""
    before = rows()
    tail = f',"campaign":{table.campaign.pk},"characters":[{table.ysolde.pk}]}}'
    body = (
        '{"kind":"aptitude","aptitude":"SKL","against":' + LONG + (tail if where == "call" else "}")
    )
    path = f"/api/characters/{table.ysolde.pk}/checks/" if where == "roll" else "/api/check-calls/"
    response = api(table.owner if where == "roll" else table.gm).post(
        path, body, content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()
    assert rows() == before


@pytest.mark.parametrize("pk", [LONG, str(2**63), "\u0667"])
def test_the_api_answers_404_to_a_path_id_that_is_no_id(table, pk):
    """As every other app: 5,000 digits (past ``int()``), one past a bigint (SQLite's driver
    overflows) and another script's digit (which ``int()`` reads as 7) are no ids."""
    gm = api(table.gm)
    for method, path in [
        ("get", f"/api/checks/{pk}/"),
        ("post", f"/api/checks/{pk}/fate/"),
        ("post", f"/api/checks/{pk}/reveal/"),
        ("get", f"/api/check-calls/{pk}/"),
        ("post", f"/api/check-requests/{pk}/answer/"),
        ("post", f"/api/characters/{pk}/checks/"),
        ("post", f"/api/characters/{pk}/resources/"),
        ("get", f"/api/campaigns/{pk}/checks/"),
        ("post", f"/api/campaigns/{pk}/checks/undo/"),
    ]:
        response = getattr(gm, method)(path, {}, format="json")
        assert response.status_code == 404, (path, response.content[:200])
