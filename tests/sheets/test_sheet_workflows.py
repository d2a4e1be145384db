"""Daily rest (per character and for the campaign), aptitude raises, the reserve roll and the
nested row endpoints, through the API and the pages."""

from __future__ import annotations

import random
import re

import pytest
from django.urls import reverse

from rules.engine.omg_data import MELEE_COMBAT
from sheets import randomness, services
from sheets.models import Character, Discipline, Membership
from tests.factories import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def seeded(monkeypatch):
    rng = random.Random(11)
    monkeypatch.setattr(randomness, "RNG", rng)


@pytest.fixture
def hero(table):
    character = services.create_character(
        campaign=table.campaign, owner=table.player, name="Ysolde", spd=3, skl=4, fate=3
    )
    Discipline.objects.create(character=character, name=MELEE_COMBAT, level=2, exp_marks=1)
    return character


def url(hero, action):
    return f"/api/characters/{hero.pk}/{action}/"


class TestRestApi:
    @pytest.mark.parametrize(("role", "status"), [("player", 200), ("gm", 200), ("outsider", 404)])
    def test_who_may_rest(self, hero, table, api_for, role, status):
        response = api_for(getattr(table, role)).post(url(hero, "rest"))
        assert response.status_code == status
        level = hero.disciplines.get(name=MELEE_COMBAT).level
        assert level == (3 if status == 200 else 2)
        if status == 200:
            assert response.json()["raised"] == {MELEE_COMBAT: [2, 3]}

    def test_another_player_may_not(self, hero, table, api_for):
        other = make_user()
        Membership.objects.create(campaign=table.campaign, user=other)
        assert api_for(other).post(url(hero, "rest")).status_code == 403

    def test_buy_raise_then_rest(self, hero, api_for):
        client = api_for(hero.owner)
        response = client.post(url(hero, "buy-raise"), {"aptitude": "SPD"}, format="json")
        assert response.status_code == 200
        assert response.json()["pending_raises"] == "SPD"
        refused = client.post(url(hero, "buy-raise"), {"aptitude": "SPD"}, format="json")
        assert refused.status_code == 400
        assert "Fate" in refused.json()["aptitude"][0]
        assert (
            client.post(url(hero, "buy-raise"), {"aptitude": "XYZ"}, format="json").status_code
            == 400
        )
        assert client.post(url(hero, "rest")).json()["aptitudes_raised"] == {"SPD": [3, 4]}

    def test_the_gm_rests_the_whole_campaign(self, hero, table, api_for, client_for):
        other = services.create_character(campaign=table.campaign, owner=table.gm, name="Thug")
        assert (
            api_for(table.player).post(f"/api/campaigns/{table.campaign.pk}/rest/").status_code
            == 403
        )
        body = api_for(table.gm).post(f"/api/campaigns/{table.campaign.pk}/rest/").json()
        assert [(r["character"], r["name"]) for r in body] == [
            (hero.pk, "Ysolde"),
            (other.pk, "Thug"),
        ]
        other.refresh_from_db()
        assert other.itv is not None
        page = client_for(table.gm).post(
            reverse("sheets:campaign_rest", args=[table.campaign.pk]), follow=True
        )
        assert "Ysolde: ITV" in page.text
        assert (
            client_for(table.player)
            .post(reverse("sheets:campaign_rest", args=[table.campaign.pk]))
            .status_code
            == 403
        )

    def test_the_campaign_rest_answers_two_characters_of_one_name_apart(self, hero, table, api_for):
        twins = [
            services.create_character(campaign=table.campaign, owner=table.gm, name="Thug")
            for _ in range(2)
        ]
        body = api_for(table.gm).post(f"/api/campaigns/{table.campaign.pk}/rest/").json()
        assert [r["character"] for r in body] == [hero.pk, *(t.pk for t in twins)]
        assert [r["name"] for r in body] == ["Ysolde", "Thug", "Thug"]
        for twin, answer in zip(twins, body[1:], strict=True):
            twin.refresh_from_db()
            assert answer["itv"] == twin.itv


class TestReserve:
    def test_roll_then_call_keeping_the_reserve(self, hero, api_for):
        client = api_for(hero.owner)
        no_rsv = client.post(
            url(hero, "reserve/call"), {"keep_reserve": True, "roll": 50}, format="json"
        )
        assert no_rsv.status_code == 400
        assert client.post(url(hero, "reserve/roll"), {"roll": 37}, format="json").json() == {
            "used": 37,
            "rsv": 37,
        }
        kept = client.post(
            url(hero, "reserve/call"), {"keep_reserve": True, "roll": 82}, format="json"
        )
        assert kept.json() == {"used": 37, "rsv": 82}
        fresh = client.post(
            url(hero, "reserve/call"), {"keep_reserve": False, "roll": 5}, format="json"
        )
        assert fresh.json() == {"used": 5, "rsv": 82}

    @pytest.mark.parametrize("roll", [0, 101, "x", True])
    def test_bad_rolls_are_refused(self, hero, api_for, roll):
        response = api_for(hero.owner).post(
            url(hero, "reserve/roll"), {"roll": roll}, format="json"
        )
        assert response.status_code == 400
        hero.refresh_from_db()
        assert hero.rsv is None

    def test_the_sheet_buttons(self, hero, client_for):
        client = client_for(hero.owner)
        target = reverse("sheets:character_reserve", args=[hero.pk])
        client.post(target, {"mode": "roll", "roll": "64"})
        hero.refresh_from_db()
        assert hero.rsv == 64
        page = client.post(target, {"mode": "keep", "roll": "12"}, follow=True).text
        assert "Use 64; RSV is now 12." in page
        page = client.post(target, {"mode": "roll", "roll": "500"}, follow=True).text
        assert "1 to 100" in page
        hero.refresh_from_db()
        assert hero.rsv == 12

    def test_a_server_reserve_call_shows_the_roll_before_the_choice(
        self, hero, client_for, monkeypatch
    ):
        seeded = random.Random(2026)
        expected = random.Random(2026).randint(1, 100)
        monkeypatch.setattr(randomness, "RNG", seeded)
        client = client_for(hero.owner)
        target = reverse("sheets:character_reserve", args=[hero.pk])
        client.post(target, {"mode": "roll", "roll": "64"})
        page = client.post(target, {"mode": "call"}, follow=True).text
        assert f"the new roll is <strong>{expected}</strong>" in page
        assert f"Use RSV 64 ({expected} becomes the RSV)" in page
        hero.refresh_from_db()
        assert hero.rsv == 64  # nothing is decided until the player chooses
        page = client.post(target, {"mode": "keep"}, follow=True).text
        assert f"Use 64; RSV is now {expected}." in page
        hero.refresh_from_db()
        assert hero.rsv == expected
        assert "the new roll is" not in client.get(hero.get_absolute_url()).text

    def test_a_choice_without_a_roll_to_choose_from_is_refused(self, hero, client_for):
        client = client_for(hero.owner)
        target = reverse("sheets:character_reserve", args=[hero.pk])
        client.post(target, {"mode": "roll", "roll": "64"})
        page = client.post(target, {"mode": "new"}, follow=True).text
        assert "Roll first" in page
        hero.refresh_from_db()
        assert hero.rsv == 64

    def test_a_reserve_call_needs_a_reserve_roll_first(self, hero, client_for):
        target = reverse("sheets:character_reserve", args=[hero.pk])
        page = client_for(hero.owner).post(target, {"mode": "call"}, follow=True).text
        assert "no reserve roll yet" in page


class TestNestedRows:
    def test_the_owner_adds_edits_and_removes_a_weapon(self, hero, api_for):
        client = api_for(hero.owner)
        base = f"/api/characters/{hero.pk}/weapons/"
        created = client.post(
            base, {"name": "Hatchet", "category": "IV", "dmg": 4, "dmg_max": 4}, format="json"
        )
        assert created.status_code == 201
        weapon_id = created.json()["id"]
        assert client.patch(f"{base}{weapon_id}/", {"dmg": 3}, format="json").status_code == 200
        bad = client.patch(f"{base}{weapon_id}/", {"dmg": 5, "dmg_max": 4}, format="json")
        assert bad.status_code == 400
        assert hero.weapons.get().dmg == 3
        assert client.delete(f"{base}{weapon_id}/").status_code == 204
        assert not hero.weapons.exists()

    def test_each_row_bumps_the_sheet_version(self, hero, api_for):
        before = Character.objects.get(pk=hero.pk).version
        api_for(hero.owner).post(
            f"/api/characters/{hero.pk}/disciplines/",
            {"name": "Cartography", "level": 1},
            format="json",
        )
        assert Character.objects.get(pk=hero.pk).version == before + 1

    def test_duplicates_are_explained(self, hero, api_for):
        response = api_for(hero.owner).post(
            f"/api/characters/{hero.pk}/disciplines/",
            {"name": MELEE_COMBAT, "level": 1},
            format="json",
        )
        assert response.status_code == 400

    @pytest.mark.parametrize(
        ("role", "read", "write"), [("gm", 200, 201), ("player", 200, 201), ("outsider", 404, 404)]
    )
    def test_roles(self, hero, table, api_for, role, read, write):
        client = api_for(getattr(table, role))
        base = f"/api/characters/{hero.pk}/zones/"
        assert client.get(base).status_code == read
        response = client.post(base, {"name": f"tail {role}"}, format="json")
        assert response.status_code == write

    def test_a_row_of_another_character_is_not_reachable(self, hero, table, api_for):
        other = services.create_character(campaign=table.campaign, owner=table.gm, name="Thug")
        zone = other.zones.first()
        response = api_for(hero.owner).patch(
            f"/api/characters/{hero.pk}/zones/{zone.pk}/", {"wounds": 3}, format="json"
        )
        assert response.status_code == 404
        zone.refresh_from_db()
        assert zone.wounds == 0


def test_it_disables_the_fate_raise_without_3_fate_and_refuses_it_anyway(hero, client_for):
    client = client_for(hero.owner)
    page = client.get(hero.get_absolute_url()).content.decode()
    assert re.search(r'<button type="submit" class="secondary outline">Spend 3 Fate', page)
    Character.objects.filter(pk=hero.pk).update(fate=2)
    page = client.get(hero.get_absolute_url()).content.decode()
    button = re.search(r"<button[^>]*>Spend 3 Fate[^<]*</button>", page).group(0)
    assert " disabled" in button and 'aria-describedby="raise-why"' in button
    assert re.search(r'id="raise-why"[^>]*>[^<]*2 Fate', page)
    response = client.post(
        reverse("sheets:character_buy_raise", args=[hero.pk]), {"aptitude": "SPD"}, follow=True
    )
    assert "costs 3 Fate, the character has 2" in response.content.decode()
    hero.refresh_from_db()
    assert (hero.fate, hero.pending_raises) == (2, "")
