"""Row PATCHes racing other writers on PostgreSQL: a PATCH of one field of a zone, weapon or
discipline never writes back an older value of another field.

The row endpoints used to save the row they loaded before taking the character's lock, with
every column: a GM's damage (`wounds`), a weapon's wear or a discipline's EXP marks written
meanwhile went back to the value read before. For each kind of row, threads count the increments
they make to one field (the combat tracker's damage, or the sheet page's compare-and-set edits)
while other threads PATCH another field of the same row through the API; afterwards the counted
field must equal its start plus every increment made.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from rest_framework.test import APIClient

from combat import services as combat_services
from combat.models import Encounter
from sheets import services as sheet_services
from sheets.models import BodyZone, Character, Discipline, Weapon
from tests.factories import make_ysolde

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

WRITERS = 3  # threads incrementing the counted field
PATCHERS = 3  # threads PATCHing another field of the same row
ROUNDS = 25  # requests per thread


def _race(increment: Callable[[], bool], patch: Callable[[int], int]) -> tuple[int, list[str]]:
    """Run the writers and the patchers at once; return the increments made and the errors."""
    made = 0
    errors: list[str] = []
    lock = threading.Lock()
    barrier = threading.Barrier(WRITERS + PATCHERS)

    def writer() -> None:
        nonlocal made
        try:
            barrier.wait()
            for _ in range(ROUNDS):
                if increment():
                    with lock:
                        made += 1
        except Exception as exc:
            with lock:
                errors.append(f"writer: {type(exc).__name__}: {exc}")
        finally:
            connection.close()

    def patcher() -> None:
        try:
            barrier.wait()
            for i in range(ROUNDS):
                status = patch(i)
                if status != 200:
                    with lock:
                        errors.append(f"PATCH answered {status}")
        except Exception as exc:
            with lock:
                errors.append(f"patcher: {type(exc).__name__}: {exc}")
        finally:
            connection.close()

    threads = [threading.Thread(target=writer) for _ in range(WRITERS)]
    threads += [threading.Thread(target=patcher) for _ in range(PATCHERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a thread is stuck"
    return made, errors


def _compare_and_set(character: Any, kind: str, row_id: int, field: str, model: Any) -> bool:
    """One +1 through the sheet page's edit path, retried when someone got there first."""
    while True:
        current = getattr(model.objects.get(pk=row_id), field)
        try:
            sheet_services.edit_field(
                user=character.owner,
                character=character,
                kind=kind,
                row_id=row_id,
                field=field,
                value=str(current + 1),
                original=str(current),
            )
            return True
        except sheet_services.EditConflict:
            continue


def _api(user: Any) -> APIClient:
    api = APIClient()
    api.force_authenticate(user)
    return api


def test_it_keeps_every_wound_the_gm_deals_while_the_zone_is_patched(table):
    campaign, gm, alice = table.campaign, table.gm, table.player
    hero = make_ysolde(campaign, alice)
    Character.objects.filter(pk=hero.pk).update(bzf=500)  # far above the wounds dealt
    zone = BodyZone.objects.get(character=hero, name="head")
    encounter, _ = combat_services.create_encounter(campaign=campaign, name="Race", actor=gm)
    combat_services.add_participants(encounter=encounter, characters=[hero], actor=gm)
    encounter = Encounter.objects.get(pk=encounter.pk)
    gm_api, player_api = _api(gm), _api(alice)

    def damage() -> bool:
        answer = gm_api.post(
            f"/api/encounters/{encounter.pk}/adjust/",
            {"zone": zone.pk, "amount": 1},
            format="json",
        )
        assert answer.status_code == 200, answer.content
        return True

    def patch(i: int) -> int:
        return player_api.patch(
            f"/api/characters/{hero.pk}/zones/{zone.pk}/", {"arm_bonus": i % 2}, format="json"
        ).status_code

    made, errors = _race(damage, patch)
    assert errors == []
    assert made == WRITERS * ROUNDS
    assert BodyZone.objects.get(pk=zone.pk).wounds == made


def test_it_keeps_every_exp_mark_while_the_discipline_is_patched(table):
    hero = make_ysolde(table.campaign, table.player)
    discipline = Discipline.objects.filter(character=hero).first()
    start = discipline.exp_marks
    api = _api(table.player)

    def mark() -> bool:
        return _compare_and_set(hero, "discipline", discipline.pk, "exp_marks", Discipline)

    def patch(i: int) -> int:
        return api.patch(
            f"/api/characters/{hero.pk}/disciplines/{discipline.pk}/",
            {"level": 2 + i % 2},
            format="json",
        ).status_code

    made, errors = _race(mark, patch)
    assert errors == []
    assert Discipline.objects.get(pk=discipline.pk).exp_marks == start + made


def test_it_keeps_every_wear_mark_while_the_weapon_is_patched(table):
    hero = make_ysolde(table.campaign, table.player)
    weapon = Weapon.objects.filter(character=hero).first()
    Weapon.objects.filter(pk=weapon.pk).update(name="0")
    api = _api(table.player)

    def wear() -> bool:
        # A counter in the name: the sheet's edit path, one compare-and-set at a time.
        while True:
            current = Weapon.objects.get(pk=weapon.pk).name
            try:
                sheet_services.edit_field(
                    user=hero.owner,
                    character=hero,
                    kind="weapon",
                    row_id=weapon.pk,
                    field="name",
                    value=str(int(current) + 1),
                    original=current,
                )
                return True
            except sheet_services.EditConflict:
                continue

    def patch(i: int) -> int:
        return api.patch(
            f"/api/characters/{hero.pk}/weapons/{weapon.pk}/", {"bonus": i % 2}, format="json"
        ).status_code

    made, errors = _race(wear, patch)
    assert errors == []
    assert Weapon.objects.get(pk=weapon.pk).name == str(made)
