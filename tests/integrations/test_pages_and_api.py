"""The GM's webhook pages and API: the secret shown once, pausing, the delivery log and "send
again", refused URLs; players 403, outsiders 404 (every URL and role: test_authz_matrix)."""

from __future__ import annotations

import re

import pytest
from django.test import override_settings

from integrations.models import WebhookDelivery, WebhookEndpoint
from sheets.models import IdempotencyRecord

pytestmark = pytest.mark.django_db


def test_it_creates_a_webhook_and_shows_its_secret_once(table, client_for, receiver):
    gm = client_for(table.gm)
    url = f"/campaigns/{table.campaign.pk}/webhooks/"
    response = gm.post(
        url, {"url": receiver.url, "events": ["roll.resolved"], "format": "chat", "active": "on"}
    )
    endpoint = WebhookEndpoint.objects.get()
    assert response.status_code == 302 and endpoint.format == "chat"
    first = gm.get(response.url).content.decode()
    assert endpoint.secret in first
    assert endpoint.secret not in gm.get(response.url).content.decode()
    gm.post(f"{url}{endpoint.pk}/secret/")
    old = endpoint.secret
    endpoint.refresh_from_db()
    assert endpoint.secret != old and endpoint.secret in gm.get(response.url).content.decode()


def test_it_pauses_and_resumes(table, client_for, hook):
    gm = client_for(table.gm)
    gm.post(f"/campaigns/{table.campaign.pk}/webhooks/{hook.pk}/pause/")
    hook.refresh_from_db()
    assert not hook.active
    gm.post(f"/campaigns/{table.campaign.pk}/webhooks/{hook.pk}/pause/")
    hook.refresh_from_db()
    assert hook.active


@override_settings(WEBHOOKS_ALLOW_PRIVATE=False)
def test_the_page_and_the_api_refuse_a_private_url(table, client_for):
    gm = client_for(table.gm)
    response = gm.post(
        f"/campaigns/{table.campaign.pk}/webhooks/",
        {"url": "http://127.0.0.1/hook", "events": ["roll.resolved"], "format": "json"},
    )
    assert response.status_code == 200 and "private" in response.content.decode()
    response = gm.post(
        f"/api/campaigns/{table.campaign.pk}/webhooks/",
        {"url": "http://10.0.0.1/", "events": ["turn.passed"]},
        content_type="application/json",
    )
    assert response.status_code == 400 and "url" in response.json()
    assert not WebhookEndpoint.objects.exists()


def test_the_api_shows_the_secret_only_on_creation_and_rotation(table, client_for, receiver):
    gm = client_for(table.gm)
    base = f"/api/campaigns/{table.campaign.pk}/webhooks/"
    created = gm.post(
        base, {"url": receiver.url, "events": ["roll.resolved"]}, content_type="application/json"
    )
    assert created.status_code == 201 and created.json()["secret"].startswith("whsec_")
    pk = created.json()["id"]
    assert "secret" not in gm.get(f"{base}{pk}/").json()
    assert all("secret" not in e for e in gm.get(base).json()["results"])
    rotated = gm.post(f"{base}{pk}/rotate-secret/").json()["secret"]
    assert rotated != created.json()["secret"]
    assert client_for(table.player).get(base).status_code == 403
    assert client_for(table.outsider).get(base).status_code == 404


def test_no_idempotency_record_keeps_a_secret(table, client_for, receiver):
    gm = client_for(table.gm)
    base = f"/api/campaigns/{table.campaign.pk}/webhooks/"
    body = {"url": receiver.url, "events": ["roll.resolved"]}
    key = {"Idempotency-Key": "hook-1"}
    created = gm.post(base, body, content_type="application/json", headers=key)
    assert created.status_code == 201 and created["Cache-Control"] == "no-store"
    pk = created.json()["id"]
    rotated = gm.post(f"{base}{pk}/rotate-secret/", headers={"Idempotency-Key": "hook-2"})
    assert rotated.status_code == 200 and rotated["Cache-Control"] == "no-store"
    assert not IdempotencyRecord.objects.exists()
    # A retry with the same key runs again: a second endpoint, with a secret of its own.
    again = gm.post(base, body, content_type="application/json", headers=key)
    assert again.status_code == 201 and again.json()["secret"] != created.json()["secret"]


def test_the_delivery_log_and_send_again(
    table, client_for, hook, receiver, django_capture_on_commit_callbacks
):
    d = WebhookDelivery.objects.create(
        endpoint=hook,
        event_type="turn.passed",
        webhook_id="msg_1",
        payload={"type": "turn.passed", "timestamp": "2026-11-24T00:00:00Z", "data": {}},
        status="delivered",
        attempts=1,
        last_status_code=200,
    )
    gm = client_for(table.gm)
    page = gm.get(f"/campaigns/{table.campaign.pk}/webhooks/{hook.pk}/").content.decode()
    assert "turn.passed" in page and "Send again" in page
    body = gm.get(f"/campaigns/{table.campaign.pk}/webhooks/{hook.pk}/deliveries/{d.pk}/")
    assert "msg_1" in body.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = gm.post(
            f"/api/campaigns/{table.campaign.pk}/webhooks/{hook.pk}/deliveries/{d.pk}/send-again/"
        )
    assert response.status_code == 202
    again = WebhookDelivery.objects.get(pk=response.json()["id"])
    assert again.webhook_id != "msg_1" and again.status == "delivered"
    assert [r.webhook_id for r in receiver.received] == [again.webhook_id]
    log = gm.get(f"/api/campaigns/{table.campaign.pk}/webhooks/{hook.pk}/deliveries/").json()
    assert log["count"] == 2 and log["results"][0]["payload"]["type"] == "turn.passed"


def test_it_labels_the_active_checkbox_with_a_label_around_it(table, client_for, hook):
    gm = client_for(table.gm)
    for url in (
        f"/campaigns/{table.campaign.pk}/webhooks/",
        f"/campaigns/{table.campaign.pk}/webhooks/{hook.pk}/",
    ):
        page = gm.get(url).content.decode()
        label = re.search(r'<label for="id_active">(.*?)</label>', page, re.S)
        assert label is not None, url
        assert re.search(r'^\s*<input type="checkbox" name="active"[^>]*id="id_active"', label[1])
        assert label[1].rstrip().endswith("Active")
