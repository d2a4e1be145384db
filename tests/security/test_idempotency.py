"""Idempotency-Key on the API's writes (config/idempotency.py)."""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from config import idempotency
from sheets.models import ApiToken, Campaign, IdempotencyRecord, Membership
from tests.factories import make_campaign, make_user

pytestmark = [pytest.mark.django_db, pytest.mark.both_databases]


@pytest.fixture
def gm() -> Any:
    return make_user("keeper")


@pytest.fixture
def api(gm: Any) -> Client:
    _, key = ApiToken.objects.create_token(user=gm, name="bot")
    return Client(HTTP_AUTHORIZATION=f"Token {key}")


def post(client: Client, path: str, body: Any, key: str | None = None, **extra: Any) -> Any:
    headers = {"Idempotency-Key": key} if key is not None else {}
    return client.post(
        path, json.dumps(body), content_type="application/json", headers=headers, **extra
    )


def test_it_replays_the_first_response_for_the_same_key_and_body(api):
    first = post(api, "/api/campaigns/", {"name": "Once"}, key="k-1")
    second = post(api, "/api/campaigns/", {"name": "Once"}, key="k-1")
    assert first.status_code == second.status_code == 201
    assert second.json() == first.json()
    assert second["Content-Type"] == first["Content-Type"] == "application/json"
    assert second[idempotency.REPLAYED_HEADER] == "true"
    assert idempotency.REPLAYED_HEADER not in first
    assert Campaign.objects.filter(name="Once").count() == 1


def test_it_runs_each_request_without_a_key(api):
    post(api, "/api/campaigns/", {"name": "Twice"})
    post(api, "/api/campaigns/", {"name": "Twice"})
    assert Campaign.objects.filter(name="Twice").count() == 2
    assert not IdempotencyRecord.objects.exists()


def test_it_refuses_the_same_key_with_another_body(api):
    post(api, "/api/campaigns/", {"name": "First"}, key="k-2")
    response = post(api, "/api/campaigns/", {"name": "Second"}, key="k-2")
    assert response.status_code == 422
    assert "different request" in response.json()["detail"]
    assert not Campaign.objects.filter(name="Second").exists()


def test_it_refuses_the_same_key_on_another_path_or_method(api, gm):
    campaign = make_campaign(gm, name="Keep")
    post(api, "/api/campaigns/", {"name": "A"}, key="k-3")
    response = api.patch(
        f"/api/campaigns/{campaign.pk}/",
        json.dumps({"name": "A"}),
        content_type="application/json",
        headers={"Idempotency-Key": "k-3"},
    )
    assert response.status_code == 422
    campaign.refresh_from_db()
    assert campaign.name == "Keep"


def test_it_answers_409_while_the_first_request_is_in_flight(api, gm):
    IdempotencyRecord.objects.create(
        caller=f"user:{gm.pk}",
        key="k-4",
        method="POST",
        path="/api/campaigns/",
        request_hash=_hash({"name": "Slow"}),
        created_at=timezone.now(),
    )
    response = post(api, "/api/campaigns/", {"name": "Slow"}, key="k-4")
    assert response.status_code == 409
    assert "still being processed" in response.json()["detail"]
    assert not Campaign.objects.filter(name="Slow").exists()


def test_it_reclaims_a_key_whose_request_died(api, gm):
    IdempotencyRecord.objects.create(
        caller=f"user:{gm.pk}",
        key="k-5",
        method="POST",
        path="/api/campaigns/",
        request_hash=_hash({"name": "Retry"}),
        created_at=timezone.now() - idempotency.IN_FLIGHT_TIMEOUT - timedelta(seconds=1),
    )
    response = post(api, "/api/campaigns/", {"name": "Retry"}, key="k-5")
    assert response.status_code == 201
    assert Campaign.objects.filter(name="Retry").count() == 1


@pytest.mark.parametrize("swept", [True, False], ids=["swept", "not-swept-yet"])
def test_it_forgets_keys_after_a_day(api, gm, monkeypatch, swept):
    sweep = idempotency.Sweeper()
    monkeypatch.setattr(idempotency, "sweep", sweep if swept else lambda now: None)
    post(api, "/api/campaigns/", {"name": "Old"}, key="k-6")
    IdempotencyRecord.objects.update(created_at=timezone.now() - timedelta(hours=25))
    response = post(api, "/api/campaigns/", {"name": "Old"}, key="k-6")
    assert response.status_code == 201
    assert idempotency.REPLAYED_HEADER not in response
    assert Campaign.objects.filter(name="Old").count() == 2


def test_it_deletes_expired_keys_once_a_minute(api, gm, monkeypatch):
    sweep = idempotency.Sweeper()
    monkeypatch.setattr(idempotency, "sweep", sweep)
    other = make_user("other-keeper")

    def expired(key: str) -> None:
        IdempotencyRecord.objects.create(
            caller=f"user:{other.pk}",
            key=key,
            method="POST",
            path="/api/campaigns/",
            request_hash=_hash({}),
            created_at=timezone.now() - idempotency.TTL - timedelta(seconds=1),
            status=201,
        )

    expired("old-1")
    post(api, "/api/campaigns/", {"name": "A"}, key="k-14")
    assert not IdempotencyRecord.objects.filter(key="old-1").exists()
    expired("old-2")
    post(api, "/api/campaigns/", {"name": "B"}, key="k-15")
    assert IdempotencyRecord.objects.filter(key="old-2").exists()  # swept under a minute ago
    sweep.last = sweep.last - idempotency.SWEEP_EVERY
    post(api, "/api/campaigns/", {"name": "C"}, key="k-16")
    assert not IdempotencyRecord.objects.filter(key="old-2").exists()
    assert IdempotencyRecord.objects.filter(key__startswith="k-").count() == 3


def test_it_keeps_keys_apart_per_user(api):
    other = make_user("other-keeper")
    _, key = ApiToken.objects.create_token(user=other, name="bot")
    other_api = Client(HTTP_AUTHORIZATION=f"Token {key}")
    post(api, "/api/campaigns/", {"name": "Mine"}, key="shared")
    response = post(other_api, "/api/campaigns/", {"name": "Mine"}, key="shared")
    assert response.status_code == 201
    assert idempotency.REPLAYED_HEADER not in response
    assert Campaign.objects.filter(name="Mine").count() == 2


def test_it_shares_keys_between_a_users_session_and_tokens(api, gm):
    session = Client()
    session.force_login(gm)
    post(api, "/api/campaigns/", {"name": "Both"}, key="k-7")
    response = post(session, "/api/campaigns/", {"name": "Both"}, key="k-7")
    assert response.status_code == 201
    assert response[idempotency.REPLAYED_HEADER] == "true"
    assert Campaign.objects.filter(name="Both").count() == 1


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("put", "/api/campaigns/{pk}/", {"name": "Put", "description": ""}),
        ("patch", "/api/campaigns/{pk}/", {"description": "patched"}),
        ("post", "/api/campaigns/{pk}/regenerate-code/", {}),
    ],
)
def test_it_covers_every_unsafe_method(api, gm, method, path, body):
    campaign = make_campaign(gm, name="Cover")
    url = path.format(pk=campaign.pk)
    send = getattr(api, method)
    headers = {"Idempotency-Key": f"k-{method}"}
    first = send(url, json.dumps(body), content_type="application/json", headers=headers)
    campaign.refresh_from_db()
    after_first = (campaign.name, campaign.description, campaign.join_code)
    second = send(url, json.dumps(body), content_type="application/json", headers=headers)
    campaign.refresh_from_db()
    assert first.status_code == second.status_code == 200
    assert second.json() == first.json()
    assert (campaign.name, campaign.description, campaign.join_code) == after_first


def test_it_replays_a_delete(api, gm):
    campaign = make_campaign(gm, name="Gone")
    url = f"/api/campaigns/{campaign.pk}/"
    first = api.delete(url, headers={"Idempotency-Key": "k-del"})
    second = api.delete(url, headers={"Idempotency-Key": "k-del"})
    assert first.status_code == second.status_code == 204
    assert second[idempotency.REPLAYED_HEADER] == "true"


def test_it_replays_a_validation_error_without_running_again(api):
    first = post(api, "/api/campaigns/", {"name": ""}, key="k-8")
    second = post(api, "/api/campaigns/", {"name": ""}, key="k-8")
    assert first.status_code == second.status_code == 400
    assert second.json() == first.json()


def test_it_does_not_keep_refusals_before_the_view_ran(gm):
    session = Client(enforce_csrf_checks=True)
    session.force_login(gm)
    refused = post(session, "/api/campaigns/", {"name": "Csrf"}, key="k-9")
    assert refused.status_code == 403
    assert not IdempotencyRecord.objects.exists()
    session.get("/dashboard/")
    token = session.cookies["csrftoken"].value
    accepted = post(session, "/api/campaigns/", {"name": "Csrf"}, key="k-9", HTTP_X_CSRFTOKEN=token)
    assert accepted.status_code == 201


def test_it_forgets_the_key_when_the_view_fails(api, monkeypatch):
    from sheets.api.campaigns import CampaignViewSet

    def boom(self: Any, serializer: Any) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(CampaignViewSet, "perform_create", boom)
    with pytest.raises(RuntimeError):
        post(api, "/api/campaigns/", {"name": "Boom"}, key="k-10")
    assert not IdempotencyRecord.objects.exists()
    monkeypatch.undo()
    assert post(api, "/api/campaigns/", {"name": "Boom"}, key="k-10").status_code == 201


@pytest.mark.parametrize("key", ["", "x" * 256, "caf\u00e9"])
def test_it_refuses_a_malformed_key(api, key):
    response = post(api, "/api/campaigns/", {"name": "Bad key"}, key=key)
    assert response.status_code == 400
    assert "Idempotency-Key" in response.json()["detail"]
    assert not Campaign.objects.filter(name="Bad key").exists()


def test_it_ignores_keys_from_anonymous_callers(client):
    body = {"pro": 70, "dif": 20, "roll": 43}
    first = post(client, "/api/rules/omg/check/", body, key="anon")
    second = post(client, "/api/rules/omg/check/", body, key="anon")
    assert first.status_code == second.status_code == 200
    assert idempotency.REPLAYED_HEADER not in second
    assert not IdempotencyRecord.objects.exists()


def test_it_leaves_an_unauthenticated_write_to_the_view(client):
    response = post(client, "/api/campaigns/", {"name": "Anon"}, key="k-11")
    assert response.status_code == 401
    assert not IdempotencyRecord.objects.exists()


def test_it_looks_the_token_up_once_per_request(api):
    # The middleware needs the caller before the view; DRF authenticates inside it.
    with CaptureQueriesContext(connection) as queries:
        response = post(api, "/api/campaigns/", {"name": "One lookup"}, key="k-12")
    assert response.status_code == 201
    lookups = [q["sql"] for q in queries if "FROM" in q["sql"] and "sheets_apitoken" in q["sql"]]
    assert len([sql for sql in lookups if sql.lstrip().upper().startswith("SELECT")]) == 1


def test_it_refuses_a_disabled_users_token_without_keeping_the_key(gm):
    _, key = ApiToken.objects.create_token(user=gm, name="bot")
    gm.is_active = False
    gm.save(update_fields=["is_active"])
    response = post(Client(HTTP_AUTHORIZATION=f"Bearer {key}"), "/api/campaigns/", {}, key="k-13")
    assert response.status_code == 401
    assert not IdempotencyRecord.objects.exists()


def test_it_ignores_keys_on_reads(api):
    response = api.get("/api/campaigns/", headers={"Idempotency-Key": "read"})
    assert response.status_code == 200
    assert not IdempotencyRecord.objects.exists()


def test_it_applies_a_join_once_for_a_retried_request(api, gm):
    other_gm = make_user("other-gm")
    campaign = make_campaign(other_gm, name="Joinable")
    first = post(api, "/api/campaigns/join/", {"code": campaign.join_code}, key="join")
    second = post(api, "/api/campaigns/join/", {"code": campaign.join_code}, key="join")
    assert first.status_code == second.status_code == 201
    assert Membership.objects.filter(campaign=campaign, user=gm).count() == 1


def _hash(body: Any) -> str:
    import hashlib

    digest = hashlib.sha256()
    digest.update(b"application/json\0")
    digest.update(json.dumps(body).encode())
    return digest.hexdigest()


def _close_thread_connection() -> None:
    """Close this thread's own connection. Django ignores close() on an in-memory SQLite
    database (the test default), so its handle is closed directly; left open, it is collected
    later as an unclosed database and fails whichever test runs then."""
    if connection.vendor == "sqlite" and connection.is_in_memory_db():  # type: ignore[attr-defined]  # SQLite's
        if connection.connection is not None:
            connection.connection.close()
    else:
        connection.close()


@pytest.mark.django_db(transaction=True)
def test_it_lets_the_database_decide_between_concurrent_duplicates(gm):
    """Two threads claim one key at the same moment: one runs, the other gets 409 (or, if it
    arrives after the first finished, the replay); the campaign is created once."""
    _, key = ApiToken.objects.create_token(user=gm, name="race")
    from sheets.api.campaigns import CampaignViewSet

    original = CampaignViewSet.perform_create
    inside = threading.Event()
    release = threading.Event()

    def slow_create(self: Any, serializer: Any) -> None:
        inside.set()
        release.wait(timeout=10)
        original(self, serializer)

    CampaignViewSet.perform_create = slow_create  # type: ignore[method-assign]  # slowed on purpose
    results: dict[str, int] = {}

    def send_first() -> None:
        try:
            results["first"] = post(
                Client(HTTP_AUTHORIZATION=f"Token {key}"),
                "/api/campaigns/",
                {"name": "Race"},
                key="race",
            ).status_code
        finally:
            _close_thread_connection()

    try:
        first = threading.Thread(target=send_first)
        first.start()
        assert inside.wait(timeout=10)
        results["second"] = post(
            Client(HTTP_AUTHORIZATION=f"Token {key}"),
            "/api/campaigns/",
            {"name": "Race"},
            key="race",
        ).status_code
        release.set()
        first.join(timeout=10)
    finally:
        CampaignViewSet.perform_create = original  # type: ignore[method-assign]  # slowed on purpose
        release.set()
    assert results == {"first": 201, "second": 409}
    assert Campaign.objects.filter(name="Race").count() == 1
