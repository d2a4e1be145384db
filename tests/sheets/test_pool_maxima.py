"""Current Vitality, Mana and Chi never exceed their maxima (VIT, MNA, CHI): a form error on
the sheet, a 400 from the API, and a lower aptitude lowers a full pool with its maximum."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from sheets.models import Character

pytestmark = [pytest.mark.django_db, pytest.mark.both_databases]

HTMX = {"HTTP_HX_REQUEST": "true"}
POOLS = [("vitality", "9", "Vitality"), ("mana", "8", "Mana"), ("chi", "14", "Chi")]


def edit(client, character, field, value, original, **extra):
    return client.post(
        reverse("sheets:character_edit_field", args=[character.pk]),
        {"kind": "character", "row": "", "field": field, "value": value, "original": original},
        **extra,
    )


def detail(character):
    return f"/api/characters/{character.pk}/"


class TestSheet:
    @pytest.mark.parametrize(("field", "maximum", "name"), POOLS)
    def test_it_refuses_a_pool_above_its_maximum(self, hero, client_for, field, maximum, name):
        response = edit(client_for(hero.owner), hero, field, str(int(maximum) + 1), maximum, **HTMX)
        assert response.status_code == 422
        assert f"Current {name} cannot exceed its maximum, {maximum}." in response.text
        hero.refresh_from_db()
        assert getattr(hero, field) == int(maximum)

    @pytest.mark.parametrize(("field", "maximum", "name"), POOLS)
    def test_it_takes_a_pool_at_or_below_its_maximum(self, hero, client_for, field, maximum, name):
        client = client_for(hero.owner)
        assert edit(client, hero, field, "1", maximum, **HTMX).status_code == 200
        assert edit(client, hero, field, maximum, "1", **HTMX).status_code == 200
        hero.refresh_from_db()
        assert getattr(hero, field) == int(maximum)

    def test_without_htmx_a_pool_above_its_maximum_is_a_message(self, hero, client_for):
        client = client_for(hero.owner)
        response = edit(client, hero, "vitality", "50", "9", follow=True)
        assert "Current Vitality cannot exceed its maximum, 9." in response.text
        hero.refresh_from_db()
        assert hero.vitality == 9

    def test_a_lower_aptitude_lowers_the_pools_it_caps(self, hero, client_for):
        # VGR 5 -> 3: VIT 9 -> 7 and CHI 14 -> 12; MNA (no VGR in it) stays 8.
        response = edit(client_for(hero.owner), hero, "vgr", "3", "5", **HTMX)
        assert response.status_code == 200
        hero.refresh_from_db()
        assert (hero.vitality, hero.mana, hero.chi) == (7, 8, 12)
        assert 'id="f-character-0-vitality"' in response.text
        assert 'id="f-character-0-vitality-value" name="value" type="text" value="7"' in (
            response.text
        )

    def test_a_higher_aptitude_leaves_the_pools_alone(self, hero, client_for):
        edit(client_for(hero.owner), hero, "foc", "3", "2", **HTMX)
        hero.refresh_from_db()
        assert (hero.vitality, hero.mana, hero.chi) == (9, 8, 14)

    def test_a_sheet_already_over_its_maximum_can_still_be_edited(self, hero, client_for):
        Character.objects.filter(pk=hero.pk).update(vitality=20)
        response = edit(client_for(hero.owner), hero, "notes", "Bruised.", "", **HTMX)
        assert response.status_code == 200
        hero.refresh_from_db()
        assert (hero.notes, hero.vitality) == ("Bruised.", 20)


class TestApi:
    @pytest.mark.parametrize(("field", "maximum", "name"), POOLS)
    def test_it_answers_400_for_a_pool_above_its_maximum(self, hero, api_for, field, maximum, name):
        response = api_for(hero.owner).patch(detail(hero), {field: int(maximum) + 1}, format="json")
        assert response.status_code == 400
        assert response.json()[field] == [f"Current {name} cannot exceed its maximum, {maximum}."]
        hero.refresh_from_db()
        assert getattr(hero, field) == int(maximum)

    def test_it_answers_400_for_a_new_character_over_its_maximum(self, table, api_for):
        response = api_for(table.player).post(
            "/api/characters/",
            {"campaign": table.campaign.pk, "name": "Overfull", "vgr": 2, "vitality": 10},
            format="json",
        )
        assert response.status_code == 400
        assert "vitality" in response.json()
        assert not Character.objects.filter(name="Overfull").exists()

    def test_a_lower_aptitude_lowers_the_pools_it_caps(self, hero, api_for):
        response = api_for(hero.owner).patch(detail(hero), {"vgr": 3}, format="json")
        assert response.status_code == 200
        body = response.json()
        assert (body["vitality"], body["mana"], body["chi"]) == (7, 8, 12)
        assert (body["derived"]["vit"], body["derived"]["chi"]) == (7, 12)

    def test_a_lower_aptitude_with_a_pool_too_high_for_it_is_a_400(self, hero, api_for):
        response = api_for(hero.owner).patch(detail(hero), {"vgr": 3, "vitality": 9}, format="json")
        assert response.status_code == 400
        assert response.json()["vitality"] == ["Current Vitality cannot exceed its maximum, 7."]
        hero.refresh_from_db()
        assert (hero.vgr, hero.vitality) == (5, 9)

    def test_the_gm_is_held_to_the_same_maximum(self, hero, table, api_for):
        response = api_for(table.gm).patch(detail(hero), {"chi": 15}, format="json")
        assert response.status_code == 400


def test_an_import_over_its_maximum_is_a_form_error(hero, table, client_for):
    client = client_for(table.player)
    document = json.loads(client.get(reverse("sheets:character_export", args=[hero.pk])).content)
    document["mana"] = 9
    response = client.post(
        reverse("sheets:character_import", args=[table.campaign.pk]),
        {"text": json.dumps(document)},
    )
    assert response.status_code == 422
    assert "mana: Current Mana cannot exceed its maximum, 8." in response.text
    assert Character.objects.filter(name="Ysolde").count() == 1
