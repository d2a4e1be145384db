"""Fate on a check outside combat, through its page route (``POST /checks/<id>/fate/``), as the
roller's player spends it: re-roll and revoke, of a success and of a failure, plain and epic
(docs/rules.md, "Fate"). Ysolde rolls SKL 4 against Moderate: 70v20.

A revoke takes the roll's EXP and Fate back and spends one Fate; a re-roll does the same,
then rolls again with the same PvD and applies the new roll's EXP and Fate. The first check
stays in the log, revoked by Ysolde. Marked both_databases, so ``make test`` runs it on
PostgreSQL as well (the combat paths: tests/combat/test_fate_paths.py)."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from checks.models import Check
from rules.engine import omg

pytestmark = [pytest.mark.django_db, pytest.mark.both_databases]

# A success, a failure, an epic success (+1 EXP, +1 Fate), an epic failure (+1 EXP, -1 Fate).
FIRST = {"success": 52, "failure": 3, "epic-success": 70, "epic-failure": 20}


def _owner(client: Any, table: Any) -> Any:
    client.force_login(table.owner)
    return client


def _sheet(table: Any) -> tuple[int, int]:
    c = table.fresh(table.ysolde)
    return c.fate, c.exp_marks


def _roll(client: Any, table: Any, value: int) -> Check:
    url = reverse("checks:check_roll", args=[table.ysolde.pk])
    data = {"kind": "aptitude", "aptitude": "SKL", "against": "Moderate", "roll": str(value)}
    assert client.post(url, data).status_code == 302
    check = Check.objects.get(campaign=table.campaign, status="active")
    assert (check.pro, check.dif, check.roll) == (70, 20, value)
    return check


def _fate(client: Any, table: Any, check: Check, **data: Any) -> Any:
    url = reverse("checks:check_fate", args=[check.pk])
    return client.post(url, {"spender": table.ysolde.pk, **data})


@pytest.mark.parametrize("first", FIRST.values(), ids=FIRST.keys())
def test_a_revoke_takes_the_checks_exp_and_fate_back(client, table, first):
    c = _owner(client, table)
    before = _sheet(table)
    check = _roll(c, table, first)
    assert _fate(c, table, check, action="revoke").status_code == 302
    check.refresh_from_db()
    assert check.status == "revoked" and check.fate_action == "revoke"
    assert check.fate_spender_id == table.ysolde.pk
    assert not Check.objects.filter(replaces=check).exists()
    assert _sheet(table) == (before[0] - 1, before[1])


@pytest.mark.parametrize("again", [52, 3], ids=["to-success", "to-failure"])
@pytest.mark.parametrize("first", FIRST.values(), ids=FIRST.keys())
def test_a_reroll_replaces_the_check_with_the_same_pvd(client, table, first, again):
    c = _owner(client, table)
    fate0, exp0 = _sheet(table)
    check = _roll(c, table, first)
    assert _fate(c, table, check, action="reroll", roll=str(again)).status_code == 302
    check.refresh_from_db()
    assert check.status == "revoked" and check.fate_action == "reroll"
    new = Check.objects.get(replaces=check)
    assert (new.pro, new.dif, new.roll, new.status) == (70, 20, again, "active")
    expected = omg.check(70, 20, again)
    assert new.degree == expected.degree.value
    assert _sheet(table) == (omg.apply_fate(fate0 - 1, expected.fate), exp0 + expected.exp)
    # The new roll is the latest now: the first is out of reach.
    assert _fate(c, table, check, action="revoke").status_code == 302
    assert _sheet(table) == (omg.apply_fate(fate0 - 1, expected.fate), exp0 + expected.exp)
