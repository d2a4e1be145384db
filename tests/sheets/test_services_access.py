"""The sheet services decide who may call them, with the rule the pages and the API check
first: a sheet's rows and workflows (add, change, delete a discipline, weapon or zone; wounds
added by hand; rest, aptitude raise, reserve roll and call; deleting it) are its owner's and the
GM's (``Character.can_edit``); resting the whole table, handing the campaign over, deleting it
and removing a player are the campaign's GM's, a player may remove only themselves (leaving);
its GM and players make sheets in a campaign, NPCs and revealed sheets are the GM's. A caller
that forgets its check (a script, a new endpoint) is refused all the same, and nothing
changes."""

from __future__ import annotations

import random
from typing import Any

import pytest
from django.core.exceptions import PermissionDenied

from rules.engine import omg
from sheets import accounts, services
from sheets.models import (
    BodyZone,
    Campaign,
    CampaignHandover,
    Character,
    Discipline,
    Membership,
    Weapon,
)
from tests.factories import make_user

pytestmark = [pytest.mark.django_db, pytest.mark.both_databases]


def add(user: Any, hero: Character) -> Any:
    return services.add_row(
        user=user, character=hero, kind="weapon", data={"name": "Dagger", "category": "I"}
    )


def update(user: Any, hero: Character) -> Any:
    weapon = hero.weapons.get()
    return services.update_row(
        user=user, character=hero, kind="weapon", row_id=weapon.pk, data={"dmg": 1}
    )


def delete_row(user: Any, hero: Character) -> Any:
    weapon = hero.weapons.get()
    return services.delete_row(user=user, character=hero, kind="weapon", row_id=weapon.pk)


def wound(user: Any, hero: Character) -> Any:
    zone = hero.zones.get(name="chest")
    return services.adjust_wounds(user=user, character=hero, zone_id=zone.pk, delta=20)


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
    """Removes the hero's owner: the GM's to do, or the owner's own leaving."""
    return services.remove_player(user=user, campaign=hero.campaign, user_id=hero.owner_id)


def offer(user: Any, hero: Character) -> Any:
    """Hands the campaign over to the hero's owner: the GM's to do."""
    return accounts.offer_campaign(user=user, campaign=hero.campaign, to_user_id=hero.owner_id)


def delete_campaign(user: Any, hero: Character) -> Any:
    """Deletes the hero's campaign with all that is in it: the GM's to do."""
    return services.delete_campaign(user=user, campaign=hero.campaign)


def create(user: Any, hero: Character) -> Any:
    return services.create_character(campaign=hero.campaign, owner=user, name="Newcomer")


def create_npc(user: Any, hero: Character) -> Any:
    return services.create_character(
        campaign=hero.campaign, owner=user, name="Spy", is_npc=True, revealed=False
    )


def create_revealed(user: Any, hero: Character) -> Any:
    return services.create_character(campaign=hero.campaign, owner=user, name="Spy", revealed=True)


def create_from_build(user: Any, hero: Character) -> Any:
    rng = random.Random(7)
    return services.create_from_build(
        campaign=hero.campaign,
        owner=user,
        name="Newcomer",
        aptitudes=omg.roll_aptitudes_2d6(rng),
        archetype="ranger",
        weapon_category=None,
        ranks={"Archery": 3, "Cartography": 2},
        weight=168,
        rng=rng,
    )


SHEET = [add, update, delete_row, wound, rest, buy_raise, roll_reserve, reserve_call, delete]
MAKERS = [create, create_from_build]
GM_ONLY = [rest_campaign, offer, delete_campaign, create_npc, create_revealed]
OTHERS = ["another player", "outsider"]
REFUSED = [
    *[(call, who) for call in SHEET for who in OTHERS],
    *[(call, who) for call in GM_ONLY for who in ["owner", *OTHERS]],
    *[(remove_player, who) for who in OTHERS],
    *[(call, "outsider") for call in MAKERS],
]
ALLOWED = [
    *[(call, who) for call in SHEET + MAKERS for who in ["owner", "gm"]],
    *[(call, "gm") for call in GM_ONLY],
    *[(remove_player, who) for who in ["owner", "gm"]],
]


def ids(case: Any) -> str:
    return case.__name__ if callable(case) else str(case)


@pytest.fixture
def played(hero: Character) -> Character:
    """The hero with something for each workflow to change: EXP, Fate, a stored RSV."""
    Character.objects.filter(pk=hero.pk).update(fate=5, rsv=30, itv=3, mana=0)
    Discipline.objects.filter(character=hero).update(exp_marks=2)
    return Character.objects.select_related("campaign").get(pk=hero.pk)


def user_for(who: str, table: Any) -> Any:
    if who == "another player":
        user = make_user()
        Membership.objects.create(campaign=table.campaign, user=user)
        return user
    return {"owner": table.player, "gm": table.gm, "outsider": table.outsider}[who]


def state(hero: Character) -> tuple[Any, ...]:
    """Everything the services write: the campaign's sheets and their rows, and its players."""
    sheets = Character.objects.filter(campaign=hero.campaign)
    return (
        sorted(
            sheets.values_list(
                "pk", "name", "version", "vitality", "fate", "pending_raises", "rsv", "itv", "mana"
            )
        ),
        sorted(Discipline.objects.filter(character__in=sheets).values_list("pk", "exp_marks")),
        sorted(Weapon.objects.filter(character__in=sheets).values_list("name", "dmg")),
        sorted(
            BodyZone.objects.filter(character__in=sheets).values_list("pk", "wounds", "grievous")
        ),
        sorted(Membership.objects.filter(campaign=hero.campaign).values_list("user_id", flat=True)),
        sorted(CampaignHandover.objects.filter(campaign=hero.campaign).values_list("to_user_id")),
    )


@pytest.mark.parametrize(("call", "who"), REFUSED, ids=ids)
def test_it_refuses_a_user_who_may_not_act(played, table, call, who):
    user = user_for(who, table)
    before = state(played)
    with pytest.raises(PermissionDenied):
        call(user, played)
    assert state(played) == before


@pytest.mark.parametrize(("call", "who"), ALLOWED, ids=ids)
def test_it_lets_the_owner_the_gm_and_the_players_act(played, table, call, who):
    user = user_for(who, table)
    version = played.version
    before = state(played)
    call(user, played)
    assert state(played) != before
    if call in SHEET and call is not delete:
        assert Character.objects.get(pk=played.pk).version == version + 1


@pytest.mark.parametrize("call", [rest_campaign, offer, remove_player, delete_campaign], ids=ids)
def test_it_asks_the_campaign_as_it_is_now_who_runs_the_table(played, table, call):
    """A handover between the caller's read and the rest: the former GM, still holding the
    campaign as they read it, is refused (a player now, removing another player)."""
    campaign = played.campaign
    Membership.objects.filter(campaign=campaign, user=table.player).delete()
    Membership.objects.create(campaign=campaign, user=table.gm)
    Campaign.objects.filter(pk=campaign.pk).update(gm=table.player)
    bystander = make_user()
    Membership.objects.create(campaign=campaign, user=bystander)
    Character.objects.filter(pk=played.pk).update(owner=bystander)
    played.owner_id = bystander.pk
    before = state(played)
    with pytest.raises(PermissionDenied):
        call(table.gm, played)
    assert state(played) == before


def test_deleting_a_campaign_deleted_meanwhile_says_so_and_changes_nothing(played, table):
    campaign = played.campaign
    Campaign.objects.filter(pk=campaign.pk).delete()
    assert services.delete_campaign(user=table.gm, campaign=campaign) is False
