"""Attempts that cannot succeed end cleanly: a receiver that trickles its answer is cut off at
the delivery's deadline, a URL that is not printable ASCII is refused when saved (page and
API) and at delivery time, and an attempt that raises anything is recorded as failed with its
reason on the deliveries page, never left "pending" without one."""

from __future__ import annotations

import time
from unittest import mock

import pytest
from django.test import override_settings

from integrations import delivery
from integrations.models import WebhookDelivery, WebhookEndpoint

pytestmark = pytest.mark.django_db

REFUSED_URLS = [
    "http://1.1.1.1/\u202e",  # a right-to-left override
    "http://1.1.1.1/caf\u00e9",
    "http://b\u00fccher.example/hook",  # give it as xn--bcher-kva.example
    "http://1.1.1.1/a\x00b",
    "http://1.1.1.1/a\tb",
    "http://1.1.1.1/a b",
    "http://1.1.1.1/" + "a" * 500,
]


def queued(hook: WebhookEndpoint) -> WebhookDelivery:
    return WebhookDelivery.objects.create(
        endpoint=hook, event_type="turn.passed", webhook_id="msg_slow", payload={"a": 1}
    )


@override_settings(WEBHOOKS_DELIVERY_TIMEOUT=1)
def test_a_receiver_that_trickles_its_answer_is_cut_off_at_the_deadline(hook, receiver):
    """One byte every 0.1 s: each read is quick, but the whole answer takes about 6 s. The
    attempt ends at the 1 s deadline, failed with the reason, and is retried later."""
    receiver.trickle = 0.1
    d = queued(hook)
    start = time.monotonic()
    delivery.attempt(d.pk)
    took = time.monotonic() - start
    d.refresh_from_db()
    assert len(receiver.received) == 1
    assert took < 2.5, took
    assert d.status == "pending" and d.attempts == 1 and d.next_attempt_at is not None
    assert d.last_error == "Timed out: no full answer within 1 s."
    hook.refresh_from_db()
    assert hook.consecutive_failures == 1


def test_a_prompt_receiver_is_not_cut_off(hook, receiver):
    d = queued(hook)
    delivery.attempt(d.pk)
    d.refresh_from_db()
    assert d.status == "delivered" and d.last_error == ""


@pytest.mark.parametrize("url", REFUSED_URLS)
def test_it_refuses_a_url_that_is_not_printable_ascii(url):
    with pytest.raises(delivery.RefusedURL):
        delivery.check_url(url)


@pytest.mark.parametrize("url", REFUSED_URLS[:3])
def test_the_page_and_the_api_refuse_it_with_the_reason(table, client_for, url):
    gm = client_for(table.gm)
    page = gm.post(
        f"/campaigns/{table.campaign.pk}/webhooks/",
        {"url": url, "events": ["roll.resolved"], "format": "json"},
    )
    assert page.status_code == 200
    assert "printable ASCII" in page.content.decode()
    api = gm.post(
        f"/api/campaigns/{table.campaign.pk}/webhooks/",
        {"url": url, "events": ["turn.passed"]},
        content_type="application/json",
    )
    assert api.status_code == 400
    assert "printable ASCII" in str(api.json()["url"])
    assert not WebhookEndpoint.objects.exists()


def test_an_ascii_international_host_is_accepted(table, client_for, receiver):
    ok = receiver.url.replace("/hook", "/hook%E2%80%AE?q=%C3%A9")  # percent-encoded is fine
    response = client_for(table.gm).post(
        f"/api/campaigns/{table.campaign.pk}/webhooks/",
        {"url": ok, "events": ["turn.passed"]},
        content_type="application/json",
    )
    assert response.status_code == 201


def test_an_endpoint_saved_before_the_check_fails_with_the_reason_shown(
    table, client_for, hook, receiver
):
    """An endpoint whose URL was saved before the check (straight into the database here):
    each attempt fails with the reason, shown on the deliveries page, and nothing is sent."""
    WebhookEndpoint.objects.filter(pk=hook.pk).update(url="http://1.1.1.1/\u202e")
    d = queued(hook)
    delivery.attempt(d.pk)
    d.refresh_from_db()
    assert d.attempts == 1 and d.status == "pending" and "printable ASCII" in d.last_error
    assert receiver.received == []
    page = client_for(table.gm).get(hook.get_absolute_url()).content.decode()
    assert 'data-testid="delivery-error"' in page and "printable ASCII" in page


def test_an_attempt_that_raises_anything_is_recorded_as_failed(table, client_for, hook, receiver):
    """The network call raising something unforeseen (not an OSError): the attempt is
    counted, failed with the error's name, retried later, and the page says why."""
    d = queued(hook)
    with mock.patch.object(delivery, "post", side_effect=LookupError("unknown encoding")):
        delivery.attempt(d.pk)
    d.refresh_from_db()
    assert d.attempts == 1 and d.status == "pending" and d.next_attempt_at is not None
    assert d.last_error == "Could not be sent (LookupError: unknown encoding)"
    page = client_for(table.gm).get(hook.get_absolute_url()).content.decode()
    assert "Could not be sent (LookupError" in page
