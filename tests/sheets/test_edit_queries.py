"""One sheet edit costs a bounded number of queries (a one-field PATCH once took 63: one
SAVEPOINT + SELECT + RELEASE per constraint of every field, checked twice)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from sheets import services

pytestmark = pytest.mark.both_databases


def test_it_patches_one_field_in_a_few_queries(hero, api_for, django_assert_max_num_queries):
    client = api_for(hero.owner)
    url = reverse("api:character-detail", args=[hero.pk])
    with django_assert_max_num_queries(15):
        assert client.get(url).status_code == 200
        assert client.patch(url, {"notes": "Owes the ferryman."}, format="json").status_code == 200


def edit(hero, kind, row_id, field, value, original):
    """The sheet page's edit of one field, by the sheet's player."""
    args = {"kind": kind, "row_id": row_id, "field": field, "value": value, "original": original}
    return services.edit_field(user=hero.owner, character=hero, **args)


def test_it_edits_one_field_in_a_few_queries(hero, django_assert_max_num_queries):
    with django_assert_max_num_queries(11):
        edit(hero, "character", None, "spd", "4", "3")
    weapon = hero.weapons.get()
    with django_assert_max_num_queries(15):
        edit(hero, "weapon", weapon.pk, "dmg", "3", "4")


def test_it_still_checks_the_constraint_tying_the_edited_field(hero):
    """DMG ≤ max DMG is checked when DMG changes, though max DMG is not edited."""
    weapon = hero.weapons.get()
    with pytest.raises(ValidationError, match="DMG cannot be above"):
        edit(hero, "weapon", weapon.pk, "dmg_max", "2", "4")
    weapon.refresh_from_db()
    assert (weapon.dmg, weapon.dmg_max) == (4, 4)


def test_the_htmx_edit_request_costs_a_few_queries(hero, client_for, django_assert_max_num_queries):
    """The whole request: session, user, the sheet read without its rows (they are read again
    after the write), the edit, and the sheet read again for the redraw."""
    client = client_for(hero.owner)
    url = reverse("sheets:character_edit_field", args=[hero.pk])
    form = {"kind": "character", "field": "notes", "value": "Owes the ferryman.", "original": ""}
    with django_assert_max_num_queries(15):
        response = client.post(url, form, headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert "Owes the ferryman." in response.content.decode()
