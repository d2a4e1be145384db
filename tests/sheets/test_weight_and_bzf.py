"""A new weight sets BZF (weight / 14) unless BZF was rolled at creation: on the sheet and
through the characters API alike."""

from __future__ import annotations

import pytest
from django.urls import reverse

from sheets.models import Character

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def detail(character):
    return f"/api/characters/{character.pk}/"


def edit(client, character, field, value, original, **extra):
    return client.post(
        reverse("sheets:character_edit_field", args=[character.pk]),
        {"kind": "character", "row": "", "field": field, "value": value, "original": original},
        **extra,
    )


class TestApi:
    def test_a_patched_weight_sets_bzf(self, hero, api_for):
        response = api_for(hero.owner).patch(detail(hero), {"weight": 280}, format="json")
        assert response.status_code == 200
        assert (response.json()["bzf"], response.json()["derived"]["bzf"]) == (20, 20)
        hero.refresh_from_db()
        assert (hero.weight, hero.bzf) == (280, 20)

    def test_it_agrees_with_the_sheet(self, hero, table, api_for, client_for):
        twin = Character.objects.get(pk=hero.pk)
        twin.pk = None
        twin.name = "Twin"
        twin.save()
        api_for(hero.owner).patch(detail(hero), {"weight": 181}, format="json")
        edit(client_for(hero.owner), twin, "weight", "181", "168", **HTMX)
        hero.refresh_from_db()
        twin.refresh_from_db()
        assert hero.bzf == twin.bzf == 12

    def test_a_rolled_bzf_stays_put(self, hero, api_for):
        Character.objects.filter(pk=hero.pk).update(bzf_rolled=True, bzf=15)
        response = api_for(hero.owner).patch(detail(hero), {"weight": 280}, format="json")
        assert response.status_code == 200
        hero.refresh_from_db()
        assert (hero.weight, hero.bzf) == (280, 15)

    def test_a_bzf_sent_with_the_weight_wins(self, hero, api_for):
        response = api_for(hero.owner).patch(
            detail(hero), {"weight": 280, "bzf": 18}, format="json"
        )
        assert response.status_code == 200
        hero.refresh_from_db()
        assert (hero.weight, hero.bzf) == (280, 18)

    def test_a_put_of_the_read_document_with_a_new_weight_sets_bzf(self, hero, api_for):
        client = api_for(hero.owner)
        document = client.get(detail(hero)).json()
        document["weight"] = 280
        for key in ("disciplines", "weapons", "zones", "creation", "pending_raises"):
            document.pop(key)
        response = client.put(detail(hero), document, format="json")
        assert response.status_code == 200, response.json()
        assert response.json()["bzf"] == 20

    def test_a_weight_under_14_lb_is_a_400_not_a_crash(self, hero, api_for):
        response = api_for(hero.owner).patch(detail(hero), {"weight": 10}, format="json")
        assert response.status_code == 400
        assert "weight" in response.json()
        hero.refresh_from_db()
        assert (hero.weight, hero.bzf) == (168, 12)

    def test_a_new_character_under_14_lb_is_a_400(self, table, api_for):
        response = api_for(table.player).post(
            "/api/characters/",
            {"campaign": table.campaign.pk, "name": "Sprite", "weight": 5},
            format="json",
        )
        assert response.status_code == 400
        assert "weight" in response.json()

    def test_another_player_cannot_change_the_weight(self, hero, table, api_for):
        from sheets.models import Membership
        from tests.factories import make_user

        other = make_user()
        Membership.objects.create(campaign=table.campaign, user=other)
        response = api_for(other).patch(detail(hero), {"weight": 280}, format="json")
        assert response.status_code == 403
        hero.refresh_from_db()
        assert hero.bzf == 12


class TestSheet:
    def test_a_weight_under_14_lb_is_a_form_error_not_a_crash(self, hero, client_for):
        response = edit(client_for(hero.owner), hero, "weight", "10", "168", **HTMX)
        assert response.status_code == 422
        assert "Under 14 lb" in response.text
        hero.refresh_from_db()
        assert (hero.weight, hero.bzf) == (168, 12)

    def test_without_htmx_a_weight_under_14_lb_is_a_message(self, hero, client_for):
        response = edit(client_for(hero.owner), hero, "weight", "10", "168", follow=True)
        assert "Under 14 lb" in response.text

    def test_a_rolled_bzf_stays_put_on_the_sheet_too(self, hero, client_for):
        Character.objects.filter(pk=hero.pk).update(bzf_rolled=True, bzf=15)
        response = edit(client_for(hero.owner), hero, "weight", "280", "168", **HTMX)
        assert response.status_code == 200
        hero.refresh_from_db()
        assert (hero.weight, hero.bzf) == (280, 15)
