"""Two people pressing "Roll" at once: the declaration resolves exactly once."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from combat import services
from combat.models import CombatLogEntry, Declaration, Participant
from sheets.models import BodyZone, Character
from tests.fight_steps import declare_and_defend


def _ready_attack(fight):
    return declare_and_defend(
        fight.encounter, fight.ysolde, fight.thug, actor=fight.table.player, defender=fight.table.gm
    )


@pytest.mark.django_db
def test_it_resolves_a_double_submit_once(fight):
    decl = _ready_attack(fight)
    results: list[object] = []
    for actor in (fight.table.player, fight.table.gm):
        try:
            results.append(services.resolve(declaration=decl, roll=43, actor=actor))
        except services.CombatConflict as exc:
            results.append(exc)
    assert isinstance(results[0], CombatLogEntry)
    assert isinstance(results[1], services.CombatConflict)
    assert fight.zone(fight.thug, "chest").wounds == 20


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_resolves_once_when_many_press_at_the_same_moment(fight):
    decl = _ready_attack(fight)
    barrier = threading.Barrier(6)
    outcomes: list[str] = []
    lock = threading.Lock()

    def press(actor):
        try:
            barrier.wait()
            services.resolve(declaration=Declaration.objects.get(pk=decl.pk), roll=43, actor=actor)
            outcome = "resolved"
        except services.CombatConflict:
            outcome = "conflict"
        finally:
            connection.close()
        with lock:
            outcomes.append(outcome)

    actors = [fight.table.player, fight.table.gm] * 3
    threads = [threading.Thread(target=press, args=(a,)) for a in actors]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["conflict"] * 5 + ["resolved"]
    assert CombatLogEntry.objects.filter(kind="roll").count() == 1
    assert BodyZone.objects.get(pk=fight.zone(fight.thug, "chest").pk).wounds == 20
    assert Participant.objects.get(pk=fight.thug.pk).counterattacks == 1


@pytest.mark.django_db
def test_a_hit_steps_the_sheet_it_changes_by_one_version_and_leaves_the_other(fight):
    """The sheet page compares versions: the hit's Vitality and wounds are one edit of the
    thug's sheet (one step, written with the Vitality), and the declaration and defense,
    which change no sheet, step none."""
    ids = (fight.ysolde.character_id, fight.thug.character_id)
    before = dict(Character.objects.filter(pk__in=ids).values_list("pk", "version"))
    decl = _ready_attack(fight)
    assert dict(Character.objects.filter(pk__in=ids).values_list("pk", "version")) == before
    services.resolve(declaration=decl, roll=43, actor=fight.table.player)
    after = dict(Character.objects.filter(pk__in=ids).values_list("pk", "version"))
    thug = Character.objects.get(pk=fight.thug.character_id)
    assert thug.vitality < fight.thug.character.vitality
    assert after == {**before, thug.pk: before[thug.pk] + 1}
