"""The services that change a sheet's rows (add, change, delete a discipline, weapon or zone;
wounds added by hand) decide who may call them, with the rule ``write_character`` uses
(``Character.can_edit``: the owner and the GM). The pages and the API check it before too;
a caller that forgets to (a script, a new endpoint) is refused all the same."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import PermissionDenied

from sheets import services
from sheets.models import BodyZone, Character, Membership, Weapon
from tests.factories import make_user

pytestmark = pytest.mark.django_db


def add(user: Any, hero: Character) -> Any:
    return services.add_row(
        user=user, character=hero, kind="weapon", data={"name": "Dagger", "category": "I"}
    )


def update(user: Any, hero: Character) -> Any:
    weapon = hero.weapons.get()
    return services.update_row(
        user=user, character=hero, kind="weapon", row_id=weapon.pk, data={"dmg": 1}
    )


def delete(user: Any, hero: Character) -> Any:
    weapon = hero.weapons.get()
    return services.delete_row(user=user, character=hero, kind="weapon", row_id=weapon.pk)


def wound(user: Any, hero: Character) -> Any:
    zone = hero.zones.get(name="chest")
    return services.adjust_wounds(user=user, character=hero, zone_id=zone.pk, delta=20)


CALLS = [add, update, delete, wound]


def state(hero: Character) -> tuple[Any, ...]:
    """Everything the four services write."""
    character = Character.objects.get(pk=hero.pk)
    return (
        character.version,
        character.vitality,
        sorted(Weapon.objects.filter(character=hero).values_list("name", "dmg")),
        sorted(BodyZone.objects.filter(character=hero).values_list("name", "wounds", "grievous")),
    )


@pytest.mark.parametrize("call", CALLS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("who", ["another player", "outsider"])
def test_it_refuses_a_user_who_may_not_change_the_sheet(hero, table, call, who):
    if who == "another player":
        user = make_user()
        Membership.objects.create(campaign=table.campaign, user=user)
    else:
        user = table.outsider
    before = state(hero)
    with pytest.raises(PermissionDenied):
        call(user, hero)
    assert state(hero) == before


@pytest.mark.parametrize("call", CALLS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("who", ["owner", "gm"])
def test_it_lets_the_owner_and_the_gm_change_the_sheet(hero, table, call, who):
    user = table.player if who == "owner" else table.gm
    before = state(hero)
    call(user, hero)
    after = state(hero)
    assert after[0] == before[0] + 1
    assert after != before
