"""A campaign, an account or a sheet deleted while its fight is played, on PostgreSQL.

Deleting used to collect the campaign's rows first and delete them after, taking locks in an
order of its own: a strike or the GM's damage committed in between left log entries pointing
at the deleted encounter (``IntegrityError ... still referenced from table
"combat_combatlogentry"`` at COMMIT, and nothing deleted), or the two deadlocked (the action
holding the encounter and waiting for a sheet the deletion held, and the other way round).

A deletion now takes the fight's locks first, in the documented order (the encounters, then
the campaign, then the sheets; combat/services/rows.py), so it waits for an action in
progress and deletes everything it left, and an action that comes after it answers 404.

The first tests make each order happen for sure, holding one side inside its transaction
until the other is seen waiting for a lock (``pg_stat_activity``); the last one races strikes
and damage against each way of deleting, as the issue's probe did.
"""

from __future__ import annotations

import itertools
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.db.models.signals import pre_delete

from combat import services
from combat.models import CombatLogEntry, Declaration, Encounter, Participant
from sheets.models import BodyZone, Character
from tests.factories import PASSWORD, Fight, make_campaign, make_fight, make_user
from tests.locking import (
    DELETIONS,
    WAIT,
    Outcomes,
    api,
    delete_campaign_api,
    deletion_held,
    join,
    nothing_left,
    paused_deleting,
    sheet_ids,
    start_thread,
    wait_for_a_lock_waiter,
    web,
)

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _actions(fight: Fight, roll: int = 50) -> dict[str, Callable[[], Any]]:
    """The GM's whole strike of the thug on Ysolde (table dice: ``roll`` 5 misses, so she
    can be struck again and again), and the GM's damage to the thug's chest, one wound then
    healed, and so on (he never goes down); as the API takes them, with ids read now,
    before anything is deleted."""
    url = f"/api/encounters/{fight.encounter.pk}"
    strike = {
        "attacker": fight.thug.pk,
        "target": fight.ysolde.pk,
        "zone": fight.zone(fight.ysolde, "chest").pk,
        "weapon": fight.thug.character.weapons.get().pk,
        "action": "fast",
        "defense": "dodge",
        "roll": roll,
    }
    chest = fight.zone(fight.thug, "chest").pk
    amounts = itertools.cycle([1, -1])
    gm = fight.table.gm

    def adjust() -> Any:
        body = {"zone": chest, "amount": next(amounts)}
        return api(gm).post(f"{url}/adjust/", body, format="json")

    return {
        "strike": lambda: api(gm).post(f"{url}/strike/", strike, format="json"),
        "adjust": adjust,
    }


@pytest.fixture
def fight(table: Any) -> Fight:
    return make_fight(table)


# --- An action in progress: the deletion waits for it, then deletes all it left -------------


@contextmanager
def _action_held(fight: Fight, outcomes: Outcomes) -> Iterator[threading.Event]:
    """The GM's damage, done and held uncommitted (its locks with it) until the event."""
    held, release = threading.Event(), threading.Event()

    def act() -> None:
        try:
            with transaction.atomic():
                chest = fight.zone(fight.thug, "chest")
                services.adjust_zone(
                    encounter=fight.encounter, zone=chest, amount=2, actor=fight.table.gm
                )
                held.set()
                assert release.wait(WAIT)
            with outcomes.lock:
                outcomes.statuses.append(("action", 200))
        except Exception as exc:
            with outcomes.lock:
                outcomes.errors.append(f"action: {type(exc).__name__}: {exc}")
        finally:
            held.set()
            connection.close()

    thread = start_thread(act)
    assert held.wait(WAIT)
    try:
        yield release
    finally:
        release.set()
        join(thread)


@pytest.mark.parametrize("how", sorted(DELETIONS))
def test_a_deletion_waits_for_the_action_in_progress_then_deletes_everything(fight, how):
    delete, deleted = DELETIONS[how]
    sheets = sheet_ids(fight)
    outcomes = Outcomes()
    with _action_held(fight, outcomes) as release:
        deleter = start_thread(outcomes.run, "delete", lambda: delete(fight))
        wait_for_a_lock_waiter(deleter)
        release.set()
        join(deleter)
    assert outcomes.errors == []
    assert outcomes.of("action") == [200]
    assert outcomes.of("delete") == [deleted]
    nothing_left(fight, sheets)


# --- A deletion in progress: the action waits for it, then finds nothing: 404 ---------------


@pytest.mark.parametrize("action", ["strike", "adjust"])
@pytest.mark.parametrize("how", sorted(DELETIONS))
def test_an_action_behind_a_deletion_waits_and_is_not_found(fight, how, action):
    sheets = sheet_ids(fight)
    _, deleted = DELETIONS[how]
    call = _actions(fight)[action]
    outcomes = Outcomes()
    with deletion_held(fight, how, outcomes) as release:
        actor = start_thread(outcomes.run, action, call)
        wait_for_a_lock_waiter(actor)
        release.set()
    join(actor)
    assert outcomes.errors == []
    assert outcomes.of("delete") == [deleted]
    assert outcomes.of(action) == [404]
    nothing_left(fight, sheets)


@pytest.mark.parametrize("action", ["strike", "adjust"])
def test_an_action_after_the_deletion_is_not_found(fight, action):
    sheets = sheet_ids(fight)
    call = _actions(fight)[action]
    assert delete_campaign_api(fight).status_code == 204
    response = call()
    assert response.status_code == 404, response.content
    nothing_left(fight, sheets)


# --- A sheet in the fight deleted (or handed over) while the fight goes on ------------------


def delete_player_account(fight: Fight, characters: str) -> Any:
    return web(fight.table.player).post(
        "/account/delete/", {"password": PASSWORD, "characters": characters}
    )


SHEET_DELETIONS: dict[str, tuple[Callable[[Fight], Any], int]] = {
    "player's account": (lambda f: delete_player_account(f, "delete"), 302),
    "character page": (
        lambda f: web(f.table.player).post(f"/characters/{f.ysolde.character_id}/delete/"),
        302,
    ),
    "character API": (
        lambda f: api(f.table.player).delete(f"/api/characters/{f.ysolde.character_id}/"),
        204,
    ),
}


@pytest.mark.parametrize("how", sorted(SHEET_DELETIONS))
def test_a_strike_behind_the_deletion_of_its_target_waits_then_finds_no_target(fight, how):
    """It is Ysolde's turn: deleting her used to wait for the fight (her turn is cleared on
    the encounter) while holding her sheet, which the strike holding the fight waited for:
    a deadlock. The fight is locked first now: the strike waits, then finds her gone."""
    delete, deleted = SHEET_DELETIONS[how]
    assert fight.encounter.turn_id == fight.ysolde.pk
    actions = _actions(fight)
    strike = actions["strike"]
    outcomes = Outcomes()
    with paused_deleting(Character, fight, delete, outcomes) as release:
        striker = start_thread(outcomes.run, "strike", strike)
        wait_for_a_lock_waiter(striker)
        release.set()
    join(striker)
    assert outcomes.errors == []
    assert outcomes.of("delete") == [deleted]
    assert outcomes.of("strike") == [400]
    assert not Character.objects.filter(pk=fight.ysolde.character_id).exists()
    assert not Participant.objects.filter(pk=fight.ysolde.pk).exists()
    # The fight goes on without her, with all its history.
    assert Encounter.objects.get(pk=fight.encounter.pk).status == Encounter.Status.RUNNING
    assert actions["adjust"]().status_code == 200


@pytest.mark.parametrize("how", sorted(SHEET_DELETIONS))
def test_the_deletion_of_a_sheet_waits_for_the_strike_on_it(fight, how):
    delete, deleted = SHEET_DELETIONS[how]
    log = CombatLogEntry.objects.filter(encounter=fight.encounter).count()
    outcomes = Outcomes()
    held, release = threading.Event(), threading.Event()

    def strike_held() -> None:
        try:
            with transaction.atomic():
                services.strike(
                    encounter=fight.encounter,
                    attacker=fight.thug,
                    target=fight.ysolde,
                    zone=fight.zone(fight.ysolde, "chest"),
                    weapon=fight.weapon(fight.thug),
                    action="fast",
                    defense="dodge",
                    roll=50,
                    actor=fight.table.gm,
                )
                held.set()
                assert release.wait(WAIT)
        except Exception as exc:
            with outcomes.lock:
                outcomes.errors.append(f"strike: {type(exc).__name__}: {exc}")
        finally:
            held.set()
            connection.close()

    striker = start_thread(strike_held)
    assert held.wait(WAIT)
    deleter = start_thread(outcomes.run, "delete", lambda: delete(fight))
    wait_for_a_lock_waiter(deleter)
    release.set()
    join(striker, deleter)
    assert outcomes.errors == []
    assert outcomes.of("delete") == [deleted]
    assert not Character.objects.filter(pk=fight.ysolde.character_id).exists()
    # The strike's three entries stay in the fight's history, without her participant.
    entries = CombatLogEntry.objects.filter(encounter=fight.encounter)
    assert entries.count() == log + 3
    assert not entries.filter(participant_id=fight.ysolde.pk).exists()


def test_a_strike_behind_a_player_leaving_their_sheet_to_the_gm_goes_on(fight):
    """Handed over, the sheet stays in the fight: the strike waits, then lands."""
    strike = _actions(fight)["strike"]
    outcomes = Outcomes()
    reached, release = threading.Event(), threading.Event()
    deleter_thread: list[threading.Thread] = []

    def pause(sender: Any, **kwargs: Any) -> None:
        if threading.current_thread() in deleter_thread and not reached.is_set():
            reached.set()
            assert release.wait(WAIT)

    # The account goes after the sheet is handed over, in the same transaction.
    pre_delete.connect(pause, sender=User, dispatch_uid="test_pause_account")
    try:
        deleter_thread.append(
            start_thread(outcomes.run, "delete", lambda: delete_player_account(fight, "give"))
        )
        assert reached.wait(WAIT)
        striker = start_thread(outcomes.run, "strike", strike)
        wait_for_a_lock_waiter(striker)
    finally:
        release.set()
        join(*deleter_thread)
        pre_delete.disconnect(sender=User, dispatch_uid="test_pause_account")
    join(striker)
    assert outcomes.errors == []
    assert outcomes.of("delete") == [302]
    assert outcomes.of("strike") == [201]
    ysolde = Character.objects.get(pk=fight.ysolde.character_id)
    assert ysolde.owner_id == fight.table.gm.pk
    assert ysolde.left_by_player


# --- Strikes and damage raced against each way of deleting, as the probe did --------

ROUNDS = 3  # per way of deleting


def _race(fight: Fight, delete: Callable[[Fight], Any], pause: float) -> Outcomes:
    """Strikes and damage sent over and over, until they are told the fight is gone, while
    the deletion starts after ``pause`` seconds."""
    outcomes = Outcomes()
    barrier = threading.Barrier(3)
    done = {"strike": 201, "adjust": 200}

    def until_not_found(who: str, call: Callable[[], Any]) -> None:
        barrier.wait(WAIT)
        for _ in range(100):
            outcomes.run(who, call)
            if outcomes.of(who)[-1:] != [done[who]]:
                return

    def deleting() -> None:
        barrier.wait(WAIT)
        time.sleep(pause)
        outcomes.run("delete", lambda: delete(fight))

    actions = _actions(fight, roll=5)
    join(
        start_thread(until_not_found, "strike", actions["strike"]),
        start_thread(until_not_found, "adjust", actions["adjust"]),
        start_thread(deleting),
    )
    return outcomes


@pytest.mark.parametrize("how", sorted(DELETIONS))
def test_strikes_and_damage_racing_a_deletion_never_answer_500(how):
    delete, deleted = DELETIONS[how]
    rng = random.Random(39)
    for round_ in range(ROUNDS):
        gm, player = make_user(), make_user()
        campaign = make_campaign(gm, players=(player,))
        fight = make_fight(SimpleNamespace(campaign=campaign, gm=gm, player=player))
        sheets = sheet_ids(fight)
        outcomes = _race(fight, delete, rng.uniform(0.0, 0.3))
        assert outcomes.errors == [], f"round {round_}"
        assert outcomes.of("delete") == [deleted]
        assert set(outcomes.of("strike")) <= {201, 404}
        assert set(outcomes.of("adjust")) <= {200, 404}
        assert outcomes.of("strike")[-1] == outcomes.of("adjust")[-1] == 404
        nothing_left(fight, sheets)


# --- A zone deleted from the sheet while an attack on it is being defended ------------------


ZONE_DELETIONS: dict[str, tuple[Callable[[Fight, BodyZone], Any], int]] = {
    "zone DELETE": (
        lambda f, zone: api(f.table.player).delete(
            f"/api/characters/{f.ysolde.character_id}/zones/{zone.pk}/"
        ),
        204,
    ),
    # Nested rows sent with the sheet replace its rows: its zones are deleted, then made anew.
    "sheet PATCH with zones": (
        lambda f, zone: api(f.table.player).patch(
            f"/api/characters/{f.ysolde.character_id}/",
            {"zones": [{"name": "head"}, {"name": "body"}]},
            format="json",
        ),
        200,
    ),
}


@pytest.mark.parametrize("how", sorted(ZONE_DELETIONS))
def test_a_zone_deleted_while_its_attack_is_defended_waits_for_the_defense(fight, how):
    """An attack points at its zone: deleting the zone deletes the attack. The defense
    holding the attack used to finish first and log an entry pointing at it, which the
    zone's deletion had not collected: IntegrityError at COMMIT, a 500."""
    delete, deleted = ZONE_DELETIONS[how]
    chest = fight.zone(fight.ysolde, "chest")
    decl, _ = services.declare_attack(
        encounter=fight.encounter,
        attacker=fight.thug,
        target=fight.ysolde,
        action="fast",
        zone=chest,
        weapon=fight.weapon(fight.thug),
        actor=fight.table.gm,
    )
    outcomes = Outcomes()
    held, release = threading.Event(), threading.Event()

    def defend_held() -> None:
        try:
            with transaction.atomic():
                services.declare_defense(declaration=decl, defense="dodge", actor=fight.table.gm)
                held.set()
                assert release.wait(WAIT)
        except Exception as exc:
            with outcomes.lock:
                outcomes.errors.append(f"defense: {type(exc).__name__}: {exc}")
        finally:
            held.set()
            connection.close()

    defender = start_thread(defend_held)
    assert held.wait(WAIT)
    deleter = start_thread(outcomes.run, "delete", lambda: delete(fight, chest))
    wait_for_a_lock_waiter(deleter)
    release.set()
    join(defender, deleter)
    assert outcomes.errors == []
    assert outcomes.of("delete") == [deleted]
    assert not BodyZone.objects.filter(pk=chest.pk).exists()
    assert not Declaration.objects.filter(pk=decl.pk).exists()
    # The attack's history stays, no longer pointing at it.
    kinds = CombatLogEntry.objects.filter(encounter=fight.encounter, declaration_id=None)
    assert {"declare", "defend"} <= set(kinds.values_list("kind", flat=True))


# --- A new fight made in a campaign being deleted -----------------------------------------


@pytest.mark.parametrize("how", sorted(DELETIONS))
def test_a_fight_created_behind_the_deletion_of_its_campaign_is_not_found(fight, how):
    """The new encounter points at its campaign: its INSERT went through while the deletion
    held the campaign, and its foreign key failed at COMMIT, after the deletion (a 500)."""
    sheets = sheet_ids(fight)
    _, deleted = DELETIONS[how]
    gm, campaign = fight.table.gm, fight.table.campaign.pk
    outcomes = Outcomes()
    with deletion_held(fight, how, outcomes) as release:
        creator = start_thread(
            outcomes.run,
            "create",
            lambda: api(gm).post(
                "/api/encounters/", {"campaign": campaign, "name": "Late"}, format="json"
            ),
        )
        wait_for_a_lock_waiter(creator)
        release.set()
    join(creator)
    assert outcomes.errors == []
    assert outcomes.of("delete") == [deleted]
    assert outcomes.of("create") == [404]
    assert not Encounter.objects.filter(campaign_id=campaign).exists()
    nothing_left(fight, sheets)
