from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction
from django.urls import reverse

from rules.engine.omg_data import MELEE_COMBAT, weapon_discipline
from sheets.models import BodyZone, Character, Discipline, Weapon
from sheets.numbers import sheet_numbers

pytestmark = pytest.mark.django_db


def sheet_url(character: Character) -> str:
    return reverse("sheets:character_detail", args=[character.pk])


def edit(client, character, field, value, original, kind="character", row=""):
    return client.post(
        reverse("sheets:character_edit_field", args=[character.pk]),
        {"kind": kind, "row": row, "field": field, "value": value, "original": original},
        headers={"HX-Request": "true"},
    )


class TestNumbers:
    def test_it_derives_the_seeds_worked_example(self, hero):
        numbers = sheet_numbers(Character.objects.with_sheet().get(pk=hero.pk))
        assert numbers.weapons[0].pro == {"fast": 80, "precise": 85, "mighty": 90}
        assert numbers.defenses == {"dodge": 25, "parry": 30, "block": 35}
        assert numbers.derived.bzf == 12  # 168 lb / 14
        assert numbers.derived.vit == 2 + 2 + 5

    def test_a_new_sheet_has_the_default_zones_and_full_vitality(self, hero):
        assert [z.name for z in hero.zones.all()] == [
            "head",
            "chest",
            "abdomen",
            "left arm",
            "right arm",
            "left leg",
            "right leg",
        ]
        assert hero.vitality == 9

    def test_the_page_shows_them(self, hero, client_for):
        page = client_for(hero.owner).get(sheet_url(hero)).text
        for number in ("80", "85", "90", "25", "30", "35"):
            assert f">{number}<" in page

    def test_the_sheet_page_query_count_does_not_grow_with_rows(
        self, hero, client_for, django_assert_max_num_queries
    ):
        client = client_for(hero.owner)
        client.get(sheet_url(hero))
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as small:
            client.get(sheet_url(hero))
        for i in range(10):
            Discipline.objects.create(character=hero, name=f"Lore {i}", level=1)
            Weapon.objects.create(character=hero, name=f"Knife {i}", category="I", dmg=1, dmg_max=1)
            BodyZone.objects.create(character=hero, name=f"tentacle {i}", position=10 + i)
        with CaptureQueriesContext(connection) as large:
            client.get(sheet_url(hero))
        assert len(large) == len(small)


class TestConstraints:
    @pytest.mark.parametrize(
        ("field", "value"),
        [("spd", 0), ("spd", 6), ("rsv", 0), ("rsv", 101), ("bzf", 0), ("fate", -1)],
    )
    def test_the_database_refuses_out_of_range_values(self, hero, field, value):
        with pytest.raises(IntegrityError), transaction.atomic():
            Character.objects.filter(pk=hero.pk).update(**{field: value})

    def test_discipline_levels_are_1_to_5(self, hero):
        with pytest.raises(IntegrityError), transaction.atomic():
            Discipline.objects.create(character=hero, name="Overdone", level=6)

    def test_a_weapons_dmg_stays_within_its_max(self, hero):
        with pytest.raises(IntegrityError), transaction.atomic():
            Weapon.objects.create(character=hero, name="Odd", category="I", dmg=3, dmg_max=2)

    def test_armor_stays_within_its_max(self, hero):
        zone = hero.zones.first()
        with pytest.raises(IntegrityError), transaction.atomic():
            BodyZone.objects.filter(pk=zone.pk).update(arm=3, arm_max=2)

    def test_wounds_are_never_negative(self, hero):
        zone = hero.zones.first()
        with pytest.raises(IntegrityError), transaction.atomic():
            BodyZone.objects.filter(pk=zone.pk).update(wounds=-1)


class TestAccess:
    @pytest.mark.parametrize(
        ("role", "status"), [("gm", 200), ("player", 200), ("outsider", 404), ("other_gm", 404)]
    )
    def test_who_sees_the_sheet(self, hero, table, client_for, role, status):
        assert client_for(getattr(table, role)).get(sheet_url(hero)).status_code == status

    def test_anonymous_goes_to_login(self, hero, client_for):
        assert client_for(None).get(sheet_url(hero)).status_code == 302

    def test_another_player_views_but_cannot_edit(self, hero, table, client_for):
        from sheets.models import Membership
        from tests.factories import make_user

        other = make_user("other_player")
        Membership.objects.create(campaign=table.campaign, user=other)
        client = client_for(other)
        page = client.get(sheet_url(hero)).text
        assert "hx-post" not in page.split('data-testid="sheet"')[1].split("</article>")[0]
        assert edit(client, hero, "spd", "5", "3").status_code == 403
        hero.refresh_from_db()
        assert hero.spd == 3

    @pytest.mark.parametrize(("role", "status"), [("gm", 200), ("player", 200), ("outsider", 404)])
    def test_who_edits(self, hero, table, client_for, role, status):
        assert edit(client_for(getattr(table, role)), hero, "spd", "4", "3").status_code == status
        hero.refresh_from_db()
        assert hero.spd == (4 if status == 200 else 3)


class TestEditing:
    def test_an_aptitude_edit_recomputes_the_numbers(self, hero, client_for):
        response = edit(client_for(hero.owner), hero, "spd", "5", "3")
        assert response.status_code == 200
        hero.refresh_from_db()
        assert hero.spd == 5
        weapon = hero.weapons.get()
        assert (
            f'<span id="wpn-{weapon.pk}-fast" class="num" hx-swap-oob="true">90</span>'
            in response.text
        )
        assert 'data-testid="dif-dodge">35<' in response.text
        assert "<html" not in response.text

    def test_an_invalid_value_keeps_the_last_good_one(self, hero, client_for):
        response = edit(client_for(hero.owner), hero, "spd", "9", "3")
        assert response.status_code == 422
        assert "less than or equal to 5" in response.text
        assert "The last good value is kept." in response.text
        hero.refresh_from_db()
        assert hero.spd == 3

    def test_garbage_is_an_error_not_a_crash(self, hero, client_for):
        client = client_for(hero.owner)
        assert edit(client, hero, "spd", "fast", "3").status_code == 422
        assert edit(client, hero, "owner", "1", "").status_code == 422
        assert edit(client, hero, "level", "2", "3", kind="discipline", row="abc").status_code in (
            200,
            422,
        )
        hero.refresh_from_db()
        assert hero.spd == 3

    def test_a_stale_edit_is_a_conflict_not_an_overwrite(self, hero, client_for):
        client = client_for(hero.owner)
        assert edit(client, hero, "spd", "4", "3").status_code == 200
        # A second tab still shows 3 and tries to set 5.
        response = edit(client, hero, "spd", "5", "3")
        assert response.status_code == 409
        assert "Changed elsewhere" in response.text
        hero.refresh_from_db()
        assert hero.spd == 4

    def test_weight_sets_bzf(self, hero, client_for):
        response = edit(client_for(hero.owner), hero, "weight", "210", "168")
        hero.refresh_from_db()
        assert hero.bzf == 15
        assert 'id="f-character-0-bzf"' in response.text

    def test_a_discipline_level_edit_changes_its_pro(self, hero, client_for):
        melee = hero.disciplines.get(name=MELEE_COMBAT)
        response = edit(
            client_for(hero.owner), hero, "level", "3", "2", kind="discipline", row=melee.pk
        )
        assert response.status_code == 200
        assert 'data-testid="dif-parry">35<' in response.text

    def test_a_plain_post_redirects(self, hero, client_for):
        response = client_for(hero.owner).post(
            reverse("sheets:character_edit_field", args=[hero.pk]),
            {
                "kind": "character",
                "field": "name",
                "value": "Ysolde the Bold",
                "original": "Ysolde",
            },
        )
        assert response.status_code == 302
        hero.refresh_from_db()
        assert hero.name == "Ysolde the Bold"

    def test_an_empty_name_is_refused(self, hero, client_for):
        assert edit(client_for(hero.owner), hero, "name", "", "Ysolde").status_code == 422
        hero.refresh_from_db()
        assert hero.name == "Ysolde"


class TestRows:
    def test_it_adds_and_removes_a_discipline(self, hero, client_for):
        client = client_for(hero.owner)
        url = reverse("sheets:character_add_row", args=[hero.pk, "discipline"])
        response = client.post(
            url,
            {
                "discipline-name": "Cartography",
                "discipline-level": "2",
                "discipline-aptitude": "SVY",
            },
            headers={"HX-Request": "true"},
        )
        assert response.status_code == 200
        added = hero.disciplines.get(name="Cartography")
        assert 'data-testid="pro-cartography">70<' in response.text  # SVY 2 + 2 -> 70
        url = reverse("sheets:character_delete_row", args=[hero.pk, "discipline", added.pk])
        assert client.post(url, headers={"HX-Request": "true"}).status_code == 200
        assert not hero.disciplines.filter(name="Cartography").exists()

    def test_it_redraws_weapon_pro_and_defenses_when_a_discipline_comes_or_goes(
        self, hero, client_for
    ):
        client = client_for(hero.owner)
        weapon = hero.weapons.get()
        sword = hero.disciplines.get(name=weapon_discipline("III"))
        melee = hero.disciplines.get(name=MELEE_COMBAT)
        for row in (sword, melee):
            url = reverse("sheets:character_delete_row", args=[hero.pk, "discipline", row.pk])
            response = client.post(url, headers={"HX-Request": "true"})
            assert response.status_code == 200
        # No weapon skill and no Melee Combat: the seed's 80 and 25 fall to the bare aptitudes.
        assert (
            f'<span id="wpn-{weapon.pk}-fast" class="num" hx-swap-oob="true">65</span>'
            in response.text
        )
        assert 'id="defenses" class="derived" hx-swap-oob="true"' in response.text
        assert 'data-testid="dif-dodge">15<' in response.text
        assert 'id="disciplines"' in response.text
        response = client.post(
            reverse("sheets:character_add_row", args=[hero.pk, "discipline"]),
            {
                "discipline-name": MELEE_COMBAT,
                "discipline-level": "2",
                "discipline-aptitude": "SKL",
            },
            headers={"HX-Request": "true"},
        )
        assert response.status_code == 200
        assert 'data-testid="dif-dodge">25<' in response.text
        # The section's own PRO is drawn once, in the section, not again out of band.
        assert response.text.count('data-testid="pro-melee-combat"') == 1

    def test_it_sends_a_new_weapons_numbers_with_its_section(self, hero, client_for):
        response = client_for(hero.owner).post(
            reverse("sheets:character_add_row", args=[hero.pk, "weapon"]),
            {
                "weapon-name": "Dagger",
                "weapon-category": "I",
                "weapon-dmg": "2",
                "weapon-dmg_max": "2",
                "weapon-bonus": "0",
            },
            headers={"HX-Request": "true"},
        )
        assert response.status_code == 200
        assert 'id="weapons"' in response.text
        assert 'id="defenses" class="derived" hx-swap-oob="true"' in response.text
        assert 'id="composites" hx-swap-oob="true"' in response.text
        dagger = hero.weapons.get(name="Dagger")
        assert response.text.count(f'id="wpn-{dagger.pk}-fast"') == 1

    def test_a_duplicate_discipline_is_explained(self, hero, client_for):
        url = reverse("sheets:character_add_row", args=[hero.pk, "discipline"])
        response = client_for(hero.owner).post(
            url,
            {
                "discipline-name": MELEE_COMBAT,
                "discipline-level": "1",
                "discipline-aptitude": "SKL",
            },
            headers={"HX-Request": "true"},
        )
        assert response.status_code == 422
        assert "already exists" in response.text

    def test_a_weapon_above_its_max_is_refused(self, hero, client_for):
        url = reverse("sheets:character_add_row", args=[hero.pk, "weapon"])
        response = client_for(hero.owner).post(
            url,
            {
                "weapon-name": "Club",
                "weapon-category": "V",
                "weapon-dmg": "4",
                "weapon-dmg_max": "2",
                "weapon-bonus": "0",
            },
            headers={"HX-Request": "true"},
        )
        assert response.status_code == 422
        assert not hero.weapons.filter(name="Club").exists()

    def test_an_unknown_section_is_404(self, hero, client_for):
        client = client_for(hero.owner)
        assert (
            client.post(reverse("sheets:character_add_row", args=[hero.pk, "spell"])).status_code
            == 404
        )
        assert (
            client.post(
                reverse("sheets:character_delete_row", args=[hero.pk, "spell", 1])
            ).status_code
            == 404
        )


class TestWounds:
    def test_wounds_past_bzf_cost_vitality_and_record_a_grievous_wound(self, hero, client_for):
        chest = hero.zones.get(name="chest")
        client = client_for(hero.owner)
        url = reverse("sheets:character_wound", args=[hero.pk, chest.pk])
        for _ in range(14):  # BZF 12
            client.post(url, {"delta": "1"}, headers={"HX-Request": "true"})
        chest.refresh_from_db()
        hero.refresh_from_db()
        assert chest.wounds == 14
        assert hero.vitality == 9 - 2
        assert "Stamina test" in chest.grievous
        client.post(url, {"delta": "-1"}, headers={"HX-Request": "true"})
        hero.refresh_from_db()
        assert hero.vitality == 8

    def test_healing_never_goes_below_zero(self, hero, client_for):
        head = hero.zones.get(name="head")
        url = reverse("sheets:character_wound", args=[hero.pk, head.pk])
        response = client_for(hero.owner).post(url, {"delta": "-1"})
        assert response.status_code == 302
        head.refresh_from_db()
        assert head.wounds == 0


def test_it_creates_a_character_from_the_campaign(table, client_for):
    url = reverse("sheets:character_create", args=[table.campaign.pk])
    response = client_for(table.player).post(
        url,
        {
            "name": "Brannoc",
            "archetype": "warrior",
            "foc": 2,
            "spd": 3,
            "skl": 3,
            "vgr": 4,
            "nrv": 2,
            "chr": 1,
            "svy": 2,
        },
    )
    character = Character.objects.get(name="Brannoc")
    assert response["Location"] == sheet_url(character)
    assert character.owner == table.player
    assert not character.is_npc


def test_only_the_gm_creates_npcs(table, client_for):
    url = reverse("sheets:character_create", args=[table.campaign.pk])
    data = {
        "name": "Goblin",
        "is_npc": "on",
        "foc": 1,
        "spd": 2,
        "skl": 2,
        "vgr": 2,
        "nrv": 1,
        "chr": 1,
        "svy": 1,
    }
    client_for(table.player).post(url, data)
    assert not Character.objects.get(name="Goblin").is_npc
    data["name"] = "Hobgoblin"
    client_for(table.gm).post(url, data)
    assert Character.objects.get(name="Hobgoblin").is_npc


def test_outsiders_cannot_create_in_the_campaign(table, client_for):
    url = reverse("sheets:character_create", args=[table.campaign.pk])
    assert client_for(table.outsider).get(url).status_code == 404


def test_hostile_text_is_escaped_on_the_sheet(hero, client_for):
    Character.objects.filter(pk=hero.pk).update(notes="<script>alert(1)</script>", name="<b>x</b>")
    page = client_for(hero.owner).get(sheet_url(hero)).text
    assert "<script>alert(1)" not in page
    assert "<b>x</b>" not in page


def test_the_print_view_leaves_out_blank_identity_fields(hero, client_for):
    page = client_for(hero.owner).get(reverse("sheets:character_print", args=[hero.pk])).text
    assert "No occupation · 168 lb</p>" in page
    hero.occupation, hero.sex, hero.age = "Sellsword", "F", 31
    hero.save()
    page = client_for(hero.owner).get(reverse("sheets:character_print", args=[hero.pk])).text
    assert "Sellsword · F · age 31 · 168 lb</p>" in page
