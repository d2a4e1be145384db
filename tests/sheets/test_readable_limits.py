"""A bad number on the sheet gets a message a player can act on, never a database
constraint's name, and the same message for every value past the same limit."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from sheets.models import Character

pytestmark = [pytest.mark.django_db, pytest.mark.both_databases]

HTMX = {"headers": {"HX-Request": "true"}}


def edit(client, character, field, value, original, kind="character", row=""):
    return client.post(
        reverse("sheets:character_edit_field", args=[character.pk]),
        {"kind": kind, "row": row, "field": field, "value": value, "original": original},
        **HTMX,
    )


@pytest.mark.parametrize("value", ["-3", "0"])
def test_it_says_the_same_for_every_aptitude_below_one(hero, client_for, value):
    response = edit(client_for(hero.owner), hero, "spd", value, str(hero.spd))
    assert response.status_code == 422
    assert "greater than or equal to 1" in response.text
    assert "greater than or equal to 0" not in response.text


def test_it_refuses_a_negative_vitality(hero, client_for, api_for):
    response = edit(client_for(hero.owner), hero, "vitality", "-50", str(hero.vitality))
    assert response.status_code == 422
    assert Character.objects.get(pk=hero.pk).vitality == hero.vitality
    answer = api_for(hero.owner).patch(
        f"/api/characters/{hero.pk}/", {"vitality": -50}, format="json"
    )
    assert answer.status_code == 400 and "vitality" in answer.json()


def test_it_explains_an_arm_above_the_zones_max_in_words(hero, client_for, api_for):
    zone = hero.zones.get(name="chest")
    zone.arm_max = 2
    zone.arm = 2
    zone.save()
    response = edit(client_for(hero.owner), hero, "arm", "4", "2", kind="zone", row=zone.pk)
    assert response.status_code == 422
    assert "ARM cannot be above the zone&#x27;s max ARM." in response.text
    assert "zone_arm_within_max" not in response.text
    answer = api_for(hero.owner).patch(
        f"/api/characters/{hero.pk}/zones/{zone.pk}/", {"arm": 4}, format="json"
    )
    assert answer.status_code == 400
    assert "zone_arm_within_max" not in answer.text
    assert "max ARM" in answer.text


# A limit across two fields of a row (ARM within max ARM, DMG within max DMG) is the model's
# check: it came back as `__all__`, or `zones.0.__all__`, instead of naming the field.


def test_the_sheet_api_names_the_row_and_field_of_a_limit_across_fields(hero, api_for):
    api = api_for(hero.owner)
    zones_before = list(hero.zones.values_list("name", "arm", "arm_max"))
    # No max ARM sent: the model's default (0) is what ARM 3 is above.
    answer = api.patch(
        f"/api/characters/{hero.pk}/",
        {"zones": [{"name": "head"}, {"name": "chest", "arm": 3}]},
        format="json",
    )
    assert answer.status_code == 400
    assert answer.json() == {"zones": {"1": {"arm": ["ARM cannot be above the zone's max ARM."]}}}
    assert list(hero.zones.values_list("name", "arm", "arm_max")) == zones_before
    answer = api.patch(
        f"/api/characters/{hero.pk}/",
        {"weapons": [{"name": "Knife", "category": "I", "dmg": 2}]},
        format="json",
    )
    assert answer.status_code == 400
    assert answer.json() == {
        "weapons": {"0": {"dmg": ["DMG cannot be above the weapon's max DMG."]}}
    }
    assert hero.weapons.filter(name="Long Sword").exists()


def test_the_row_api_names_the_field_of_a_limit_across_fields(hero, api_for):
    weapon = hero.weapons.get()
    answer = api_for(hero.owner).patch(
        f"/api/characters/{hero.pk}/weapons/{weapon.pk}/", {"dmg_max": 2}, format="json"
    )
    assert answer.status_code == 400
    assert answer.json() == {"dmg": ["DMG cannot be above the weapon's max DMG."]}


def test_the_library_names_the_row_and_field_of_a_limit_across_fields(table, api_for):
    body = {"name": "Guard", "zones": [{"name": "Head", "arm": 3}]}
    answer = api_for(table.gm).post("/api/library/", body, format="json")
    assert answer.status_code == 400
    assert answer.json() == {"zones.0.arm": ["ARM cannot be above the zone's max ARM."]}


def test_the_import_page_names_the_row_and_field_of_a_limit_across_fields(table, client_for):
    sheet = {"name": "Brute", "weapons": [{"name": "Club", "category": "I", "dmg": 2}]}
    response = client_for(table.player).post(
        reverse("sheets:character_import", args=[table.campaign.pk]), {"text": json.dumps(sheet)}
    )
    assert response.status_code == 422
    assert "weapons.0.dmg: DMG cannot be above the weapon&#x27;s max DMG." in response.text
    assert not table.campaign.characters.filter(name="Brute").exists()


def test_the_row_api_names_the_name_of_a_row_that_already_exists(hero, api_for):
    api = api_for(hero.owner)
    discipline = hero.disciplines.first()
    answer = api.post(
        f"/api/characters/{hero.pk}/disciplines/", {"name": discipline.name}, format="json"
    )
    assert answer.status_code == 400
    assert list(answer.json()) == ["name"]
    answer = api.post(f"/api/characters/{hero.pk}/zones/", {"name": "chest"}, format="json")
    assert answer.status_code == 400
    assert list(answer.json()) == ["name"]
