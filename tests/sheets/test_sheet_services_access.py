"""The sheet's workflows (rest, aptitude raise, reserve roll and call, delete), the GM's
campaign actions (rest the table, remove a player) and making a sheet decide who may call them,
with the rule the pages and the API check first: the sheet's owner and the GM
(``Character.can_edit``); the campaign's GM, or a player leaving; the campaign's GM and
players, NPCs the GM's alone. A caller that forgets its check (a script, a new endpoint) is
refused all the same, and nothing changes."""

from __future__ import annotations

import random
from typing import Any

import pytest
from django.core.exceptions import PermissionDenied

from rules.engine import omg
from sheets import services
from sheets.models import Character, Discipline, Membership
from tests.factories import make_user

pytestmark = pytest.mark.django_db


def rest(user: Any, hero: Character) -> Any:
    return services.daily_rest(user=user, character=hero, rng=random.Random(1))


def buy_raise(user: Any, hero: Character) -> Any:
    return services.buy_aptitude_raise(user=user, character=hero, aptitude="SPD")


def roll_reserve(user: Any, hero: Character) -> Any:
    return services.roll_reserve(user=user, character=hero, rng=random.Random(1), roll=40)


def reserve_call(user: Any, hero: Character) -> Any:
    return services.reserve_call(
        user=user, character=hero, keep_reserve=True, rng=random.Random(1), roll=90
    )


def delete(user: Any, hero: Character) -> Any:
    return services.delete_character(user=user, character=hero)


def rest_campaign(user: Any, hero: Character) -> Any:
    return services.rest_campaign(user=user, campaign=hero.campaign, rng=random.Random(1))


def remove_player(user: Any, hero: Character) -> Any:
    return services.remove_player(user=user, campaign=hero.campaign, user_id=hero.owner_id)


def create(user: Any, hero: Character) -> Any:
    return services.create_character(campaign=hero.campaign, owner=user, name="Interloper")


def create_from_build(user: Any, hero: Character) -> Any:
    rng = random.Random(7)
    return services.create_from_build(
        campaign=hero.campaign,
        owner=user,
        name="Interloper",
        aptitudes=omg.roll_aptitudes_2d6(rng),
        archetype="ranger",
        weapon_category=None,
        ranks={"Archery": 3, "Cartography": 2},
        weight=168,
        rng=rng,
    )


SHEET_CALLS = [rest, buy_raise, roll_reserve, reserve_call, delete]
GM_CALLS = [rest_campaign, remove_player]
MAKER_CALLS = [create, create_from_build]


@pytest.fixture
def played(hero: Character) -> Character:
    """The hero with something for each workflow to change: EXP, Fate, a stored RSV."""
    Character.objects.filter(pk=hero.pk).update(fate=5, rsv=30, itv=3, mana=0)
    Discipline.objects.filter(character=hero).update(exp_marks=2)
    return Character.objects.select_related("campaign").get(pk=hero.pk)


def state(hero: Character) -> tuple[Any, ...]:
    """Everything the workflows write: the campaign's sheets and rows, and its players."""
    campaign = hero.campaign
    return (
        sorted(
            Character.objects.filter(campaign=campaign).values_list(
                "pk", "name", "version", "fate", "pending_raises", "rsv", "itv", "mana", "spd"
            )
        ),
        sorted(
            Discipline.objects.filter(character__campaign=campaign).values_list(
                "pk", "level", "exp_marks"
            )
        ),
        sorted(Membership.objects.filter(campaign=campaign).values_list("user_id", flat=True)),
    )


def another_player(table: Any) -> Any:
    user = make_user()
    Membership.objects.create(campaign=table.campaign, user=user)
    return user


@pytest.mark.parametrize("call", SHEET_CALLS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("who", ["another player", "outsider"])
def test_it_refuses_a_user_who_may_not_change_the_sheet(played, table, call, who):
    user = another_player(table) if who == "another player" else table.outsider
    before = state(played)
    with pytest.raises(PermissionDenied):
        call(user, played)
    assert state(played) == before


@pytest.mark.parametrize("call", SHEET_CALLS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("who", ["owner", "gm"])
def test_it_lets_the_owner_and_the_gm_change_the_sheet(played, table, call, who):
    user = table.player if who == "owner" else table.gm
    before = state(played)
    call(user, played)
    assert state(played) != before


@pytest.mark.parametrize("call", GM_CALLS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("who", ["another player", "outsider"])
def test_it_refuses_a_campaign_action_to_anyone_but_the_gm(played, table, call, who):
    user = another_player(table) if who == "another player" else table.outsider
    before = state(played)
    with pytest.raises(PermissionDenied):
        call(user, played)
    assert state(played) == before


@pytest.mark.parametrize("call", GM_CALLS, ids=lambda c: c.__name__)
def test_it_lets_the_gm_act_on_the_campaign(played, table, call):
    before = state(played)
    call(table.gm, played)
    assert state(played) != before


def test_it_lets_a_player_leave(played, table):
    """The one removal a player makes: their own."""
    assert services.remove_player(
        user=table.player, campaign=table.campaign, user_id=table.player.pk
    )
    assert not table.campaign.is_member(table.player)


@pytest.mark.parametrize("call", MAKER_CALLS, ids=lambda c: c.__name__)
def test_it_refuses_a_sheet_made_by_an_outsider(played, table, call):
    before = state(played)
    with pytest.raises(PermissionDenied):
        call(table.outsider, played)
    assert state(played) == before
    assert not Character.objects.filter(name="Interloper").exists()


@pytest.mark.parametrize("call", MAKER_CALLS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("who", ["player", "gm"])
def test_it_lets_the_gm_and_a_player_make_a_sheet(played, table, call, who):
    user = table.player if who == "player" else table.gm
    assert call(user, played).owner == user


@pytest.mark.parametrize("field", ["is_npc", "revealed"])
def test_it_leaves_npcs_to_the_gm(table, field):
    flag: dict[str, Any] = {field: True}
    with pytest.raises(PermissionDenied):
        services.create_character(campaign=table.campaign, owner=table.player, name="Spy", **flag)
    assert not Character.objects.filter(name="Spy").exists()
    spy = services.create_character(campaign=table.campaign, owner=table.gm, name="Spy", **flag)
    assert getattr(spy, field)
