"""/api/schema/ is built once per process and language (config/schema.py), and stays the
schema every caller gets."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client, override_settings
from drf_spectacular.generators import SchemaGenerator

from config import schema
from sheets.models import ApiToken
from tests.factories import make_campaign, make_user
from tests.openapi import openapi_schema

pytestmark = pytest.mark.django_db
JSON = "application/vnd.oai.openapi+json"


def fetch(client: Client, **query: Any) -> Any:
    response = client.get("/api/schema/", query, HTTP_ACCEPT=JSON)
    assert response.status_code == 200
    return response.json()


def test_every_caller_gets_the_schema_built_without_a_request():
    gm = make_user("gm")
    make_campaign(gm)
    _, key = ApiToken.objects.create_token(user=gm, name="bot")
    schema.public_schema.cache_clear()
    anonymous = fetch(Client())
    as_gm = fetch(Client(HTTP_AUTHORIZATION=f"Bearer {key}"))
    assert anonymous == as_gm == openapi_schema()


def test_it_builds_the_schema_once_per_language(monkeypatch):
    built = []
    real = SchemaGenerator.get_schema

    def counting(self: Any, request: Any = None, public: bool = False) -> Any:
        built.append(public)
        return real(self, request=request, public=public)

    monkeypatch.setattr(SchemaGenerator, "get_schema", counting)
    schema.public_schema.cache_clear()
    client = Client()
    first = fetch(client)
    yaml = client.get("/api/schema/")
    assert yaml["Content-Type"].startswith("application/vnd.oai.openapi")
    assert fetch(client) == first
    assert len(built) == 1
    fetch(client, lang="de")
    fetch(client, lang="de")
    assert len(built) == 2


def test_made_up_languages_are_the_sites_language():
    schema.public_schema.cache_clear()
    client = Client()
    english = fetch(client)
    for made_up in ("x0", "zz-top", "../../etc", "e" * 300):
        assert fetch(client, lang=made_up) == english
    assert schema.public_schema.cache_info().currsize == 1


def test_a_changed_setting_builds_it_anew():
    schema.public_schema.cache_clear()
    first = fetch(Client())
    assert schema.public_schema.cache_info().currsize == 1
    with override_settings(SPECTACULAR_SETTINGS={"TITLE": "Renamed"}):
        assert schema.public_schema.cache_info().currsize == 0
    assert fetch(Client()) == first
