"""All or nothing: a failure halfway through an import, a sheet edit or a row edit leaves the
database exactly as it was. Each test lets the first write happen, then breaks the next step."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.cache import cache
from django.db.models import QuerySet
from django.test import Client

from sheets.models import ApiToken, BodyZone, Character, Weapon
from tests.security.pages import DemoTable, demo_table, snapshot

pytestmark = pytest.mark.django_db


class Injected(Exception):
    """The failure a test injects."""


def boom(*args: Any, **kwargs: Any) -> Any:
    raise Injected


@pytest.fixture
def demo() -> DemoTable:
    cache.clear()
    return demo_table()


@pytest.fixture
def gm(demo: DemoTable) -> Client:
    client = Client()
    client.force_login(demo.gm)
    return client


@pytest.fixture
def api(demo: DemoTable) -> Client:
    _, key = ApiToken.objects.create_token(user=demo.gm, name="safety")
    return Client(HTTP_AUTHORIZATION=f"Token {key}")


def exported(gm: Client, character: Character) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(gm.get(f"/characters/{character.pk}/export/").content)
    data["name"] = "Imported twin"
    return data


def test_it_imports_nothing_when_a_row_fails_after_the_sheet_was_saved(demo, gm, monkeypatch):
    document = exported(gm, demo.character)
    before = snapshot()
    # The character and its disciplines are written first; the weapons step breaks.
    monkeypatch.setattr(Weapon, "full_clean", boom)
    with pytest.raises(Injected):
        gm.post(f"/campaigns/{demo.campaign.pk}/characters/import/", {"text": json.dumps(document)})
    assert snapshot() == before
    monkeypatch.undo()
    response = gm.post(
        f"/campaigns/{demo.campaign.pk}/characters/import/", {"text": json.dumps(document)}
    )
    assert response.status_code == 302
    assert Character.objects.filter(name="Imported twin").count() == 1


def test_it_keeps_a_field_when_the_version_bump_fails(demo, gm, monkeypatch):
    character = demo.character
    weapon = character.weapons.first()
    assert weapon is not None
    before = snapshot()
    # row.save() writes the weapon's field; the sheet's version bump (a queryset update) then
    # breaks. (A field of the character itself is written with its version in one UPDATE.)
    monkeypatch.setattr(QuerySet, "update", boom)
    with pytest.raises(Injected):
        gm.post(
            f"/characters/{character.pk}/edit/",
            {
                "kind": "weapon",
                "row": weapon.pk,
                "field": "name",
                "value": "changed",
                "original": weapon.name,
            },
        )
    assert snapshot() == before


def test_it_keeps_the_whole_sheet_when_a_put_fails_halfway(demo, api, monkeypatch):
    character = demo.character
    document = api.get(f"/api/characters/{character.pk}/").json()
    document.update(name="Renamed", notes="new notes", zones=[{"name": "core", "wounds": 3}])
    before = snapshot()
    # The sheet is saved, its disciplines and weapons replaced; the zones step breaks.
    monkeypatch.setattr(BodyZone, "full_clean", boom)
    with pytest.raises(Injected):
        api.put(
            f"/api/characters/{character.pk}/",
            json.dumps(document),
            content_type="application/json",
        )
    assert snapshot() == before


@pytest.mark.parametrize("method", ["patch", "delete"])
def test_it_keeps_a_row_when_an_api_row_edit_fails_halfway(demo, api, monkeypatch, method):
    character = demo.character
    weapon = character.weapons.first()
    before = snapshot()
    monkeypatch.setattr(QuerySet, "update", boom)
    with pytest.raises(Injected):
        getattr(api, method)(
            f"/api/characters/{character.pk}/weapons/{weapon.pk}/",
            json.dumps({"name": "Broken"}),
            content_type="application/json",
        )
    assert snapshot() == before


def test_it_adds_no_row_when_the_page_add_fails_halfway(demo, gm, monkeypatch):
    character = demo.character
    before = snapshot()
    monkeypatch.setattr(QuerySet, "update", boom)
    with pytest.raises(Injected):
        gm.post(
            f"/characters/{character.pk}/weapon/add/",
            {
                "weapon-name": "Spear",
                "weapon-category": "II",
                "weapon-dmg": 2,
                "weapon-dmg_max": 2,
                "weapon-bonus": 0,
            },
        )
    assert snapshot() == before


def test_it_keeps_wounds_and_vitality_together(demo, gm, monkeypatch):
    character = demo.character
    zone = character.zones.first()
    before = snapshot()
    # The zone's wounds are saved first; saving the character's Vitality then breaks.
    monkeypatch.setattr(Character, "save", boom)
    with pytest.raises(Injected):
        gm.post(f"/characters/{character.pk}/zones/{zone.pk}/wound/", {"delta": "20"})
    assert snapshot() == before
