"""One answer wherever it is asked (checks/access.py): for each role, reading a call, answering
it and reading a check give the same status on the page and on the API; only a visitor who
is not signed in is told so differently (the page sends them to the login page, the API
answers 401 or 403)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from django.conf import settings
from django.shortcuts import resolve_url
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from checks import services
from checks.models import CheckCall, CheckRequest
from tests.tables import ChecksTable as Table

pytestmark = pytest.mark.django_db

ROLES = ("anonymous", "outsider", "asked", "not_asked", "gm")
OK = "ok"
SIGN_IN = "sign in"

#: What each role gets, page and API alike.
EXPECTED = {
    # A call's answers are the GM's; its players know it exists.
    "read the call": {"outsider": 404, "asked": 403, "not_asked": 403, "gm": OK},
    # The asked character's player answers, and the GM for any; another player may only look.
    "answer the call": {"outsider": 404, "asked": OK, "not_asked": 403, "gm": OK},
    # A secret answer: its roller and the GM see that it was made; nobody else learns of it.
    "read a secret answer": {"outsider": 404, "asked": OK, "not_asked": 404, "gm": OK},
    # An open answer: every member reads it.
    "read an open answer": {"outsider": 404, "asked": OK, "not_asked": OK, "gm": OK},
}


def user_of(table: Table, role: str) -> Any:
    return {
        "anonymous": None,
        "outsider": table.outsider,
        "asked": table.owner,  # Ysolde's player; Ysolde is the one asked
        "not_asked": table.player,  # Bram's player, of the same campaign
        "gm": table.gm,
    }[role]


def call_ysolde(table: Table, *, secret: bool = False) -> CheckRequest:
    target = services.parse_target(kind="aptitude", aptitude="SKL", against="Moderate")
    call = services.call_checks(
        user=table.gm,
        campaign=table.campaign,
        characters=[table.ysolde],
        target=target,
        secret=secret,
    )
    return call.requests.get()


def answered(table: Table, *, secret: bool) -> int:
    asked = call_ysolde(table, secret=secret)
    return services.answer(user=table.owner, request=asked, rng=random.Random(1)).pk


def page_outcome(user: Any, method: str, url: str, data: dict[str, Any] | None = None) -> Any:
    client = Client()
    if user is not None:
        client.force_login(user)
    response = client.post(url, data or {}) if method == "post" else client.get(url)
    if response.status_code == 302:
        login = response["Location"].startswith(resolve_url(settings.LOGIN_URL))
        return SIGN_IN if login else OK
    return OK if response.status_code == 200 else response.status_code


def api_outcome(user: Any, method: str, url: str, data: dict[str, Any] | None = None) -> Any:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    post = method == "post"
    response = client.post(url, data or {}, format="json") if post else client.get(url)
    if user is None and response.status_code in (401, 403):
        return SIGN_IN
    return OK if response.status_code in (200, 201) else response.status_code


@pytest.mark.parametrize("role", ROLES)
def test_it_answers_each_role_the_same_on_the_page_and_the_api(table: Table, role: str) -> None:
    user = user_of(table, role)
    call_pk = call_ysolde(table).call_id
    # Each answer goes to a request of its own: the page's and the API's.
    for_page, for_api = call_ysolde(table), call_ysolde(table)
    secret, open_ = answered(table, secret=True), answered(table, secret=False)
    asks = {
        "read the call": (
            ("get", reverse("checks:call_detail", args=[call_pk]), None),
            ("get", f"/api/check-calls/{call_pk}/", None),
        ),
        "answer the call": (
            ("post", reverse("checks:request_answer", args=[for_page.pk]), {"roll": "50"}),
            ("post", f"/api/check-requests/{for_api.pk}/answer/", {"roll": 50}),
        ),
        "read a secret answer": (
            ("get", reverse("checks:check_detail", args=[secret]), None),
            ("get", f"/api/checks/{secret}/", None),
        ),
        "read an open answer": (
            ("get", reverse("checks:check_detail", args=[open_]), None),
            ("get", f"/api/checks/{open_}/", None),
        ),
    }
    found = {
        what: (page_outcome(user, *page), api_outcome(user, *api))
        for what, (page, api) in asks.items()
    }
    expected = {
        what: (SIGN_IN, SIGN_IN) if role == "anonymous" else (by_role[role], by_role[role])
        for what, by_role in EXPECTED.items()
    }
    assert found == expected
    answers = CheckRequest.objects.filter(pk__in=[for_page.pk, for_api.pk]).exclude(check_made=None)
    assert answers.count() == (2 if EXPECTED["answer the call"].get(role) == OK else 0)
    assert CheckCall.objects.count() == 5
