"""The matrix's one-query fingerprint sees every change the row-by-row snapshot sees."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from combat.models import Participant
from prep.models import PreparedEncounter
from sheets.models import BodyZone, Character
from tests.security.fingerprint import changed_tables, fingerprint
from tests.security.pages import demo_table, snapshot

pytestmark = [pytest.mark.django_db, pytest.mark.both_databases]


def first(model) -> int:
    return model.objects.order_by("pk").values_list("pk", flat=True)[0]


def changes(action) -> tuple[list[str], list[str]]:
    """(tables the fingerprint saw change, tables the snapshot saw change)."""
    before, rows_before = fingerprint(), snapshot()
    action()
    after, rows_after = fingerprint(), snapshot()
    by_rows = sorted(label for label in rows_after if rows_before[label] != rows_after[label])
    return changed_tables(before, after), by_rows


def test_it_reads_every_table_in_one_query():
    demo_table()
    with CaptureQueriesContext(connection) as queries:
        seen = fingerprint()
    assert len(queries) == 1
    assert set(snapshot()) <= set(seen)
    assert "sheets.Character" in seen and seen["sheets.Character"]


def test_it_is_the_same_when_nothing_changed():
    demo_table()
    assert fingerprint() == fingerprint()


@pytest.mark.parametrize(
    "action",
    [
        pytest.param(
            lambda: BodyZone.objects.filter(pk=first(BodyZone)).update(wounds=1), id="number"
        ),
        pytest.param(
            lambda: Character.objects.filter(pk=first(Character)).update(name="Y"), id="text"
        ),
        pytest.param(
            lambda: Participant.objects.filter(pk=first(Participant)).delete(), id="delete"
        ),
        # A many-to-many link table of its own, which the snapshot does not read.
        pytest.param(
            lambda: PreparedEncounter.objects.get().expected.add(first(Character)), id="link-table"
        ),
    ],
)
def test_it_sees_what_the_snapshot_sees(action):
    demo_table()
    seen, by_rows = changes(action)
    assert seen
    assert set(by_rows) <= set(seen)
