"""A sheet's own fields are written by one service, ``services.write_character``: the sheet
page's field edits, the API's PUT and PATCH and the JSON import follow the same rule for
BZF, the pools and their maxima, conflicts and access. Each case here goes through every
entry point; the first two used to differ between the page and the API."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import PermissionDenied
from django.urls import reverse

from sheets import services
from sheets.models import Character, Membership
from tests.factories import make_user

pytestmark = [pytest.mark.django_db, pytest.mark.both_databases]

HTMX = {"HTTP_HX_REQUEST": "true"}


def on_the_sheet(client, character, field, value):
    """The page's edit of one field, sent with the value it shows now."""
    shown = getattr(Character.objects.get(pk=character.pk), field)
    return client.post(
        reverse("sheets:character_edit_field", args=[character.pk]),
        {"kind": "character", "field": field, "value": value, "original": str(shown)},
        **HTMX,
    )


def through_the_api(client, character, values):
    return client.patch(f"/api/characters/{character.pk}/", values, format="json")


def imported(client, character, drop=(), **changes):
    """The character exported, changed, and imported into its campaign as a new sheet."""
    document = json.loads(
        client.get(reverse("sheets:character_export", args=[character.pk])).content
    )
    document.update({"name": "Copy", **changes})
    for key in drop:
        document.pop(key)
    return client.post(
        reverse("sheets:character_import", args=[character.campaign_id]),
        {"text": json.dumps(document)},
    )


def twins(hero, n=1):
    """Copies of the hero's row (no sub-rows), one per entry point."""
    out = []
    for i in range(n):
        twin = Character.objects.get(pk=hero.pk)
        twin.pk = None
        twin.name = f"Twin {i}"
        twin.save()
        out.append(twin)
    return out


def test_it_leaves_a_pool_alone_when_another_field_is_written(hero, client_for, api_for):
    """A Vitality some older version let go over the top is neither refused nor lowered by an
    edit of the notes: the page kept it, the API lowered it to the maximum."""
    (twin,) = twins(hero)
    Character.objects.filter(pk__in=[hero.pk, twin.pk]).update(vitality=20)
    assert on_the_sheet(client_for(hero.owner), hero, "notes", "Bruised.").status_code == 200
    assert through_the_api(api_for(hero.owner), twin, {"notes": "Bruised."}).status_code == 200
    assert Character.objects.get(pk=hero.pk).vitality == 20
    assert Character.objects.get(pk=twin.pk).vitality == 20


def test_the_weight_written_again_keeps_a_bzf_typed_by_hand(hero, client_for, api_for):
    """BZF follows a new weight, not the same weight sent back (as a PUT of the document
    read does): the page set BZF from it on every edit of the field."""
    (twin,) = twins(hero)
    Character.objects.filter(pk__in=[hero.pk, twin.pk]).update(bzf=15)
    assert on_the_sheet(client_for(hero.owner), hero, "weight", "168").status_code == 200
    assert through_the_api(api_for(hero.owner), twin, {"weight": 168}).status_code == 200
    assert imported(client_for(hero.owner), hero, bzf=15).status_code == 302
    assert {c.name: c.bzf for c in Character.objects.all()} == {
        "Ysolde": 15,
        "Twin 0": 15,
        "Copy": 15,
    }
    # A new weight sets it, everywhere (a new sheet: unless the document gives BZF).
    assert on_the_sheet(client_for(hero.owner), hero, "weight", "280").status_code == 200
    assert through_the_api(api_for(hero.owner), twin, {"weight": 280}).status_code == 200
    response = imported(client_for(hero.owner), hero, drop=["bzf"], name="New", weight=280)
    assert response.status_code == 302
    assert {c.name: c.bzf for c in Character.objects.all()} == {
        "Ysolde": 20,
        "Twin 0": 20,
        "Copy": 15,
        "New": 20,
    }


def test_a_lower_aptitude_lowers_the_pools_not_written_with_it(hero, client_for, api_for):
    # VGR 5 -> 3: VIT 9 -> 7 and CHI 14 -> 12; MNA (no VGR in it) stays 8.
    (twin,) = twins(hero)
    assert on_the_sheet(client_for(hero.owner), hero, "vgr", "3").status_code == 200
    assert through_the_api(api_for(hero.owner), twin, {"vgr": 3}).status_code == 200
    for character in (hero, twin):
        character.refresh_from_db()
        assert (character.vitality, character.mana, character.chi) == (7, 8, 12)


def test_a_pool_written_over_its_maximum_is_refused_alike(hero, client_for, api_for):
    """The same message from the page (422), the API (400) and the import (422)."""
    message = "Current Vitality cannot exceed its maximum, 9."
    (twin,) = twins(hero)
    response = on_the_sheet(client_for(hero.owner), hero, "vitality", "10")
    assert response.status_code == 422
    assert message in response.text
    response = through_the_api(api_for(hero.owner), twin, {"vitality": 10})
    assert response.status_code == 400
    assert response.json() == {"vitality": [message]}
    response = imported(client_for(hero.owner), hero, vitality=10)
    assert response.status_code == 422
    assert f"vitality: {message}" in response.text
    assert not Character.objects.filter(name="Copy").exists()
    assert {c.vitality for c in Character.objects.all()} == {9}


class TestTheService:
    def test_it_checks_access_itself(self, hero, table):
        start = Character.objects.get(pk=hero.pk).version
        other = make_user()
        Membership.objects.create(campaign=table.campaign, user=other)
        with pytest.raises(PermissionDenied):
            services.write_character(user=other, character=hero, values={"notes": "Mine."})
        with pytest.raises(PermissionDenied):
            services.write_character(user=table.player, character=hero, values={"is_npc": True})
        with pytest.raises(PermissionDenied):
            services.write_character(
                user=table.outsider, values={"campaign": table.campaign, "name": "Spy"}
            )
        with pytest.raises(PermissionDenied):
            services.write_character(
                user=table.player, values={"campaign": table.campaign, "name": "X", "is_npc": True}
            )
        hero.refresh_from_db()
        assert (hero.notes, hero.version) == ("", start)
        assert not Character.objects.exclude(pk=hero.pk).exists()

    def test_the_gm_and_the_owner_write(self, hero, table):
        start = Character.objects.get(pk=hero.pk).version
        for user in (table.player, table.gm):
            services.write_character(user=user, character=hero, values={"notes": user.username})
        hero.refresh_from_db()
        assert (hero.notes, hero.version) == ("gm", start + 2)

    def test_a_stale_version_or_value_writes_nothing(self, hero, table):
        start = Character.objects.get(pk=hero.pk).version
        with pytest.raises(services.VersionConflict) as version:
            services.write_character(
                user=table.player, character=hero, values={"notes": "x"}, version=start - 1
            )
        assert version.value.current == start
        with pytest.raises(services.EditConflict) as seen:
            services.write_character(
                user=table.player, character=hero, values={"spd": 4}, seen={"spd": "2"}
            )
        assert seen.value.current == 3
        hero.refresh_from_db()
        assert (hero.notes, hero.spd, hero.version) == ("", 3, start)
