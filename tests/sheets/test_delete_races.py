"""A character deleted while another request writes it: the writer gets 404, never a 500.

The writers read the sheet (``get_object``), then lock it again to write: a DELETE committed in
between left the locked read empty, and ``Character.DoesNotExist`` answered 500 (26 PATCHes of
60 in an outside probe). The DELETE itself must not fail either: rows a PATCH writes while the
DELETE is on its way must go with the character, not break its foreign keys at commit.
"""

from __future__ import annotations

import random
import threading
from typing import Any

import pytest
from django.db import connection
from rest_framework.exceptions import NotFound
from rest_framework.test import APIClient, APIRequestFactory

from rules.engine.omg_data import MELEE_COMBAT
from sheets import services
from sheets.api.characters import CharacterSerializer
from sheets.models import Character, Discipline

RACES = 30


def _hero(table: Any, name: str = "Ysolde") -> Character:
    hero = services.create_character(campaign=table.campaign, owner=table.player, name=name, fate=9)
    Discipline.objects.create(character=hero, name=MELEE_COMBAT, level=2, exp_marks=1)
    return hero


def _api(user: Any) -> APIClient:
    api = APIClient()
    api.force_authenticate(user)
    return api


WRITES = {
    "patch": lambda api, pk: api.patch(
        f"/api/characters/{pk}/",
        {"notes": "still here?", "disciplines": [{"name": "Archery", "level": 1}]},
        format="json",
    ),
    "put-less patch": lambda api, pk: api.patch(
        f"/api/characters/{pk}/", {"fate": 3}, format="json"
    ),
    "rest": lambda api, pk: api.post(f"/api/characters/{pk}/rest/"),
    "buy-raise": lambda api, pk: api.post(
        f"/api/characters/{pk}/buy-raise/", {"aptitude": "SPD"}, format="json"
    ),
    "reserve roll": lambda api, pk: api.post(
        f"/api/characters/{pk}/reserve/roll/", {"roll": 40}, format="json"
    ),
}


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_write_racing_a_delete_is_a_404_on_postgresql(table):
    heroes = [_hero(table, f"Hero {i}") for i in range(RACES)]
    kinds = random.Random(7).choices(sorted(WRITES), k=RACES)
    answers: list[tuple[str, int]] = []
    errors: list[str] = []
    lock = threading.Lock()

    def race(hero: Character, kind: str) -> None:
        barrier = threading.Barrier(2)

        def run(who: str, call: Any) -> None:
            try:
                barrier.wait()
                status = call().status_code
                with lock:
                    answers.append((who, status))
            except Exception as exc:
                with lock:
                    errors.append(f"{who}: {type(exc).__name__}: {exc}")
            finally:
                connection.close()

        writer = _api(table.player)
        deleter = _api(table.gm)
        threads = [
            threading.Thread(target=run, args=(kind, lambda: WRITES[kind](writer, hero.pk))),
            threading.Thread(
                target=run,
                args=("delete", lambda: deleter.delete(f"/api/characters/{hero.pk}/")),
            ),
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads), "a thread is stuck"

    for hero, kind in zip(heroes, kinds, strict=True):
        race(hero, kind)

    assert errors == [], "\n".join(errors)
    wrong = [(who, status) for who, status in answers if status >= 500]
    assert wrong == []
    assert {status for who, status in answers if who == "delete"} <= {204}
    assert {status for who, status in answers if who != "delete"} <= {200, 404}
    assert not Character.objects.filter(pk__in=[h.pk for h in heroes]).exists()
    assert not Discipline.objects.filter(character_id__in=[h.pk for h in heroes]).exists()


# --- The same, made deterministic: the sheet is deleted between the read and the write -----


@pytest.mark.django_db
def test_a_patch_of_a_sheet_deleted_after_it_was_read_is_not_found(table):
    hero = _hero(table)
    request = APIRequestFactory().patch(f"/api/characters/{hero.pk}/")
    request.user = table.player
    serializer = CharacterSerializer(
        instance=hero, data={"notes": "too late"}, partial=True, context={"request": request}
    )
    assert serializer.is_valid(), serializer.errors
    Character.objects.filter(pk=hero.pk).delete()
    with pytest.raises(NotFound):
        serializer.save()
    assert not Discipline.objects.filter(character_id=hero.pk).exists()


@pytest.mark.django_db
def test_the_workflows_say_a_sheet_deleted_meanwhile_does_not_exist(table):
    """What the view turns into a 404: the service's locked read finds nothing."""
    hero = _hero(table)
    Character.objects.filter(pk=hero.pk).delete()
    for workflow in (
        lambda: services.daily_rest(user=hero.owner, character=hero, rng=random.Random(1)),
        lambda: services.buy_aptitude_raise(user=hero.owner, character=hero, aptitude="SPD"),
        lambda: services.roll_reserve(
            user=hero.owner, character=hero, rng=random.Random(1), roll=40
        ),
    ):
        with pytest.raises(Character.DoesNotExist):
            workflow()
