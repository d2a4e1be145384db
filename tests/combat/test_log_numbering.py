"""The combat log's numbers: each entry is numbered by the INSERT that writes it, with the one
literal statement of the combat services (combat.services.rows.NEXT_SEQ), held here to the
numbers the ORM reads."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.models import Max

from combat import services
from combat.models import CombatLogEntry, Encounter
from combat.services.rows import NEXT_SEQ
from tests.factories import make_fight
from tests.fight_steps import strike

pytestmark = pytest.mark.both_databases


def orm_next(encounter: Encounter) -> int:
    last = CombatLogEntry.objects.filter(encounter=encounter).aggregate(Max("seq"))["seq__max"]
    return (last or 0) + 1


def literal_next(encounter: Encounter) -> int:
    with connection.cursor() as cursor:
        cursor.execute(NEXT_SEQ, [encounter.pk])
        (value,) = cursor.fetchone()
    return int(value)


def test_it_reads_the_next_number_as_the_orm_does(table):
    fight = make_fight(table)
    empty = Encounter.objects.create(campaign=table.campaign, name="No entry yet")
    later, _ = services.create_encounter(campaign=table.campaign, name="Later", actor=table.gm)
    assert literal_next(empty) == orm_next(empty) == 1
    assert literal_next(later) == orm_next(later) == 2  # created: entry 1
    strike(fight.encounter, fight.ysolde, fight.thug, actor=table.gm, defender=table.gm, roll=43)
    # Another encounter's entries count for nothing in these numbers.
    assert (literal_next(empty), literal_next(later)) == (1, 2)
    assert literal_next(fight.encounter) == orm_next(fight.encounter) > 4


def test_it_numbers_each_entry_after_the_last_and_hands_the_number_back(table):
    fight = make_fight(table)
    before = orm_next(fight.encounter)
    entry = strike(
        fight.encounter, fight.ysolde, fight.thug, actor=table.gm, defender=table.gm, roll=43
    )
    seqs = list(
        CombatLogEntry.objects.filter(encounter=fight.encounter)
        .order_by("pk")
        .values_list("seq", flat=True)
    )
    assert seqs == list(range(1, len(seqs) + 1))
    assert seqs[-3:] == [before, before + 1, before + 2]  # declare, defend, roll
    assert entry.seq == before + 2
    assert isinstance(entry.seq, int)
