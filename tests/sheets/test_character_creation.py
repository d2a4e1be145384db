"""The creation wizard and advancement (daily rest, Fate for aptitudes)."""

from __future__ import annotations

import random

import pytest
from django.urls import reverse

from rules.engine.omg_data import MELEE_COMBAT
from sheets import randomness, services
from sheets.models import Character, Discipline

pytestmark = pytest.mark.django_db

TWO_D6 = "3 1 6 2 4 4 6 6 1 1 2 5 3 3"  # -> FOC 3, SPD 5, SKL 4, VGR 5, NRV 1, CHR 5, SVY 3; Fate 2


@pytest.fixture(autouse=True)
def seeded(monkeypatch):
    rng = random.Random(7)
    monkeypatch.setattr(randomness, "RNG", rng)
    return rng


def wizard(client, campaign, **data):
    base = {
        "name": "Brannoc",
        "method": "2d6",
        "dice": TWO_D6,
        "archetype": "ranger",
        "weight": "168",
    }
    base.update(data)
    return client.post(reverse("sheets:character_wizard", args=[campaign.pk]), base)


def test_it_creates_a_ranger_by_the_rules(table, client_for):
    client = client_for(table.player)
    response = wizard(
        client,
        table.campaign,
        action="create",
        free_0="3",
        extra_name_0="Cartography",
        extra_rank_0="2",
        extra_name_1="Dancing",
        extra_rank_1="1",
    )
    character = Character.objects.get(name="Brannoc")
    assert response["Location"] == character.get_absolute_url()
    assert (character.foc, character.spd, character.skl, character.vgr) == (3, 5, 4, 5)
    assert character.fate == 2
    assert character.bzf == 12 and not character.bzf_rolled
    assert character.itv is not None
    levels = dict(character.disciplines.values_list("name", "level"))
    assert levels["Archery"] == 3 and levels["Cartography"] == 2 and levels["Dancing"] == 1
    assert levels["Scouting/Recon"] == 1
    assert len(levels) == 9


def test_it_refuses_four_ranks_in_one_discipline(table, client_for):
    response = wizard(
        client_for(table.player),
        table.campaign,
        action="create",
        extra_name_0="Cartography",
        extra_rank_0="4",
    )
    assert response.status_code == 422
    assert not Character.objects.filter(name="Brannoc").exists()


def test_it_doubles_the_cost_off_the_archetype(table, client_for):
    # Wizard buying Archery (a Ranger discipline): 2 points per rank; 2 ranks = 4.
    response = wizard(
        client_for(table.player),
        table.campaign,
        action="check",
        archetype="wizard",
        extra_name_0="Archery",
        extra_rank_0="2",
    )
    assert response.context["form"].summary.costs["Archery"] == 4
    assert response.context["form"].summary.remaining == 3


def test_a_monk_pays_one_everywhere(table, client_for):
    response = wizard(
        client_for(table.player),
        table.campaign,
        action="check",
        archetype="monk",
        extra_name_0="Archery",
        extra_rank_0="2",
    )
    assert response.context["form"].summary.costs["Archery"] == 2


def test_it_refuses_more_than_seven_points(table, client_for):
    response = wizard(
        client_for(table.player),
        table.campaign,
        action="create",
        archetype="wizard",
        extra_name_0="Archery",
        extra_rank_0="3",
        extra_name_1="Dancing",
        extra_rank_1="2",
    )
    assert response.status_code == 422
    assert "only 7 are available" in response.text


def test_a_warrior_names_a_weapon_category(table, client_for):
    client = client_for(table.player)
    response = wizard(client, table.campaign, action="create", archetype="warrior")
    assert response.status_code == 422
    assert "weapon category" in response.text
    wizard(client, table.campaign, action="create", archetype="warrior", weapon_category="III")
    names = set(Character.objects.get(name="Brannoc").disciplines.values_list("name", flat=True))
    assert MELEE_COMBAT in names
    assert "Weapon Mastery III (dual edged sword)" in names


def test_the_7d6_method_uses_each_die_once(table, client_for):
    client = client_for(table.player)
    placed = {"foc": 3, "spd": 6, "skl": 5, "vgr": 4, "nrv": 3, "chr": 2, "svy": 1}
    ok = wizard(
        client, table.campaign, action="check", method="7d6", dice="6 1 3 4 2 5 3", **placed
    )
    assert ok.context["form"].aptitude_roll.aptitudes.spd == 5
    assert ok.context["form"].aptitude_roll.fate == 1
    bad = wizard(
        client,
        table.campaign,
        action="check",
        method="7d6",
        dice="6 1 3 4 2 5 3",
        **{**placed, "svy": 6},
    )
    assert "are not the rolled dice" in bad.text


def test_wrong_dice_are_explained(table, client_for):
    response = wizard(client_for(table.player), table.campaign, action="check", dice="1 2 x")
    assert "whole numbers from 1 to 6" in response.text
    response = wizard(client_for(table.player), table.campaign, action="check", dice="1 2 3")
    assert "needs 14 dice, got 3" in response.text


def test_roll_for_me_fills_in_server_dice(table, client_for):
    response = wizard(client_for(table.player), table.campaign, action="roll", dice="")
    dice = response.context["form"].data["dice"].split()
    assert len(dice) == 14 and all(1 <= int(d) <= 6 for d in dice)


def test_roll_for_me_rolls_once_per_method_until_a_character_is_made(
    table, client_for, monkeypatch
):
    seeded = random.Random(7)
    monkeypatch.setattr(randomness, "RNG", seeded)
    client = client_for(table.player)
    url = reverse("sheets:character_wizard", args=[table.campaign.pk])

    def roll(method: str) -> str:
        response = wizard(client, table.campaign, action="roll", dice="", method=method)
        return str(response.context["form"].data["dice"])

    first = roll("2d6")
    assert roll("2d6") == first  # pressed again: the same dice, no fishing
    seven = roll("7d6")
    assert len(seven.split()) == 7
    assert roll("2d6") == first  # back to the first method: its dice are still the server's
    client.get(url, {"reset": "1"})  # starting over keeps them too
    assert roll("2d6") == first
    wizard(client, table.campaign, action="create", dice=first)
    character = Character.objects.get(name="Brannoc")
    assert character.creation["server_rolled"] is True
    assert character.creation["dice"] == [int(d) for d in first.split()]
    sheet = client.get(character.get_absolute_url()).text
    assert f"Aptitudes by 2d6: the server's dice {first}" in sheet
    # The next character gets dice of its own: the next ones the (seeded) server throws.
    assert roll("2d6") != first


def test_the_wizard_answers_htmx_with_the_form_only(table, client_for):
    response = client_for(table.player).post(
        reverse("sheets:character_wizard", args=[table.campaign.pk]),
        {"name": "X", "method": "2d6", "dice": TWO_D6, "archetype": "bard"},
        headers={"HX-Request": "true"},
    )
    assert response.text.lstrip().startswith('<form id="wizard"')
    assert "0</strong> of 7 points spent" in response.text


def test_outsiders_cannot_use_the_wizard(table, client_for):
    url = reverse("sheets:character_wizard", args=[table.campaign.pk])
    assert client_for(table.outsider).get(url).status_code == 404
    assert client_for(None).get(url).status_code == 302


def test_a_rolled_bzf_when_no_weight_is_given(table, client_for):
    wizard(client_for(table.player), table.campaign, action="create", weight="")
    character = Character.objects.get(name="Brannoc")
    assert character.bzf_rolled
    assert 8 <= character.bzf <= 18
    assert character.weight == character.bzf * 14


class TestAdvancement:
    @pytest.fixture
    def hero(self, table):
        character = services.create_character(
            campaign=table.campaign, owner=table.player, name="Ysolde", spd=3, skl=4, fate=4
        )
        Discipline.objects.create(character=character, name=MELEE_COMBAT, level=2, exp_marks=1)
        Discipline.objects.create(character=character, name="Archery", level=5, exp_marks=1)
        return character

    def test_the_daily_rest_spends_exp_and_rerolls_itv(self, hero, client_for):
        Character.objects.filter(pk=hero.pk).update(mana=0)
        response = client_for(hero.owner).post(reverse("sheets:character_rest", args=[hero.pk]))
        assert response.status_code == 302
        hero.refresh_from_db()
        levels = {d.name: (d.level, d.exp_marks) for d in hero.disciplines.all()}
        assert levels == {MELEE_COMBAT: (3, 0), "Archery": (5, 0)}
        assert hero.itv is not None and hero.mana > 0

    def test_three_fate_buy_an_aptitude_at_the_next_rest(self, hero, client_for):
        client = client_for(hero.owner)
        client.post(reverse("sheets:character_buy_raise", args=[hero.pk]), {"aptitude": "SPD"})
        hero.refresh_from_db()
        assert (hero.fate, hero.pending_raises, hero.spd) == (1, "SPD", 3)
        response = client.post(
            reverse("sheets:character_buy_raise", args=[hero.pk]), {"aptitude": "SKL"}
        )
        assert response.status_code == 302
        hero.refresh_from_db()
        assert hero.fate == 1  # not enough Fate: refused, nothing changed
        client.post(reverse("sheets:character_rest", args=[hero.pk]))
        hero.refresh_from_db()
        assert (hero.spd, hero.pending_raises) == (4, "")

    def test_other_players_cannot_rest_my_character(self, hero, table, client_for):
        from sheets.models import Membership
        from tests.factories import make_user

        other = make_user()
        Membership.objects.create(campaign=table.campaign, user=other)
        assert (
            client_for(other).post(reverse("sheets:character_rest", args=[hero.pk])).status_code
            == 403
        )
        assert (
            client_for(table.outsider)
            .post(reverse("sheets:character_rest", args=[hero.pk]))
            .status_code
            == 404
        )


def test_it_records_the_dice_and_whether_the_server_rolled_them(table, client_for):
    client = client_for(table.player)
    rolled = wizard(client, table.campaign, action="roll", dice="")
    dice = rolled.context["form"].data["dice"]
    wizard(client, table.campaign, action="create", dice=dice)
    character = Character.objects.get(name="Brannoc")
    assert character.creation == {
        "method": "2d6",
        "dice": [int(d) for d in dice.split()],
        "server_rolled": True,
    }


def test_typed_dice_are_recorded_as_typed(table, client_for):
    wizard(client_for(table.player), table.campaign, action="create")
    assert Character.objects.get(name="Brannoc").creation["server_rolled"] is False


def test_it_equips_the_starting_weapon_and_armor(table, client_for):
    wizard(
        client_for(table.player),
        table.campaign,
        action="create",
        weapon="Long Sword",
        armor="Leather",
        equipment="Rope, lantern",
    )
    character = Character.objects.get(name="Brannoc")
    weapon = character.weapons.get()
    assert (weapon.name, weapon.category, weapon.dmg, weapon.dmg_max) == ("Long Sword", "III", 4, 4)
    arms = dict(character.zones.values_list("name", "arm"))
    assert arms["head"] == 0 and arms["chest"] == 2 and arms["right leg"] == 2
    assert character.equipment == "Rope, lantern"


def test_leaving_and_coming_back_keeps_the_draft(table, client_for):
    client = client_for(table.player)
    url = reverse("sheets:character_wizard", args=[table.campaign.pk])
    wizard(client, table.campaign, action="check", name="Half Done", archetype="bard")
    page = client.get(url)
    assert page.context["form"].data["name"] == "Half Done"
    assert 'value="Half Done"' in page.text
    assert client.get(url, {"reset": "1"}).context["form"].is_bound is False
