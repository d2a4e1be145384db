"""A Fate spend or an undo on a check locks the sheets in the one documented order (the
characters by pk, then their disciplines), whatever the check changed: on PostgreSQL, a spend
waiting for a character held by a sheet edit holds none of that character's rows meanwhile.

The case that reversed it: an epic failure at 0 Fate changes only the discipline's EXP mark;
reverting it locked the discipline, then the paying character, while a sheet edit locks the
character, then its discipline: the two could deadlock."""

from __future__ import annotations

import random
import threading
from typing import Any

import pytest
from django.db import connection, transaction

from checks import services
from checks.models import Check
from rules.engine import omg
from sheets.models import Character, Discipline
from tests.locking import locked, waiting_for_a_lock
from tests.tables import make_checks_table

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _epic_failure_of_a_discipline(table: Any) -> Check:
    """Ysolde at 0 Fate fails Lock-picking epically: +1 EXP on the discipline, Fate unchanged;
    then the GM gives her a Fate to spend."""
    Character.objects.filter(pk=table.ysolde.pk).update(fate=0)
    ysolde = table.fresh(table.ysolde)
    target = services.Target("discipline", 20, discipline="Lock-picking")
    spec, _apt, _level = services.spec_for(ysolde, target)
    roll = next(r for r in range(1, 101) if omg.resolve(spec, r).degree is omg.Degree.EPIC_FAILURE)
    check = services.roll_check(
        user=table.owner, character=ysolde, target=target, rng=random.Random(1), roll=roll
    )
    assert [c["model"] for c in check.changes] == ["discipline"]
    Character.objects.filter(pk=ysolde.pk).update(fate=1)
    return check


def _behind_a_sheet_edit(table: Any, action: Any) -> tuple[list[Any], list[BaseException]]:
    """Runs ``action`` while another transaction holds Ysolde's character row, as a sheet edit
    does; returns (what the action's rows looked like while it waited, its errors)."""
    held, release = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def edit() -> None:
        try:
            with transaction.atomic():
                Character.objects.select_for_update().get(pk=table.ysolde.pk)
                held.set()
                release.wait(30)
        finally:
            connection.close()

    def act() -> None:
        try:
            action()
        except BaseException as exc:  # reported by the test
            errors.append(exc)
        finally:
            connection.close()

    editor = threading.Thread(target=edit)
    editor.start()
    assert held.wait(30)
    actor = threading.Thread(target=act)
    actor.start()
    seen: list[Any] = []
    try:
        for _ in range(300):
            if waiting_for_a_lock():
                break
            threading.Event().wait(0.02)
        else:
            pytest.fail("the Fate spend never waited for the held character")
        discipline = Discipline.objects.get(character=table.ysolde, name="Lock-picking")
        seen.append(locked(Discipline, discipline.pk))
    finally:
        release.set()
        editor.join(30)
        actor.join(30)
    return seen, errors


def test_a_fate_spend_on_a_check_locks_the_character_before_its_discipline():
    table = make_checks_table()
    check = _epic_failure_of_a_discipline(table)

    def revoke() -> None:
        services.spend_fate(
            user=table.owner,
            check=Check.objects.get(pk=check.pk),
            spender=table.fresh(table.ysolde),
            action="revoke",
            rng=random.Random(2),
        )

    seen, errors = _behind_a_sheet_edit(table, revoke)
    assert errors == []
    assert seen == [False], "the spend held the discipline while it waited for its character"
    check.refresh_from_db()
    assert check.status == Check.Status.REVOKED
    ysolde = table.fresh(table.ysolde)
    assert ysolde.fate == 0
    assert Discipline.objects.get(character=ysolde, name="Lock-picking").exp_marks == 0


def test_an_undo_of_a_reroll_locks_the_character_before_its_discipline():
    """Undoing a re-roll takes back the new roll's changes (the discipline's EXP mark) and
    the Fate spend (the payer's Fate): both sheets' rows, the character first."""
    table = make_checks_table()
    check = _epic_failure_of_a_discipline(table)
    _revoked, again = services.spend_fate(
        user=table.owner,
        check=check,
        spender=table.fresh(table.ysolde),
        action="reroll",
        rng=random.Random(2),
        roll=check.roll,
    )
    assert again is not None and [c["model"] for c in again.changes] == ["discipline"]
    assert table.fresh(table.ysolde).fate == 0

    def undo() -> None:
        services.undo_latest(user=table.gm, campaign=table.campaign)

    seen, errors = _behind_a_sheet_edit(table, undo)
    assert errors == []
    assert seen == [False], "the undo held the discipline while it waited for its character"
    again.refresh_from_db()
    check.refresh_from_db()
    assert (again.status, check.status) == (Check.Status.UNDONE, Check.Status.ACTIVE)
    assert table.fresh(table.ysolde).fate == 1  # the Fate spent is given back
