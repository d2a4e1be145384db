"""Pages and endpoints whose object is deleted while they work on it answer 404, not 500:
the service finds the locked row gone (someone deleted the sheet in another tab)."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from sheets import services
from sheets.models import Character

pytestmark = [pytest.mark.django_db, pytest.mark.both_databases]


@pytest.fixture
def deleted_first(monkeypatch: pytest.MonkeyPatch, hero: Character) -> None:
    """The sheet is deleted after the view checked access and before the service locks it."""
    for name in ("edit_field", "adjust_wounds", "daily_rest", "add_row"):
        original = getattr(services, name)

        def racing(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
            Character.objects.filter(pk=hero.pk).delete()
            return _original(*args, **kwargs)

        monkeypatch.setattr(services, name, racing)


def test_it_answers_404_to_a_sheet_edit_after_a_delete(hero, client_for, deleted_first):
    client = client_for(hero.owner)
    zone = hero.zones.first().pk
    answers = [
        client.post(
            reverse("sheets:character_edit_field", args=[hero.pk]),
            {"kind": "character", "field": "name", "value": "X", "original": hero.name},
            headers={"HX-Request": "true"},
        ),
        client.post(
            reverse("sheets:character_wound", args=[hero.pk, zone]),
            {"delta": "1"},
        ),
    ]
    assert [a.status_code for a in answers] == [404, 404]


def test_it_answers_404_in_json_to_an_api_call_after_a_delete(hero, api_for, deleted_first):
    api = api_for(hero.owner)
    added = api.post(
        f"/api/characters/{hero.pk}/disciplines/", {"name": "Stealth", "level": 1}, format="json"
    )
    assert added.status_code == 404
    assert added.json() == {"detail": "Not found."}
