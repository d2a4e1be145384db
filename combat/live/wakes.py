"""Access taken away closes the streams concerned at once: a player removed from a campaign
(or leaving it, or their account deleted), a campaign deleted (by its page, the API or its
GM's account going), an encounter deleted. Each wakes, after the commit, the feeds that check
access again on a wake: the campaign's (checks.live) and its fights' broadcasters
(combat.live.broadcast), as revoking a table display's link does (combat.display). Without it
they noticed at their next heartbeat, and the campaign's stream, which checked access only
when it opened, never did.

The deletions are caught by ``post_delete`` receivers, so every path that deletes those rows
(a service, a view, a cascade from an account or a campaign) wakes what it must, and the
services doing the deleting need no line of their own. What one transaction deletes is woken
once, when it commits; nothing is woken when it rolls back (a wake is only a check, so one
that goes out for nothing costs a query)."""

from __future__ import annotations

import threading
from typing import Any

from django.db import transaction
from django.db.models.signals import post_delete

from checks import live as checks_live
from combat.live import push
from combat.models import Encounter
from sheets.models import Campaign, Membership


class _Pending(threading.local):
    """What the transactions of this thread deleted, to be woken once they commit."""

    def __init__(self) -> None:
        self.campaigns: set[int] = set()  # a campaign's feeds (its viewers' access changed)
        self.fights_of: set[int] = set()  # the running fights of these campaigns, too
        self.encounters: set[int] = set()  # encounters deleted


_pending = _Pending()


def _wake_pending() -> None:
    """After a commit: wake everything noted so far, once (the commit's other callbacks, one
    per deleted row, find nothing left). Anything a rolled-back savepoint noted goes too: a
    wake for nothing is one access check."""
    campaigns, _pending.campaigns = _pending.campaigns, set()
    fights_of, _pending.fights_of = _pending.fights_of, set()
    encounters, _pending.encounters = _pending.encounters, set()
    if fights_of:
        # The fights a removed player may still have open: those not over (as a display's).
        running = Encounter.objects.filter(campaign_id__in=fights_of).active()
        encounters |= set(running.values_list("pk", flat=True))
    for pk in sorted(campaigns):
        checks_live.wake(pk)
    for pk in sorted(encounters):
        push.wake(pk)


def _after_commit(using: str | None) -> None:
    # Robust: the deletion has committed; a wake that fails (the database gone meanwhile) is
    # logged, and the heartbeats catch up, rather than the request answering 500.
    transaction.on_commit(_wake_pending, using=using, robust=True)


def _membership_deleted(sender: Any, instance: Membership, using: str, **_: Any) -> None:
    _pending.campaigns.add(instance.campaign_id)
    _pending.fights_of.add(instance.campaign_id)
    _after_commit(using)


def _campaign_deleted(sender: Any, instance: Campaign, using: str, **_: Any) -> None:
    _pending.campaigns.add(instance.pk)
    _after_commit(using)  # its encounters, deleted with it, are woken each on its own


def _encounter_deleted(sender: Any, instance: Encounter, using: str, **_: Any) -> None:
    _pending.encounters.add(instance.pk)
    _after_commit(using)


def connect_wakes() -> None:
    """Connect the receivers (done once, in CombatConfig.ready)."""
    post_delete.connect(_membership_deleted, sender=Membership, dispatch_uid="live-wake-member")
    post_delete.connect(_campaign_deleted, sender=Campaign, dispatch_uid="live-wake-campaign")
    post_delete.connect(_encounter_deleted, sender=Encounter, dispatch_uid="live-wake-encounter")
