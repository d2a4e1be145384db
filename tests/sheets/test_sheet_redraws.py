"""What the live sheet redraws out of band when a row comes or goes, or the BZF changes: every
number that depends on it, so nothing on the page is left stale."""

from __future__ import annotations

import pytest
from django.urls import reverse

from rules.engine.omg_data import MELEE_COMBAT, weapon_discipline

pytestmark = [pytest.mark.django_db, pytest.mark.both_databases]

HTMX = {"HTTP_HX_REQUEST": "true"}
SWORD = weapon_discipline("III")


def add_discipline(client, character, name, level="2", aptitude="SKL", **extra):
    return client.post(
        reverse("sheets:character_add_row", args=[character.pk, "discipline"]),
        {"discipline-name": name, "discipline-level": level, "discipline-aptitude": aptitude},
        **extra,
    )


def delete_discipline(client, character, name, **extra):
    row = character.disciplines.get(name=name)
    return client.post(
        reverse("sheets:character_delete_row", args=[character.pk, "discipline", row.pk]),
        **extra,
    )


def edit(client, character, field, value, original, **extra):
    return client.post(
        reverse("sheets:character_edit_field", args=[character.pk]),
        {"kind": "character", "row": "", "field": field, "value": value, "original": original},
        **extra,
    )


def skill_label(weapon, text):
    return f'<small id="wpn-{weapon.pk}-skill" class="muted" hx-swap-oob="true">{text}</small>'


class TestDisciplineRows:
    def test_it_redraws_the_weapons_skill_level_when_its_discipline_goes(self, hero, client_for):
        weapon = hero.weapons.get()
        response = delete_discipline(client_for(hero.owner), hero, SWORD, **HTMX)
        assert response.status_code == 200
        assert skill_label(weapon, f"{SWORD} (undisciplined)") in response.text
        assert f'<span id="wpn-{weapon.pk}-fast" class="num" hx-swap-oob="true">65<' in (
            response.text
        )

    def test_it_redraws_the_weapons_skill_level_when_its_discipline_comes(self, hero, client_for):
        client = client_for(hero.owner)
        weapon = hero.weapons.get()
        delete_discipline(client, hero, SWORD, **HTMX)
        response = add_discipline(client, hero, SWORD, level="3", **HTMX)
        assert response.status_code == 200
        assert skill_label(weapon, f"{SWORD} 3") in response.text
        assert f'<span id="wpn-{weapon.pk}-fast" class="num" hx-swap-oob="true">80<' in (
            response.text
        )

    def test_it_sends_every_dependent_number_with_a_discipline(self, hero, client_for):
        response = delete_discipline(client_for(hero.owner), hero, MELEE_COMBAT, **HTMX)
        for oob in (
            'id="composites" hx-swap-oob="true"',
            'id="derived" class="derived" hx-swap-oob',
        ):
            assert oob in response.text
        assert 'data-testid="dif-parry">20<' in response.text  # SKL 4, no Melee Combat
        # The disciplines section comes back whole, so its PRO is not also sent out of band.
        assert 'id="disciplines"' in response.text
        assert response.text.count('data-testid="pro-melee-combat"') == 0

    def test_a_discipline_level_edit_redraws_the_weapons_skill_level(self, hero, client_for):
        weapon = hero.weapons.get()
        sword = hero.disciplines.get(name=SWORD)
        response = client_for(hero.owner).post(
            reverse("sheets:character_edit_field", args=[hero.pk]),
            {
                "kind": "discipline",
                "row": sword.pk,
                "field": "level",
                "value": "4",
                "original": "3",
            },
            **HTMX,
        )
        assert response.status_code == 200
        assert skill_label(weapon, f"{SWORD} 4") in response.text

    def test_the_page_draws_the_skill_label_once_and_in_place(self, hero, client_for):
        weapon = hero.weapons.get()
        page = client_for(hero.owner).get(reverse("sheets:character_detail", args=[hero.pk]))
        assert page.text.count(f'id="wpn-{weapon.pk}-skill"') == 1
        assert f'<small id="wpn-{weapon.pk}-skill" class="muted">{SWORD} 3</small>' in page.text

    def test_without_htmx_adding_and_deleting_redirect_to_the_sheet(self, hero, client_for):
        client = client_for(hero.owner)
        sheet = reverse("sheets:character_detail", args=[hero.pk])
        assert delete_discipline(client, hero, SWORD)["Location"] == sheet
        assert add_discipline(client, hero, SWORD)["Location"] == sheet
        assert hero.disciplines.get(name=SWORD).level == 2


class TestZonesFollowTheBzf:
    @pytest.mark.parametrize(
        ("field", "value", "original"), [("bzf", "20", "12"), ("weight", "280", "168")]
    )
    def test_it_redraws_the_zones_when_the_bzf_changes(
        self, hero, client_for, field, value, original
    ):
        hero.zones.filter(name="chest").update(wounds=14)
        response = edit(client_for(hero.owner), hero, field, value, original, **HTMX)
        assert response.status_code == 200
        assert '<div id="zones" class="zones" hx-swap-oob="true">' in response.text
        assert 'data-testid="wounds-chest">14</span><span class="muted">/20</span>' in response.text
        assert "+2 over" not in response.text  # 14 wounds were over BZF 12, not over 20
        # The body diagram comes inside the zones, once, not also out of band on its own.
        assert response.text.count('id="body-diagram"') == 1
        assert '<figure id="body-diagram" class="body-diagram">' in response.text
        assert "chest: 14 wounds of BZF 20" in response.text

    def test_other_edits_redraw_only_the_body_diagram(self, hero, client_for):
        response = edit(client_for(hero.owner), hero, "name", "Ysolde Varr", "Ysolde", **HTMX)
        assert response.status_code == 200
        assert 'id="zones"' not in response.text
        assert '<figure id="body-diagram" class="body-diagram" hx-swap-oob="true">' in (
            response.text
        )

    def test_a_refused_bzf_redraws_no_zones(self, hero, client_for):
        response = edit(client_for(hero.owner), hero, "bzf", "0", "12", **HTMX)
        assert response.status_code == 422
        assert 'id="zones"' not in response.text

    def test_without_htmx_a_bzf_edit_redirects(self, hero, client_for):
        response = edit(client_for(hero.owner), hero, "bzf", "20", "12")
        assert response.status_code == 302
        hero.refresh_from_db()
        assert hero.bzf == 20


def test_the_page_shows_no_template_comment_as_text(hero, client_for):
    # A {# #} comment ends at its line: one spread over two lines was printed on the sheet.
    page = client_for(hero.owner).get(reverse("sheets:character_detail", args=[hero.pk]))
    assert "{#" not in page.text
    assert "out of band" not in page.text
