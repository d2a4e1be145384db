"""All or nothing in a fight: a combat action that fails halfway leaves the database exactly as
it was (participants, zones and wounds, weapons, sheets, declarations, the log) and sends no
live event.

Each action is a real request (the API, and the pages for a few) in a fight from
tests/combat/conftest.py. A failure is injected late: when the action's combat log entry is
written (every row the action changes has been saved by then), when the entry is handed to the
live feed, or halfway through saving the rows (a character's save, after the zones). The
injected failure first checks that the database has really changed at that point, so the test
proves a rollback rather than an action that had not started. Without the failure, the same
request succeeds.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client

from combat import events
from combat import services as combat
from combat.models import CombatLogEntry, Declaration, Participant
from sheets.models import Character
from tests import fight_steps
from tests.factories import Fight, make_fight
from tests.security.pages import snapshot

pytestmark = pytest.mark.django_db


class Injected(Exception):
    """The failure a test injects."""


@pytest.fixture
def fight(table: Any) -> Fight:
    """tests/combat's fight: Ysolde (the player's, ITV 14) against one hidden thug copy."""
    return make_fight(table)


@dataclass(frozen=True)
class Request:
    who: str  # "gm" or "player" (the fight's table)
    url: str
    body: dict[str, Any]
    api: bool = True

    def client(self, f: Fight) -> Client:
        client = Client()
        client.force_login(getattr(f.table, self.who))  # before any snapshot: it writes
        return client

    def send(self, client: Client) -> Any:
        if self.api:
            return client.post(self.url, json.dumps(self.body), content_type="application/json")
        return client.post(self.url, self.body)


def _p(participant: Participant) -> Participant:
    return Participant.objects.select_related("character", "encounter__campaign").get(
        pk=participant.pk
    )


def ready_attack(f: Fight) -> Declaration:
    """Ysolde's mighty strike at the thug's chest, parried: waiting for her roll."""
    return fight_steps.declare_and_defend(
        f.encounter, _p(f.ysolde), _p(f.thug), actor=f.table.player, defender=f.table.gm
    )


def rolled(f: Fight) -> CombatLogEntry:
    """The roll resolved: 20 damage on the thug's chest, Vitality lost."""
    return combat.resolve(declaration=ready_attack(f), roll=43, actor=f.table.player)


def wounded(f: Fight) -> None:
    """14 wounds on Ysolde's head (BZF 12): Vitality lost, grievous, a Stamina test due."""
    combat.adjust_zone(
        encounter=f.encounter, zone=f.zone(f.ysolde, "head"), amount=14, actor=f.table.gm
    )


def roll_api(f: Fight) -> Request:
    return Request("player", f"/api/attacks/{ready_attack(f).pk}/roll/", {"roll": 43})


def roll_page(f: Fight) -> Request:
    return Request("player", f"/attacks/{ready_attack(f).pk}/roll/", {"roll": "43"}, api=False)


def fate_reroll(f: Fight) -> Request:
    body = {"action": "reroll", "roll": 90, "spender": f.ysolde.pk}
    return Request("player", f"/api/rolls/{rolled(f).pk}/fate/", body)


def fate_revoke(f: Fight) -> Request:
    body = {"action": "revoke", "spender": f.ysolde.pk}
    return Request("player", f"/api/rolls/{rolled(f).pk}/fate/", body)


def fate_page(f: Fight) -> Request:
    body = {"action": "reroll", "roll": "90", "spender": str(f.ysolde.pk)}
    return Request("player", f"/rolls/{rolled(f).pk}/fate/", body, api=False)


def undo_api(f: Fight) -> Request:
    rolled(f)
    return Request("gm", f"/api/encounters/{f.encounter.pk}/undo/", {})


def undo_page(f: Fight) -> Request:
    rolled(f)
    return Request("gm", f"/encounters/{f.encounter.pk}/undo/", {}, api=False)


def damage_api(f: Fight) -> Request:
    body = {"zone": f.zone(f.ysolde, "head").pk, "amount": 14}
    return Request("gm", f"/api/encounters/{f.encounter.pk}/adjust/", body)


def damage_page(f: Fight) -> Request:
    body = {"zone": str(f.zone(f.ysolde, "head").pk), "amount": "14"}
    return Request("gm", f"/encounters/{f.encounter.pk}/zones/adjust/", body, api=False)


def healing(f: Fight) -> Request:
    wounded(f)
    body = {"zone": f.zone(f.ysolde, "head").pk, "amount": -13}
    return Request("gm", f"/api/encounters/{f.encounter.pk}/adjust/", body)


def stamina(f: Fight) -> Request:
    wounded(f)
    return Request("player", f"/api/participants/{f.ysolde.pk}/stamina/", {"roll": 95})


def declare(f: Fight) -> Request:
    body = {
        "attacker": f.ysolde.pk,
        "target": f.thug.pk,
        "zone": f.zone(f.thug, "chest").pk,
        "weapon": f.weapon(f.ysolde).pk,
        "action": "mighty",
    }
    return Request("player", f"/api/encounters/{f.encounter.pk}/attacks/", body)


def defend(f: Fight) -> Request:
    decl = fight_steps.declare(
        f.encounter, _p(f.thug), _p(f.ysolde), action="fast", actor=f.table.gm
    )
    return Request("player", f"/api/attacks/{decl.pk}/defense/", {"defense": "dodge"})


def npc_copies(f: Fight) -> Request:
    body = {"npc": f.npc.pk, "count": 3, "hidden": True}
    return Request("gm", f"/api/encounters/{f.encounter.pk}/participants/", body)


def next_turn(f: Fight) -> Request:
    return Request("player", f"/api/encounters/{f.encounter.pk}/next-turn/", {})


def finish(f: Fight) -> Request:
    declare(f)  # an open attack, cancelled by the finish
    ready_attack(f)
    return Request("gm", f"/api/encounters/{f.encounter.pk}/finish/", {})


def start(f: Fight) -> Request:
    encounter, _ = combat.create_encounter(
        campaign=f.table.campaign, name="Bridge", actor=f.table.gm
    )
    combat.add_participants(
        encounter=encounter, characters=[f.ysolde.character, f.npc], actor=f.table.gm
    )
    return Request("gm", f"/api/encounters/{encounter.pk}/start/", {})


#: name -> (the request, how many log entries it writes: the failure hits the last one)
ACTIONS: dict[str, tuple[Callable[[Fight], Request], int]] = {
    "attack roll (API)": (roll_api, 1),
    "attack roll (page)": (roll_page, 1),
    "Fate re-roll": (fate_reroll, 2),
    "Fate revoke": (fate_revoke, 1),
    "Fate re-roll (page)": (fate_page, 2),
    "undo (API)": (undo_api, 1),
    "undo (page)": (undo_page, 1),
    "manual damage (API)": (damage_api, 1),
    "manual damage (page)": (damage_page, 1),
    "healing": (healing, 1),
    "Stamina test": (stamina, 1),
    "declare an attack": (declare, 1),
    "defense": (defend, 1),
    "NPC copies": (npc_copies, 1),
    "next turn": (next_turn, 1),
    "finish": (finish, 1),
    "start": (start, 1),
}


def breaking(before: dict[str, Any], seen: list[list[str]], real: Any = None, after: int = 0):
    """A stand-in that lets ``after`` calls through to ``real``, then records which tables the
    action had changed so far and raises."""
    calls = 0

    def fail(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls <= after:
            return real(*args, **kwargs)
        now = snapshot()
        seen.append(sorted(label for label in now if now[label] != before.get(label)))
        raise Injected

    return fail


def run_broken(f: Fight, request: Request, patch: Callable[[dict[str, Any], list], None]) -> None:
    client = request.client(f)
    before = snapshot()
    seen: list[list[str]] = []
    patch(before, seen)
    with pytest.raises(Injected):
        request.send(client)
    assert seen and seen[0], "the failure came before the action wrote anything"
    assert snapshot() == before


@pytest.mark.parametrize("action", ACTIONS)
def test_it_keeps_the_fight_when_the_log_entry_fails(
    fight, action, monkeypatch, django_capture_on_commit_callbacks
):
    make, entries = ACTIONS[action]
    request = make(fight)

    def patch(before: dict[str, Any], seen: list) -> None:
        save = breaking(before, seen, CombatLogEntry.save, after=entries - 1)
        monkeypatch.setattr(CombatLogEntry, "save", save)

    with django_capture_on_commit_callbacks() as callbacks:
        run_broken(fight, request, patch)
    assert callbacks == []  # nothing reaches the live feed
    monkeypatch.undo()
    response = request.send(request.client(fight))
    assert response.status_code in (200, 201, 302), response.content
    assert CombatLogEntry.objects.filter(encounter__campaign=fight.table.campaign).exists()


@pytest.mark.parametrize("action", ACTIONS)
def test_it_keeps_the_fight_when_the_live_event_fails(fight, action, monkeypatch):
    make, _ = ACTIONS[action]
    request = make(fight)
    run_broken(
        fight,
        request,
        lambda before, seen: monkeypatch.setattr(events, "publish", breaking(before, seen)),
    )


#: Actions whose rows include a character's sheet, saved after other rows (the declaration,
#: a zone's wounds): the failure lands between them. The number is how many sheet saves go
#: through first (a re-roll saves the reverted sheets, then the new roll's).
SHEET_ACTIONS = {
    "attack roll (API)": 0,
    "Fate re-roll": 1,
    "Fate revoke": 0,
    "undo (API)": 0,
    "manual damage (API)": 0,
    "healing": 0,
}


@pytest.mark.parametrize("action", SHEET_ACTIONS)
def test_it_keeps_the_fight_when_a_sheet_save_fails_halfway(fight, action, monkeypatch):
    make, _ = ACTIONS[action]
    request = make(fight)

    def patch(before: dict[str, Any], seen: list) -> None:
        save = breaking(before, seen, Character.save, after=SHEET_ACTIONS[action])
        monkeypatch.setattr(Character, "save", save)

    run_broken(fight, request, patch)


def test_it_really_changed_wounds_and_vitality_before_the_failure(fight, monkeypatch):
    """The roll's failure comes after the thug's chest took its 20 wounds: those are what the
    rollback takes back."""
    request = roll_api(fight)
    client = request.client(fight)
    chest = fight.zone(fight.thug, "chest")
    before = snapshot()
    seen: list[list[str]] = []
    wounds_then: list[int] = []

    def fail(*args: Any, **kwargs: Any) -> None:
        wounds_then.append(type(chest).objects.get(pk=chest.pk).wounds)
        breaking(before, seen)()

    monkeypatch.setattr(CombatLogEntry, "save", fail)
    with pytest.raises(Injected):
        request.send(client)
    assert wounds_then == [20]
    assert {"sheets.BodyZone", "sheets.Character", "combat.Declaration"} <= set(seen[0])
    assert fight.zone(fight.thug, "chest").wounds == 0
    assert snapshot() == before
