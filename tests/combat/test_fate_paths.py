"""Every Fate path through the API, as a player spends it: re-roll and revoke, of a hit and of
a miss, of each strike against the defense that meets it (a mighty strike parried, a fast one
dodged, a precise one blocked), of a maneuver (a throw dodged, a feint met with Focus), of a
counterattack and of a Stamina test (docs/rules.md, "Fate").

A revoke leaves the fight as it was before the roll, the attack called off and one Fate spent.
A re-roll leaves it exactly as a first roll of the new number would have (played on the same
rows inside a savepoint, then rolled back), one Fate spent; the log keeps the first roll,
reverted by the Fate entry, and adds the new roll after it, with the same PvD.

Issue 39: a re-roll of one's own miss answered 409 "The targeted zone no longer exists." The
re-roll locked only the rows the first roll had changed, and a miss changed nothing of the
target's: its zone, its disciplines (its defense) and its sheet were not among the rows the
new roll was resolved on. Marked both_databases: it runs on PostgreSQL in ``make test``,
where the rows are the ones the service locked."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.db import transaction
from django.urls import reverse

from combat import services
from combat.models import CombatLogEntry, Declaration
from tests.combat.helpers import snapshot
from tests.factories import Fight
from tests.fight_steps import declare_and_defend

pytestmark = [pytest.mark.django_db, pytest.mark.both_databases]

HIT, MISS = 52, 3  # a plain success and a plain failure against every PvD below


class _Rollback(Exception):
    pass


@dataclass
class Roll:
    """A roll waiting for Fate: the attack, its first roll, and the fight just before it."""

    decl: Declaration
    entry: CombatLogEntry
    before: dict[str, Any]
    fight: Fight


def _ready(fight: Fight, kind: str) -> Declaration:
    """The attack of ``kind``, declared and defended, waiting for its roll: Ysolde's (her
    player's) on the thug, or her counterattack after the thug's parried miss."""
    gm, player = fight.table.gm, fight.table.player
    y, t = fight.ysolde, fight.thug
    if kind == "counterattack":
        services.strike(
            encounter=fight.encounter,
            attacker=t,
            target=y,
            action="mighty",
            zone=fight.zone(y, "chest"),
            weapon=fight.weapon(t),
            defense="parry",
            roll=MISS,
            actor=gm,
        )
        fight.refresh()
        assert fight.ysolde.counterattacks == 1
        return declare_and_defend(
            fight.encounter, y, t, actor=player, defender=gm, defense="dodge", counterattack=True
        )
    if kind == "feint":
        decl, _ = services.declare_attack(
            encounter=fight.encounter, attacker=y, target=t, action="feint", actor=player
        )
        return decl
    action, defense = {
        "mighty": ("mighty", "parry"),
        "fast": ("fast", "dodge"),
        "precise": ("precise", "block"),
        "throw": ("throw", "dodge"),
    }[kind]
    return declare_and_defend(
        fight.encounter, y, t, actor=player, defender=gm, action=action, defense=defense
    )


def _landed(entry: CombatLogEntry) -> bool:
    """A strike that hit, or a maneuver that succeeded."""
    result = entry.payload["result"]
    return bool(result["hits"]) if "maneuver" not in result else bool(result["success"])


def _rolled(fight: Fight, kind: str, value: int) -> Roll:
    decl = _ready(fight, kind)
    before = snapshot(fight.encounter)
    entry = services.resolve(declaration=decl.pk, roll=value, actor=fight.table.player)
    assert _landed(entry) == (value == HIT), entry.text  # the case is the one it says
    return Roll(decl, entry, before, fight)


def _as_a_first_roll(r: Roll, value: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The fight, and the roll's result, had the attack been rolled ``value`` in the first
    place: undone and played again on the same rows, then rolled back."""
    out: tuple[dict[str, Any], dict[str, Any]] | None = None
    try:
        with transaction.atomic():
            services.undo_last(encounter=r.fight.encounter, actor=r.fight.table.gm)
            entry = services.resolve(declaration=r.decl.pk, roll=value, actor=r.fight.table.gm)
            out = snapshot(r.fight.encounter), entry.payload["result"]
            raise _Rollback
    except _Rollback:
        pass
    assert out is not None
    return out


def _fate_spent(state: dict[str, Any], fight: Fight) -> dict[str, Any]:
    """``state`` with one Fate less on Ysolde's sheet (the snapshot lists sheets by pk)."""
    pks = sorted(
        p.character_id for p in fight.encounter.participants.only("character_id").order_by()
    )
    characters = [dict(c) for c in state["characters"]]
    characters[pks.index(fight.ysolde.character_id)]["fate"] -= 1
    return {**state, "characters": characters}


def _spend(fight: Fight, api_for: Callable[[Any], Any], entry: CombatLogEntry, **body: Any) -> Any:
    client = api_for(fight.table.player)
    return client.post(
        f"/api/rolls/{entry.pk}/fate/",
        {"spender": fight.ysolde.pk, **body},
        format="json",
    )


KINDS = ["mighty", "fast", "precise", "throw", "feint", "counterattack"]


@pytest.mark.parametrize("first", [HIT, MISS], ids=["hit", "miss"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_reroll_replaces_the_roll_as_if_it_were_the_first(fight, api_for, kind, first):
    r = _rolled(fight, kind, first)
    again = MISS if first == HIT else HIT
    expected, result = _as_a_first_roll(r, again)
    response = _spend(fight, api_for, r.entry, action="reroll", roll=again)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["fate"]["reverts"] == r.entry.pk and body["fate"]["kind"] == "fate"
    new = CombatLogEntry.objects.get(pk=body["reroll"]["id"])
    assert new.kind == "roll" and new.roll == again and new.physical
    assert new.payload["reroll_of"] == r.entry.pk and new.declaration_id == r.decl.pk
    first_result = r.entry.payload["result"]
    assert (new.payload["result"]["pro"], new.payload["result"]["dif"]) == (
        first_result["pro"],
        first_result["dif"],
    )
    assert new.payload["result"] == result
    assert _landed(new) == (again == HIT)
    assert services.latest_roll(fight.encounter) == new
    assert snapshot(fight.encounter) == _fate_spent(expected, fight)


@pytest.mark.parametrize("first", [HIT, MISS], ids=["hit", "miss"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_revoke_takes_the_roll_back_and_calls_the_attack_off(fight, api_for, kind, first):
    r = _rolled(fight, kind, first)
    response = _spend(fight, api_for, r.entry, action="revoke")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["reroll"] is None and body["fate"]["reverts"] == r.entry.pk
    r.decl.refresh_from_db()
    assert r.decl.status == Declaration.Status.CANCELLED
    expected = _fate_spent(r.before, fight)
    expected["open"] = [d for d in expected["open"] if d["pk"] != r.decl.pk]
    assert snapshot(fight.encounter) == expected
    # Revoked: the roll before it is out of reach, and this one cannot be spent on again.
    assert services.latest_roll(fight.encounter) != r.entry
    assert _spend(fight, api_for, r.entry, action="revoke").status_code == 409


# --- The fight page ----------------------------------------------------------------------

HX = {"HTTP_HX_REQUEST": "true"}


def _region(page: str, start: str) -> str:
    """The ``<section>`` of the page that opens with ``start`` in its tag, up to its end."""
    match = re.search(rf"<section[^>]*{re.escape(start)}[^>]*>.*?</section>", page, re.S)
    assert match is not None, f"no section {start!r}"
    return match.group(0)


def _page_fate(fight: Fight, client: Any, entry: CombatLogEntry, **data: Any) -> Any:
    url = reverse("combat:roll_fate", args=[entry.pk])
    return client.post(url, {"spender": fight.ysolde.pk, **data}, **HX)


def test_the_page_rerolls_ones_own_miss(fight, client_for):
    r = _rolled(fight, "mighty", MISS)
    response = _page_fate(fight, client_for(fight.table.player), r.entry, action="reroll", roll=HIT)
    assert response.status_code == 200
    card = _region(response.content.decode(), 'data-testid="result-card"')
    assert "Re-roll: Ysolde Varr mighty strike at Salvager Thug #1" in card
    fight.refresh()
    assert fight.ysolde.character.fate == 0
    assert fight.zone(fight.thug, "chest").wounds > 0


def test_a_refused_fate_spend_is_told_in_the_result_card_it_was_made_from(fight, client_for):
    type(fight.ysolde.character).objects.filter(pk=fight.ysolde.character_id).update(fate=2)
    r = _rolled(fight, "mighty", MISS)
    player = client_for(fight.table.player)
    assert _page_fate(fight, player, r.entry, action="reroll", roll=HIT).status_code == 200
    # The same button pressed again, from the page as it was: the roll is no longer the latest.
    again = _page_fate(fight, player, r.entry, action="reroll", roll=HIT)
    assert again.status_code == 409
    page = again.content.decode()
    card = _region(page, 'data-testid="result-card"')
    assert "Only the latest roll can be re-rolled or revoked." in card
    assert 'data-testid="fate-error"' in card and 'data-testid="fate-reroll"' in card
    assert 'data-testid="error"' not in page and page.count("Only the latest roll") == 1
    fight.refresh()
    assert fight.ysolde.character.fate == 1  # one spend, not two


def test_a_refused_fate_spend_is_told_in_the_fate_section_once_the_turn_moved_on(fight, client_for):
    r = _rolled(fight, "mighty", MISS)
    services.next_turn(encounter=fight.encounter, actor=fight.table.gm)
    player = client_for(fight.table.player)
    refused = _page_fate(fight, player, r.entry, action="reroll", roll=0)
    assert refused.status_code == 422
    page = refused.content.decode()
    assert 'data-testid="result-card"' not in page  # the latest entry is the turn, not a roll
    section = _region(page, 'aria-labelledby="fate-heading"')
    assert "A d100 roll is a whole number from 1 to 100" in section
    assert 'data-testid="fate-error"' in section and 'data-testid="error"' not in page
    fight.refresh()
    assert fight.ysolde.character.fate == 1
    assert services.latest_roll(fight.encounter) == r.entry


def test_a_refusal_with_no_fate_form_left_on_the_page_stays_above_the_tracker(fight, client_for):
    r = _rolled(fight, "mighty", MISS)
    services.finish_encounter(encounter=fight.encounter, actor=fight.table.gm)
    refused = _page_fate(fight, client_for(fight.table.player), r.entry, action="revoke")
    assert refused.status_code == 422
    page = refused.content.decode()
    assert 'data-testid="result-card"' not in page and 'aria-labelledby="fate-heading"' not in page
    assert re.search(r'data-testid="error">The fight is over', page)


# --- A Stamina test --------------------------------------------------------------------------

STAMINA_DIF = 30  # the GM's Ambitious: a re-roll keeps it (Ysolde's STM 8: 90v30, the thug's 6)


def _tested(fight: Fight, who: str, value: int) -> tuple[CombatLogEntry, dict[str, Any]]:
    """A grievous wound (the GM's, past BZF) on Ysolde or the thug, then its Stamina test
    rolled ``value`` by the GM against Ambitious 30; the fight just before the test."""
    p = fight.ysolde if who == "ysolde" else fight.thug
    services.adjust_zone(
        encounter=fight.encounter,
        zone=fight.zone(p, "chest"),
        amount=p.character.bzf + 1,
        actor=fight.table.gm,
    )
    before = snapshot(fight.encounter)
    entry = services.stamina_check(
        participant=p, roll=value, difficulty=STAMINA_DIF, actor=fight.table.gm
    )
    assert entry.payload["result"]["success"] == (value == HIT), entry.text
    return entry, before


def _as_a_first_test(fight: Fight, who: str, value: int) -> tuple[dict[str, Any], dict[str, Any]]:
    p = fight.ysolde if who == "ysolde" else fight.thug
    out: tuple[dict[str, Any], dict[str, Any]] | None = None
    try:
        with transaction.atomic():
            services.undo_last(encounter=fight.encounter, actor=fight.table.gm)
            entry = services.stamina_check(
                participant=p, roll=value, difficulty=STAMINA_DIF, actor=fight.table.gm
            )
            out = snapshot(fight.encounter), entry.payload["result"]
            raise _Rollback
    except _Rollback:
        pass
    assert out is not None
    return out


@pytest.mark.parametrize("first", [HIT, MISS], ids=["passed", "failed"])
@pytest.mark.parametrize("who", ["ysolde", "thug"])
def test_a_reroll_tests_stamina_again_against_the_same_dif(fight, api_for, who, first):
    entry, _ = _tested(fight, who, first)
    again = MISS if first == HIT else HIT
    expected, result = _as_a_first_test(fight, who, again)
    response = _spend(fight, api_for, entry, action="reroll", roll=again)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["fate"]["reverts"] == entry.pk
    new = CombatLogEntry.objects.get(pk=body["reroll"]["id"])
    assert new.kind == "stamina" and new.roll == again
    assert new.payload["reroll_of"] == entry.pk and new.participant_id == entry.participant_id
    assert new.payload["result"]["dif"] == entry.payload["result"]["dif"] == STAMINA_DIF
    assert new.payload["result"] == result
    assert services.latest_roll(fight.encounter) == new
    assert snapshot(fight.encounter) == _fate_spent(expected, fight)
    # The GM's undo takes the re-roll and its Fate spend back together.
    services.undo_last(encounter=fight.encounter, actor=fight.table.gm)
    assert services.latest_roll(fight.encounter) == entry


@pytest.mark.parametrize("first", [HIT, MISS], ids=["passed", "failed"])
@pytest.mark.parametrize("who", ["ysolde", "thug"])
def test_a_revoke_voids_the_stamina_test_and_leaves_it_spent(fight, api_for, who, first):
    entry, before = _tested(fight, who, first)
    response = _spend(fight, api_for, entry, action="revoke")
    assert response.status_code == 200, response.content
    assert response.json()["reroll"] is None
    expected = _fate_spent(before, fight)
    p = fight.ysolde if who == "ysolde" else fight.thug
    rows = expected["participants"]
    index = sorted(x.pk for x in (fight.ysolde, fight.thug)).index(p.pk)
    assert rows[index]["stamina_due"] and rows[index]["state"] == "active"
    rows[index] = {**rows[index], "stamina_due": False}  # spent: not due again
    assert snapshot(fight.encounter) == expected


def test_the_page_offers_fate_on_a_stamina_test_in_its_result_card(fight, client_for):
    entry, _ = _tested(fight, "ysolde", MISS)
    player = client_for(fight.table.player)
    card = _region(player.get(fight.encounter.get_absolute_url()).content.decode(), "result-card")
    assert 'data-testid="fate-reroll"' in card
    response = _page_fate(fight, player, entry, action="reroll", roll=HIT)
    assert response.status_code == 200
    card = _region(response.content.decode(), 'data-testid="result-card"')
    assert "Re-roll: Ysolde Varr&#x27;s Stamina test against Ambitious 30" in card
    fight.refresh()
    assert fight.ysolde.state == "active" and not fight.ysolde.stamina_due
