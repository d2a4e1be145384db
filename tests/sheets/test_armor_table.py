"""Choosing an armor type for a zone fills ARM and max ARM from the armor table, unless they
were typed in; on the sheet, through the zone rows of the API and in a whole document."""

from __future__ import annotations

import pytest
from django.urls import reverse

from sheets.models import BodyZone

pytestmark = [pytest.mark.django_db, pytest.mark.both_databases]

HTMX = {"HTTP_HX_REQUEST": "true"}


def arm(zone: BodyZone) -> tuple[int, int]:
    zone.refresh_from_db()
    return zone.arm, zone.arm_max


def edit_zone(client, character, zone, field, value, original, **extra):
    return client.post(
        reverse("sheets:character_edit_field", args=[character.pk]),
        {"kind": "zone", "row": zone.pk, "field": field, "value": value, "original": original},
        **extra,
    )


def add_zone(client, character, extra=HTMX, **fields):
    data = {"zone-name": "tail", "zone-armor_type": "", "zone-arm": "", "zone-arm_max": ""}
    data.update({f"zone-{k}": v for k, v in fields.items()})
    data.setdefault("zone-arm_bonus", "0")
    return client.post(
        reverse("sheets:character_add_row", args=[character.pk, "zone"]), data, **extra
    )


class TestSheet:
    def test_choosing_an_armor_type_fills_its_arm(self, hero, client_for):
        chest = hero.zones.get(name="chest")
        response = edit_zone(
            client_for(hero.owner), hero, chest, "armor_type", "Plate mail", "", **HTMX
        )
        assert response.status_code == 200
        assert arm(chest) == (5, 5)
        # The two fields it filled are redrawn with it.
        for field in ("arm", "arm_max"):
            assert f'<form id="f-zone-{chest.pk}-{field}"' in response.text
        assert f'id="f-zone-{chest.pk}-arm_max-value" name="value" type="text" value="5"' in (
            response.text
        )

    def test_another_armor_type_replaces_a_worn_one(self, hero, client_for):
        chest = hero.zones.get(name="chest")
        BodyZone.objects.filter(pk=chest.pk).update(armor_type="Chain mail", arm=1, arm_max=4)
        edit_zone(
            client_for(hero.owner), hero, chest, "armor_type", "Leather", "Chain mail", **HTMX
        )
        assert arm(chest) == (2, 2)

    def test_taking_the_armor_off_leaves_no_arm(self, hero, client_for):
        chest = hero.zones.get(name="chest")
        BodyZone.objects.filter(pk=chest.pk).update(armor_type="Leather", arm=2, arm_max=2)
        edit_zone(client_for(hero.owner), hero, chest, "armor_type", "", "Leather", **HTMX)
        assert arm(chest) == (0, 0)

    def test_other_zone_edits_leave_the_arm_alone(self, hero, client_for):
        chest = hero.zones.get(name="chest")
        BodyZone.objects.filter(pk=chest.pk).update(armor_type="Leather", arm=1, arm_max=2)
        response = edit_zone(client_for(hero.owner), hero, chest, "arm_bonus", "1", "0", **HTMX)
        assert response.status_code == 200
        assert arm(chest) == (1, 2)
        assert f'id="f-zone-{chest.pk}-arm_max"' not in response.text

    def test_without_htmx_it_fills_the_arm_and_redirects(self, hero, client_for):
        chest = hero.zones.get(name="chest")
        response = edit_zone(client_for(hero.owner), hero, chest, "armor_type", "Padded", "")
        assert response.status_code == 302
        assert arm(chest) == (1, 1)

    def test_a_new_zone_takes_its_arm_from_the_table(self, hero, client_for):
        response = add_zone(client_for(hero.owner), hero, armor_type="Scale mail")
        assert response.status_code == 200
        assert arm(hero.zones.get(name="tail")) == (4, 4)

    def test_without_htmx_a_new_zone_takes_its_arm_and_redirects(self, hero, client_for):
        response = add_zone(client_for(hero.owner), hero, extra={}, armor_type="Ring mail")
        assert response["Location"] == reverse("sheets:character_detail", args=[hero.pk])
        assert arm(hero.zones.get(name="tail")) == (4, 4)

    def test_a_new_zone_keeps_the_arm_typed_in(self, hero, client_for):
        add_zone(client_for(hero.owner), hero, armor_type="Scale mail", arm="2")
        assert arm(hero.zones.get(name="tail")) == (2, 4)

    def test_a_new_zone_without_armor_has_none(self, hero, client_for):
        assert add_zone(client_for(hero.owner), hero).status_code == 200
        assert arm(hero.zones.get(name="tail")) == (0, 0)

    def test_the_add_form_leaves_arm_blank(self, hero, client_for):
        page = client_for(hero.owner).get(reverse("sheets:character_detail", args=[hero.pk]))
        assert 'name="zone-arm_max" min="0"' in page.text
        assert 'name="zone-arm_max" value="0"' not in page.text


class TestApi:
    def zones(self, hero):
        return f"/api/characters/{hero.pk}/zones/"

    def test_a_new_zone_takes_its_arm_from_the_table(self, hero, api_for):
        response = api_for(hero.owner).post(
            self.zones(hero), {"name": "tail", "armor_type": "Chain mail"}, format="json"
        )
        assert response.status_code == 201
        assert (response.json()["arm"], response.json()["arm_max"]) == (4, 4)

    def test_a_new_zone_keeps_the_arm_sent(self, hero, api_for):
        response = api_for(hero.owner).post(
            self.zones(hero),
            {"name": "tail", "armor_type": "Chain mail", "arm": 3, "arm_max": 4},
            format="json",
        )
        assert (response.json()["arm"], response.json()["arm_max"]) == (3, 4)

    def test_a_patched_armor_type_fills_its_arm(self, hero, api_for):
        chest = hero.zones.get(name="chest")
        response = api_for(hero.owner).patch(
            f"{self.zones(hero)}{chest.pk}/", {"armor_type": "Boiled Leather"}, format="json"
        )
        assert response.status_code == 200
        assert arm(chest) == (3, 3)

    def test_a_patch_with_the_arm_keeps_it(self, hero, api_for):
        chest = hero.zones.get(name="chest")
        api_for(hero.owner).patch(
            f"{self.zones(hero)}{chest.pk}/",
            {"armor_type": "Boiled Leather", "arm": 1},
            format="json",
        )
        assert arm(chest) == (1, 3)

    def test_a_patch_of_the_same_armor_type_keeps_a_worn_arm(self, hero, api_for):
        chest = hero.zones.get(name="chest")
        BodyZone.objects.filter(pk=chest.pk).update(armor_type="Leather", arm=1, arm_max=2)
        api_for(hero.owner).patch(
            f"{self.zones(hero)}{chest.pk}/", {"armor_type": "Leather", "wounds": 2}, format="json"
        )
        assert arm(chest) == (1, 2)

    def test_zones_sent_with_a_new_character_take_their_arm_from_the_table(self, table, api_for):
        response = api_for(table.player).post(
            "/api/characters/",
            {
                "campaign": table.campaign.pk,
                "name": "Knight",
                "zones": [{"name": "head", "armor_type": "Plate mail"}, {"name": "chest"}],
            },
            format="json",
        )
        assert response.status_code == 201
        zones = {z["name"]: (z["arm"], z["arm_max"]) for z in response.json()["zones"]}
        assert zones == {"head": (5, 5), "chest": (0, 0)}

    def test_an_outsider_cannot_dress_a_zone(self, hero, table, api_for):
        chest = hero.zones.get(name="chest")
        response = api_for(table.outsider).patch(
            f"{self.zones(hero)}{chest.pk}/", {"armor_type": "Plate mail"}, format="json"
        )
        assert response.status_code == 404
        assert arm(chest) == (0, 0)
