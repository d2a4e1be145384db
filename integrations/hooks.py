"""Where events come from: combat log entries once committed (combat.events), characters
saved or their rows edited, daily rests (sheets.signals). Each becomes one delivery per active
endpoint of the campaign that asked for the event; building and sending happen after commit,
off the request (the task worker sends)."""

from __future__ import annotations

import logging
from functools import partial
from typing import Any

from django.db import transaction
from django.db.models.signals import post_save

from combat import events as combat_events
from combat.models import CombatLogEntry, Encounter
from integrations import delivery, payloads
from integrations.models import WebhookEndpoint
from sheets.models import Character
from sheets.signals import rested, rows_changed

logger = logging.getLogger(__name__)


def _active(campaign_id: int) -> list[WebhookEndpoint]:
    return list(WebhookEndpoint.objects.filter(campaign_id=campaign_id, active=True))


def _endpoints(campaign_id: int, event_type: str) -> list[WebhookEndpoint]:
    return [e for e in _active(campaign_id) if e.wants(event_type)]


def dispatch(
    campaign_id: int,
    event_type: str,
    build: Any,
    active: list[WebhookEndpoint] | None = None,
) -> None:
    """Deliveries of ``build()`` (the event, built once) to every endpoint that wants it:
    of ``active`` (the campaign's active endpoints, when the caller read them already)."""
    if active is None:
        active = _active(campaign_id)
    endpoints = [e for e in active if e.wants(event_type)]
    if not endpoints:
        return
    event = payloads.envelope(event_type, build())
    delivery.create_deliveries(
        endpoints, event_type, lambda endpoint: payloads.body_for(endpoint, event)
    )


def on_log_entry(entry: CombatLogEntry) -> None:
    """A committed combat log entry (combat.events calls this after commit).

    Most campaigns have no endpoint, and most entries carry no event: an entry with neither
    an event nor someone going down reads nothing, and the others read the campaign's
    endpoints once, and nothing more when there are none (a roll that put someone down read
    the endpoints twice and who may see them, endpoints or not: a fifth of the roll's
    request)."""
    event_type = payloads.KIND_EVENTS.get(entry.kind)
    if event_type is None and not payloads.may_put_down(entry):
        return
    if not _loaded(entry):
        entry = CombatLogEntry.objects.select_related(
            "encounter__campaign", "actor", "declaration", "participant"
        ).get(pk=entry.pk)
    campaign_id = entry.encounter.campaign_id
    active = _active(campaign_id)
    if not active:
        return
    if event_type is not None:
        dispatch(campaign_id, event_type, partial(payloads.combat_data, entry), active)
    for down in payloads.downs(entry):
        dispatch(
            campaign_id,
            "participant.down",
            lambda down=down: {**payloads.combat_data(entry), **down},
            active,
        )


def _loaded(entry: CombatLogEntry) -> bool:
    """The entry a service just wrote carries the rows it was written with (a committed
    entry never changes): no need to read it back."""
    fields = [CombatLogEntry._meta.get_field(name) for name in _ENTRY_RELATIONS]
    if not all(f.is_cached(entry) for f in fields):  # type: ignore[union-attr]  # forward fields only
        return False
    return Encounter._meta.get_field("campaign").is_cached(entry.encounter)


_ENTRY_RELATIONS = ("encounter", "actor", "declaration", "participant")


def _character_event(
    character_id: int, campaign_id: int, event_type: str, extra: dict[str, Any]
) -> None:
    # Most campaigns have no endpoint that wants the event: one query, not four, per save.
    if not _endpoints(campaign_id, event_type):
        return
    character = Character.objects.select_related("campaign", "owner").filter(pk=character_id)
    c = character.first()
    if c is None or not payloads.character_visible(c):
        return
    dispatch(c.campaign_id, event_type, lambda: payloads.character_data(c, **extra))


def _safely(fn: Any, *args: Any) -> None:
    try:
        fn(*args)
    except Exception:  # a webhook must never break the action that was committed
        logger.exception("webhook dispatch failed")


class _Changed:
    """The after-commit callback of a character.changed event. A transaction holds at most
    one per character: a sheet saved with its rows (the API's PUT), or saved twice, is one
    change. Callbacks of a rolled-back savepoint are dropped by Django, this one with them."""

    def __init__(self, character_id: int, campaign_id: int) -> None:
        self.character_id = character_id
        self.campaign_id = campaign_id
        self.ran = False  # a test runs the callbacks inside its own transaction

    def __call__(self) -> None:
        self.ran = True
        _safely(_character_event, self.character_id, self.campaign_id, "character.changed", {})


def _changed(character: Character) -> None:
    connection = transaction.get_connection()
    if connection.in_atomic_block and any(
        isinstance(callback, _Changed)
        and callback.character_id == character.pk
        and not callback.ran
        for _, callback, _ in connection.run_on_commit
    ):
        return
    transaction.on_commit(_Changed(character.pk, character.campaign_id), robust=True)


def on_character_saved(sender: Any, instance: Character, created: bool, **kwargs: Any) -> None:
    if not created:
        _changed(instance)
        return
    transaction.on_commit(
        partial(
            _safely, _character_event, instance.pk, instance.campaign_id, "character.created", {}
        ),
        robust=True,
    )


def on_rows_changed(sender: Any, character: Character, **kwargs: Any) -> None:
    """A discipline, weapon or zone added, changed or deleted (the page's or the API's edit):
    the sheet changed as much as when it is saved."""
    _changed(character)


def on_rested(sender: Any, character: Character, **kwargs: Any) -> None:
    transaction.on_commit(
        partial(
            _safely, _character_event, character.pk, character.campaign_id, "character.rested", {}
        ),
        robust=True,
    )


def connect() -> None:
    combat_events.subscribe(on_log_entry)
    post_save.connect(on_character_saved, sender=Character, dispatch_uid="webhooks-character")
    rested.connect(on_rested, dispatch_uid="webhooks-rested")
    rows_changed.connect(on_rows_changed, dispatch_uid="webhooks-rows-changed")
    from integrations import check_events

    check_events.connect()
