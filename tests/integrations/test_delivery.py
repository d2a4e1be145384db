"""Deliveries to a real receiver on 127.0.0.1: signatures, retries with the same webhook-id,
a worker killed mid-delivery, paused endpoints, refused URLs, and what a fight with a hidden
NPC lets out."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from datetime import timedelta
from typing import Any
from unittest import mock

import pytest
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from combat import services
from combat.models import Participant
from integrations import delivery
from integrations.models import WebhookDelivery, WebhookEndpoint
from sheets.services import create_character, daily_rest
from tests.factories import make_thug, make_ysolde
from tests.fight_steps import declare, strike

pytestmark = pytest.mark.django_db


def fight(table: Any, *, hidden: bool) -> tuple[Any, Participant, Participant]:
    """Ysolde (the player's) against two thug copies, Ysolde's turn; the first thug is
    returned."""
    ysolde = make_ysolde(table.campaign, table.player)
    npc = make_thug(table.campaign, table.gm)
    encounter, _ = services.create_encounter(campaign=table.campaign, name="Ambush", actor=table.gm)
    services.add_participants(encounter=encounter, characters=[ysolde], actor=table.gm)
    services.add_npc_copies(encounter=encounter, npc=npc, count=2, actor=table.gm, hidden=hidden)
    services.start_encounter(encounter=encounter, actor=table.gm)
    y = Participant.objects.select_related("character").get(encounter=encounter, character=ysolde)
    t = (
        Participant.objects.select_related("character")
        .exclude(pk=y.pk)
        .filter(encounter=encounter)
        .order_by("character__name")
        .first()
    )
    return encounter, y, t


def first_blow(
    table: Any, encounter: Any, y: Participant, t: Participant, each: Any = nullcontext
) -> None:
    """Ysolde's mighty blow at the first thug's chest, parried, rolled 43: the thug goes
    down. ``each`` wraps each of the three steps (declare, defend, roll)."""
    with each():
        decl = declare(encounter, y, t, actor=table.player)
    with each():
        services.declare_defense(declaration=decl, defense="parry", actor=table.gm)
    with each():
        services.resolve(declaration=decl, roll=43, actor=table.player)


def exchange(table: Any, encounter: Any, y: Participant, t: Participant) -> Participant:
    """Ysolde strikes the first thug down, then the second thug strikes Ysolde (rolls 43 and
    12); the second thug is returned. A thug who is down cannot strike back."""
    first_blow(table, encounter, y, t)
    services.next_turn(encounter=encounter, actor=table.gm)
    assert Participant.objects.get(pk=t.pk).state == Participant.State.DOWN
    t = (
        Participant.objects.select_related("character")
        .filter(encounter=encounter)
        .exclude(pk__in=(t.pk, y.pk))
        .get()
    )
    y = Participant.objects.select_related("character").get(pk=y.pk)
    strike(encounter, t, y, actor=table.gm, defender=table.player, defense="dodge", roll=12)
    return t


def test_it_signs_each_event_and_the_receiver_verifies_it(
    table, hook, receiver, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        encounter, y, t = fight(table, hidden=False)
        exchange(table, encounter, y, t)
    assert receiver.received and all(r.verified for r in receiver.received)
    types = [e["type"] for e in receiver.events]
    assert "encounter.started" in types and "turn.passed" in types
    rolls = [e for e in receiver.events if e["type"] == "roll.resolved"]
    assert len(rolls) == 2
    first = rolls[0]["data"]
    assert first["participant"] == y.name and first["target"] == t.name
    assert first["result"]["roll"] == 43 and first["result"]["pvd"].count("v") == 1
    assert {"degree", "hits", "damage"} <= set(first["result"])
    headers = receiver.received[0].headers
    assert {"webhook-id", "webhook-timestamp", "webhook-signature"} <= set(headers)
    assert WebhookDelivery.objects.filter(status="delivered").count() == len(receiver.received)


def test_a_wrong_secret_fails_verification(
    table, hook, receiver, django_capture_on_commit_callbacks
):
    receiver.secret = WebhookEndpoint().secret  # another secret
    with django_capture_on_commit_callbacks(execute=True):
        fight(table, hidden=False)
    assert receiver.received and not any(r.verified for r in receiver.received)


def test_500_twice_then_200_is_delivered_once_more_with_the_same_id(
    table, hook, receiver, django_capture_on_commit_callbacks
):
    hook.events = ["encounter.started"]
    hook.save()
    receiver.answers = [500, 500]
    with django_capture_on_commit_callbacks(execute=True):
        fight(table, hidden=False)
    d = WebhookDelivery.objects.get()
    assert d.status == "pending" and d.attempts == 1 and d.last_status_code == 500
    # Backoff: about 30 s after the first failure (±20 %), computable, not waited for.
    wait = d.next_attempt_at - d.updated_at
    assert timedelta(seconds=23) <= wait <= timedelta(seconds=37)
    assert delivery.deliver_due() == 0  # not due yet
    later = d.next_attempt_at + timedelta(seconds=1)
    assert delivery.deliver_due(now=later) == 1
    d.refresh_from_db()
    assert d.attempts == 2 and d.status == "pending"
    assert delivery.deliver_due(now=d.next_attempt_at + timedelta(seconds=1)) == 1
    d.refresh_from_db()
    assert d.status == "delivered" and d.attempts == 3 and d.last_status_code == 200
    assert [r.webhook_id for r in receiver.received] == [d.webhook_id] * 3
    assert len(receiver.events) == 1  # exactly once, after the two failures
    assert delivery.deliver_due(now=later + timedelta(days=2)) == 0


def test_backoff_grows_exponentially_over_about_a_day():
    rng = random.Random(7)
    waits = [delivery.backoff(n, rng).total_seconds() for n in range(1, delivery.MAX_ATTEMPTS)]
    assert all(b > a for a, b in zip(waits, waits[1:], strict=False))
    assert 18 * 3600 <= sum(waits) <= 27 * 3600
    plain = [delivery.backoff(1, random.Random(s)).total_seconds() for s in range(20)]
    assert len(set(plain)) > 1  # jitter
    assert all(24 <= w <= 36 for w in plain)


def test_an_endpoint_that_keeps_failing_is_paused_and_the_gm_is_told(
    table, hook, receiver, django_capture_on_commit_callbacks, client_for
):
    hook.events = ["encounter.started"]
    hook.save()
    receiver.answers = [503] * delivery.MAX_ATTEMPTS
    with django_capture_on_commit_callbacks(execute=True):
        fight(table, hidden=False)
    d = WebhookDelivery.objects.get()
    now = timezone.now()
    for _ in range(delivery.MAX_ATTEMPTS - 1):
        now = d.next_attempt_at + timedelta(seconds=1)
        delivery.deliver_due(now=now)
        d.refresh_from_db()
    assert d.status == "failed" and d.attempts == delivery.MAX_ATTEMPTS
    assert (now - d.created_at) > timedelta(hours=18)
    hook.refresh_from_db()
    assert not hook.active and "failed" in hook.paused_reason
    page = client_for(table.gm).get(table.campaign.get_absolute_url())
    assert "paused" in page.content.decode()
    assert 'data-testid="webhook-paused"' in page.content.decode()
    player_page = client_for(table.player).get(table.campaign.get_absolute_url())
    assert "webhook" not in player_page.content.decode().lower()  # players are not told


# Committed for real: the worker command closes and reopens database connections (on
# PostgreSQL it may not do that inside the test's transaction).
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_delivery_redelivers_with_the_same_id(
    table, hook, receiver, django_capture_on_commit_callbacks
):
    """The database queue: the next attempt is queued before the request goes out, so a
    worker that dies while it is in flight leaves it behind, and it sends the same id."""
    from django_tasks_db.models import DBTaskResult

    hook.events = ["encounter.started"]
    hook.save()
    real_post = delivery.post

    def post_then_die(*args: Any) -> int:
        real_post(*args)  # the receiver got it...
        raise KeyboardInterrupt  # ...and the worker is killed before recording the answer

    db = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}
    with override_settings(TASKS=db):
        with django_capture_on_commit_callbacks(execute=True):
            fight(table, hidden=False)
        d = WebhookDelivery.objects.get()
        queued = DBTaskResult.objects.get()
        assert queued.status == "READY"
        with mock.patch.object(delivery, "post", post_then_die), pytest.raises(KeyboardInterrupt):
            delivery.deliver.call(d.pk)
        d.refresh_from_db()
        assert d.status == "pending" and d.attempts == 1
        retry = DBTaskResult.objects.exclude(pk=queued.pk).get()
        assert retry.run_after == d.next_attempt_at  # queued with the attempt, before sending
        # Later, a worker runs the queued attempt (its time come).
        DBTaskResult.objects.update(status="SUCCESSFUL")
        DBTaskResult.objects.filter(pk=retry.pk).update(run_after=timezone.now(), status="READY")
        WebhookDelivery.objects.filter(pk=d.pk).update(next_attempt_at=timezone.now())
        from django.core.management import call_command

        call_command("db_worker", "--batch", "--no-startup-delay", "--interval", "0", verbosity=0)
    d.refresh_from_db()
    assert d.status == "delivered" and d.attempts == 2
    assert [r.webhook_id for r in receiver.received] == [d.webhook_id, d.webhook_id]
    assert len(receiver.events) == 1  # the receiver dropped the duplicate by its id


def test_paused_endpoints_get_nothing(table, hook, receiver, django_capture_on_commit_callbacks):
    hook.active = False
    hook.save()
    with django_capture_on_commit_callbacks(execute=True):
        encounter, y, t = fight(table, hidden=False)
        exchange(table, encounter, y, t)
    assert receiver.received == []
    assert not WebhookDelivery.objects.exists()


def test_a_delivery_for_an_endpoint_paused_meanwhile_is_cancelled(table, hook, receiver):
    d = WebhookDelivery.objects.create(
        endpoint=hook, event_type="turn.passed", webhook_id="msg_x", payload={}
    )
    WebhookEndpoint.objects.filter(pk=hook.pk).update(active=False)
    delivery.attempt(d.pk)
    d.refresh_from_db()
    assert d.status == "cancelled" and receiver.received == []


def test_a_fight_with_a_hidden_npc_lets_none_of_its_numbers_out(
    table, hook, receiver, django_capture_on_commit_callbacks
):
    chat = WebhookEndpoint.objects.create(
        campaign=table.campaign, url=receiver.url, events=list(hook.events), format="chat"
    )
    with django_capture_on_commit_callbacks(execute=True):
        encounter, y, t = fight(table, hidden=True)
        second = exchange(table, encounter, y, t)
        services.adjust_zone(
            encounter=encounter, zone=t.character.zones.get(name="head"), amount=3, actor=table.gm
        )
    assert {r.headers["webhook-id"] for r in receiver.received} == set(
        WebhookDelivery.objects.values_list("webhook_id", flat=True)
    )
    sent = [json.loads(r.body) for r in receiver.received]
    rolls = [b for b in sent if b.get("type") == "roll.resolved"]
    assert len(rolls) == 2 and all(r["data"]["redacted"] for r in rolls)
    assert {r["data"]["participant"] for r in rolls} == {y.name, second.name}  # names, no numbers
    for body in sent:
        assert not keys(body) & {"result", "wounds", "changes", "roll", "pvd", "vitality"}, body
    chats = [b for b in sent if "embeds" in b]
    assert chats and chat.deliveries.count() == len(chats)
    for message in chats:
        names = {f["name"] for f in message["embeds"][0]["fields"]}
        assert not names & {"PvD", "Roll", "Degree", "Hits", "Damage"}


def keys(value: Any) -> set[str]:
    """Every key in a JSON value, at any depth."""
    if isinstance(value, dict):
        return set(value).union(*(keys(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(keys(v) for v in value))
    return set()


def test_characters_created_changed_and_rested_but_not_a_secret_npc(
    table, hook, receiver, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        bram = create_character(campaign=table.campaign, owner=table.player, name="Bram")
    with django_capture_on_commit_callbacks(execute=True):
        bram.notes = "A sailor."
        bram.save()
    with django_capture_on_commit_callbacks(execute=True):
        daily_rest(user=bram.owner, character=bram, rng=random.Random(3))
    with django_capture_on_commit_callbacks(execute=True):
        make_thug(table.campaign, table.gm)  # an NPC nobody has been shown
    types = [(e["type"], e["data"]["character"]["name"]) for e in receiver.events]
    assert ("character.created", "Bram") in types
    assert ("character.changed", "Bram") in types
    assert ("character.rested", "Bram") in types
    assert all(name == "Bram" for _, name in types)


def test_a_character_save_costs_one_query_when_no_endpoint_wants_it(
    table, django_capture_on_commit_callbacks
):
    """Most campaigns have no webhook: the endpoints are looked up first, and nothing else
    is read when there are none (the sheet's edits save the character every time)."""
    bram = create_character(campaign=table.campaign, owner=table.player, name="Bram")
    with django_capture_on_commit_callbacks() as callbacks:
        bram.notes = "A sailor."
        bram.save()
    with CaptureQueriesContext(connection) as queries:
        for callback in callbacks:
            callback()
    assert len(queries) == 1, [q["sql"] for q in queries]


def test_a_fight_reads_the_endpoints_once_per_event_and_nothing_when_there_are_none(
    table, django_capture_on_commit_callbacks
):
    """A roll that puts a thug down carries two events (roll.resolved, participant.down):
    with no endpoint, the campaign's endpoints are read once for the entry and once for the
    character it saved (character.changed), and nothing else: who went down and who may see
    it were read for nobody. A declaration or a defense, which carry no event, read
    nothing."""
    encounter, y, t = fight(table, hidden=False)
    steps: list[list[Any]] = []

    @contextmanager
    def step() -> Iterator[None]:
        with django_capture_on_commit_callbacks() as callbacks:
            yield
        steps.append(list(callbacks))

    first_blow(table, encounter, y, t, each=step)
    assert Participant.objects.get(pk=t.pk).state == Participant.State.DOWN
    counts = []
    for callbacks in steps:
        with CaptureQueriesContext(connection) as queries:
            for callback in callbacks:
                callback()
        counts.append(len(queries))
    assert counts == [0, 0, 2], [q["sql"][:90] for q in queries.captured_queries]


@override_settings(WEBHOOKS_ALLOW_PRIVATE=False)
@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/hook",
        "http://localhost/hook",
        "http://[::1]/hook",
        "http://10.1.2.3/hook",
        "http://192.168.0.10/hook",
        "http://172.16.0.1/hook",
        "http://169.254.169.254/latest/meta-data/",
        "http://[fe80::1]/hook",
        "http://0.0.0.0/hook",
        "http://[::ffff:127.0.0.1]/hook",
        "ftp://example.org/hook",
        "http://user:pw@93.184.215.14/hook",
    ],
)
def test_it_refuses_urls_to_private_addresses_in_production(url):
    with pytest.raises(delivery.RefusedURL):
        delivery.check_url(url)


@override_settings(WEBHOOKS_ALLOW_PRIVATE=False)
def test_it_accepts_a_public_address():
    assert delivery.check_url("https://93.184.215.14/hook").address == "93.184.215.14"


def test_a_refused_url_at_delivery_time_fails_the_attempt(table, hook, receiver):
    d = WebhookDelivery.objects.create(
        endpoint=hook, event_type="turn.passed", webhook_id="msg_y", payload={}
    )
    with override_settings(WEBHOOKS_ALLOW_PRIVATE=False):
        delivery.attempt(d.pk)
    d.refresh_from_db()
    assert d.status == "pending" and "private" in d.last_error and receiver.received == []
