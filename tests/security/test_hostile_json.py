"""Bodies built to break the JSON parser get a 400 with a message, never a server error."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from sheets.models import Campaign

pytestmark = pytest.mark.django_db

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
