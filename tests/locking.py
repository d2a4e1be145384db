"""Helpers of the PostgreSQL lock and race tests: threads that act as users, a side held inside
its transaction until the other is seen waiting for a lock, probes of which rows are locked,
and the ways a GM deletes a campaign with its fight (docs/testing.md, "Making a race happen
for sure")."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.db import DatabaseError, connection, transaction
from django.db.models import Model
from django.db.models.signals import pre_delete
from django.test import Client
from rest_framework.test import APIClient

from combat.models import CombatLogEntry, Declaration, Encounter, Participant
from sheets.models import BodyZone, Campaign, Character
from tests.factories import PASSWORD, Fight

WAIT = 30  # seconds: far more than any step here takes; a stuck thread fails the test


# --- Threads, their answers, and the locks they wait for ----------------------------------


@dataclass
class Outcomes:
    """What each thread's calls answered, and every failure, as ``(who, status)``."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    statuses: list[tuple[str, int]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def run(self, who: str, call: Callable[[], Any]) -> None:
        try:
            status = call().status_code
            with self.lock:
                self.statuses.append((who, status))
        except Exception as exc:  # a 500, a deadlock: every failure fails the test
            with self.lock:
                self.errors.append(f"{who}: {type(exc).__name__}: {exc}")
        finally:
            connection.close()

    def of(self, who: str) -> list[int]:
        return [status for name, status in self.statuses if name == who]


def start_thread(target: Callable[..., None], *args: Any) -> threading.Thread:
    thread = threading.Thread(target=target, args=args, daemon=True)
    thread.start()
    return thread


def join(*threads: threading.Thread) -> None:
    for t in threads:
        t.join(WAIT)
    assert not any(t.is_alive() for t in threads), "a thread is stuck (a lock never released?)"


def wait_for_a_lock_waiter(thread: threading.Thread) -> None:
    """Until another session waits for a lock (the thread queued behind the one held), or
    the thread is done without waiting (the order a deletion used to allow), from this
    thread's own connection."""
    deadline = time.monotonic() + WAIT
    with connection.cursor() as cursor:
        while thread.is_alive():
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND datname = current_database() AND pid <> pg_backend_pid()"
            )
            (waiting,) = cursor.fetchone()
            if waiting:
                return
            assert time.monotonic() < deadline, "nobody came to wait for the lock"
            time.sleep(0.02)


def waiting_for_a_lock() -> bool:
    """Whether any session waits for a lock it has not been granted."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks WHERE NOT granted")
        row = cursor.fetchone()
        return bool(row and row[0] > 0)


def locked(model: Any, pk: int) -> bool:
    """Whether another transaction holds a lock on the row that FOR UPDATE would wait for."""
    try:
        with transaction.atomic():
            model.objects.select_for_update(nowait=True).get(pk=pk)
    except DatabaseError:
        return True
    return False


# --- Users' clients -----------------------------------------------------------------------


def web(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def api(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


# --- A campaign deleted with its fight, each way its GM can -------------------------------


def delete_campaign_page(fight: Fight) -> Any:
    return web(fight.table.gm).post(f"/campaigns/{fight.table.campaign.pk}/delete/")


def delete_campaign_api(fight: Fight) -> Any:
    return api(fight.table.gm).delete(f"/api/campaigns/{fight.table.campaign.pk}/")


def delete_gm_account(fight: Fight) -> Any:
    """The GM leaves for good, with the campaign they run (typed out) and its fight."""
    campaigns = Campaign.objects.filter(gm=fight.table.gm).values_list("pk", "name")
    typed = {f"campaign_{pk}": name for pk, name in campaigns}
    return web(fight.table.gm).post("/account/delete/", {"password": PASSWORD, **typed})


#: Each way of deleting, and its answer.
DELETIONS: dict[str, tuple[Callable[[Fight], Any], int]] = {
    "campaign page": (delete_campaign_page, 302),
    "campaign API": (delete_campaign_api, 204),
    "GM's account": (delete_gm_account, 302),
}


@contextmanager
def deletion_held(fight: Fight, how: str, outcomes: Outcomes) -> Iterator[threading.Event]:
    """The deletion, stopped inside its transaction as it starts deleting rows (after every
    lock it takes first), until the event."""
    delete, _ = DELETIONS[how]
    with paused_deleting(Encounter, fight, delete, outcomes) as release:
        yield release


@contextmanager
def paused_deleting(
    model: type[Model], fight: Fight, delete: Callable[[Fight], Any], outcomes: Outcomes
) -> Iterator[threading.Event]:
    """``delete`` run in a thread of its own, stopped inside its transaction as it starts
    deleting a ``model`` row, until the event."""
    reached, release = threading.Event(), threading.Event()
    deleter_thread: list[threading.Thread] = []

    def pause(sender: Any, **kwargs: Any) -> None:
        if threading.current_thread() in deleter_thread and not reached.is_set():
            reached.set()
            assert release.wait(WAIT)

    uid = f"test_pause_deleting_{model.__name__}"
    pre_delete.connect(pause, sender=model, dispatch_uid=uid)
    try:
        deleter_thread.append(start_thread(outcomes.run, "delete", lambda: delete(fight)))
        assert reached.wait(WAIT)
        yield release
    finally:
        release.set()
        join(*deleter_thread)
        pre_delete.disconnect(sender=model, dispatch_uid=uid)


def sheet_ids(fight: Fight) -> list[int]:
    """The ids of the campaign's sheets, read before anything is deleted."""
    return list(
        Character.objects.filter(campaign=fight.table.campaign).values_list("pk", flat=True)
    )


def nothing_left(fight: Fight, characters: list[int]) -> None:
    """The deletion is whole: no campaign, fight, participant, attack, log entry or sheet."""
    assert not Campaign.objects.filter(pk=fight.table.campaign.pk).exists()
    assert not Encounter.objects.filter(pk=fight.encounter.pk).exists()
    assert not Participant.objects.filter(encounter_id=fight.encounter.pk).exists()
    assert not Declaration.objects.filter(encounter_id=fight.encounter.pk).exists()
    assert not CombatLogEntry.objects.filter(encounter_id=fight.encounter.pk).exists()
    assert not Character.objects.filter(pk__in=characters).exists()
    assert not BodyZone.objects.filter(character_id__in=characters).exists()
