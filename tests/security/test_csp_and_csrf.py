"""CSRF on every state-changing request, and the Content-Security-Policy on every page.

Both walks enumerate the URL conf (tests/security/pages.py), so a new page is covered the day it
is added.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from tests.security.pages import DemoTable, Route, demo_table, get_pages, routes, snapshot

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo() -> DemoTable:
    cache.clear()
    return demo_table()


def csrf_client(user: Any) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def unsafe_requests(route: Route) -> list[str]:
    if route.is_api and "pk" in route.kwargs:
        return ["post", "put", "patch", "delete"]
    return ["post"]


def test_it_walks_a_sensible_number_of_urls():
    names = {r.name for r in routes()}
    assert {"sheets:character_wound", "api:campaign-detail", "api:rules_omg_check"} <= names
    assert len(names) > 60


def test_it_refuses_every_write_without_a_csrf_token(demo):
    client = csrf_client(demo.gm)
    before = snapshot()
    refused = []
    for route in routes():
        url = demo.url(route)
        for method in unsafe_requests(route):
            send = getattr(client, method)
            if route.is_api:
                response = send(url, json.dumps({"name": "x"}), content_type="application/json")
            else:
                response = send(url, {"name": "x", "delta": "1", "value": "x"})
            refused.append((method.upper(), url, response.status_code))
    assert [r for r in refused if r[2] != 403] == []
    assert len(refused) > 80
    assert snapshot() == before
    assert client.get("/dashboard/").status_code == 200  # still logged in: logout was refused too


def test_it_refuses_an_htmx_write_without_a_token_and_accepts_the_pages_token(demo):
    client = csrf_client(demo.gm)
    url = f"/campaigns/{demo.campaign.pk}/join-code/"
    code = demo.campaign.join_code
    assert client.post(url, headers={"HX-Request": "true"}).status_code == 403
    page = client.get(f"/campaigns/{demo.campaign.pk}/").content.decode()
    token = json.loads(re.search(r"<body hx-headers='([^']*)'", page).group(1))["X-CSRFToken"]
    response = client.post(url, headers={"HX-Request": "true", "X-CSRFToken": token})
    assert response.status_code == 200
    demo.campaign.refresh_from_db()
    assert demo.campaign.join_code != code


INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.IGNORECASE)
STYLE_ATTRIBUTE = re.compile(r"<[^>]+\sstyle\s*=", re.IGNORECASE)
STYLE_ELEMENT = re.compile(r"<style[\s>]", re.IGNORECASE)
EVENT_HANDLER = re.compile(r"<[^>]+\son[a-z]+\s*=", re.IGNORECASE)
JS_URL = re.compile(r"""(href|src|action)\s*=\s*["']?\s*javascript:""", re.IGNORECASE)


def test_it_sends_the_policy_and_nothing_inline_on_every_page(demo):
    rendered = 0
    for url, response in get_pages(demo):
        policy = response.get("Content-Security-Policy", "")
        assert "script-src 'self'" in policy, url
        assert "unsafe-inline" not in policy and "unsafe-eval" not in policy, url
        if response.status_code != 200 or "text/html" not in response["Content-Type"]:
            continue
        rendered += 1
        page = response.content.decode()
        for pattern in (INLINE_SCRIPT, STYLE_ATTRIBUTE, STYLE_ELEMENT, EVENT_HANDLER, JS_URL):
            assert not pattern.search(page), (url, pattern.search(page).group(0))
    assert rendered > 20
