"""/api/tokens/: the caller creates, lists and revokes their own API tokens; a key works
with the ``Bearer`` prefix (what generated clients send) as with ``Token``."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from sheets.models import ApiToken

pytestmark = [pytest.mark.django_db, pytest.mark.both_databases]

LIST = "/api/tokens/"
CAMPAIGNS = "/api/campaigns/"


def with_key(key: str, prefix: str = "Bearer", **extra: Any) -> APIClient:
    client = APIClient(**extra)
    client.credentials(HTTP_AUTHORIZATION=f"{prefix} {key}")
    return client


@pytest.mark.parametrize("prefix", ["Bearer", "bearer", "Token"])
def test_it_accepts_a_key_with_either_prefix(table, prefix):
    _, key = ApiToken.objects.create_token(user=table.gm, name="bot")
    response = with_key(key, prefix).get(CAMPAIGNS)
    assert response.status_code == 200
    assert [c["name"] for c in response.json()["results"]] == ["The Sunken Keep"]


@pytest.mark.parametrize("header", ["Bearer nope", "Bearer", "Bearer a b"])
def test_it_refuses_a_bad_bearer_key(table, header):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    response = client.get(CAMPAIGNS)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"


def test_it_creates_a_token_and_shows_its_key_once(table, client_for):
    session = client_for(table.player)
    response = session.post(LIST, {"name": "Discord bot"}, content_type="application/json")
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"id", "name", "prefix", "created_at", "last_used_at", "key"}
    assert body["name"] == "Discord bot"
    assert body["key"].startswith(body["prefix"])
    token = ApiToken.objects.get(pk=body["id"])
    assert token.user == table.player
    assert body["key"] not in token.key_hash  # only its hash is kept
    # The key works at once, and is never shown again.
    listed = with_key(body["key"]).get(LIST).json()
    assert [t["id"] for t in listed["results"]] == [body["id"]]
    assert "key" not in listed["results"][0]


def test_the_new_key_is_stored_nowhere_not_even_for_a_retry(table):
    from sheets.models import IdempotencyRecord

    _, key = ApiToken.objects.create_token(user=table.gm, name="setup")
    client = with_key(key)
    retry: dict[str, Any] = {"HTTP_IDEMPOTENCY_KEY": "new-bot-1"}
    first = client.post(LIST, {"name": "bot"}, format="json", **retry)
    assert first.status_code == 201
    assert first["Cache-Control"] == "no-store"
    new_key = first.json()["key"]
    assert not any(
        new_key.encode() in bytes(r.body or b"") for r in IdempotencyRecord.objects.all()
    )
    # A retry with the same key makes a token of its own (the first is listed, to revoke).
    again = client.post(LIST, {"name": "bot"}, format="json", **retry)
    assert again.status_code == 201
    assert again.json()["key"] != new_key
    assert ApiToken.objects.filter(name="bot").count() == 2
    # Any other write's answer is still kept for its retry.
    made = client.post(CAMPAIGNS, {"name": "Keep"}, format="json", HTTP_IDEMPOTENCY_KEY="c-1")
    replay = client.post(CAMPAIGNS, {"name": "Keep"}, format="json", HTTP_IDEMPOTENCY_KEY="c-1")
    assert replay["Idempotent-Replayed"] == "true"
    assert replay.json() == made.json()


def test_a_token_can_create_another_and_revoke_itself(table):
    _, key = ApiToken.objects.create_token(user=table.gm, name="old bot")
    client = with_key(key, enforce_csrf_checks=True)
    created = client.post(LIST, {"name": "new bot"}, format="json")
    assert created.status_code == 201
    old = ApiToken.objects.get(name="old bot")
    assert client.delete(f"{LIST}{old.pk}/").status_code == 204
    assert not ApiToken.objects.filter(pk=old.pk).exists()
    assert client.get(LIST).status_code == 401  # revoked at once
    assert with_key(created.json()["key"]).get(LIST).status_code == 200


def test_it_never_shows_or_revokes_another_users_token(table, api_for):
    theirs, _ = ApiToken.objects.create_token(user=table.gm, name="GM's bot")
    api = api_for(table.player)
    assert api.get(LIST).json()["results"] == []
    response = api.delete(f"{LIST}{theirs.pk}/")
    assert response.status_code == 404
    assert ApiToken.objects.filter(pk=theirs.pk).exists()


def test_it_needs_credentials(table):
    assert APIClient().get(LIST).status_code == 401
    assert APIClient().post(LIST, {"name": "x"}, format="json").status_code == 401
    assert not ApiToken.objects.exists()


@pytest.mark.parametrize("body", [{}, {"name": ""}, {"name": "x" * 81}, {"name": 7}])
def test_it_names_the_field_of_a_bad_name(table, api_for, body):
    response = api_for(table.gm).post(LIST, body, format="json")
    assert response.status_code == 400
    assert list(response.json()) == ["name"]
    assert not ApiToken.objects.exists()


def test_it_slows_down_a_caller_that_creates_many_tokens(table, api_for, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "token_create": "2/hour",
        },
    }
    cache.clear()
    api = api_for(table.gm)
    codes = [api.post(LIST, {"name": f"bot {i}"}, format="json").status_code for i in range(3)]
    assert codes == [201, 201, 429]
    assert ApiToken.objects.count() == 2
    # Listing and revoking are not counted.
    assert api.get(LIST).status_code == 200
    first = ApiToken.objects.get(name="bot 0")
    assert api.delete(f"{LIST}{first.pk}/").status_code == 204
