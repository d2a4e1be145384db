"""character.changed: one event per saved change of a sheet, after commit, whether the sheet
itself was saved or only one of its rows (a zone's wounds, a weapon's DMG, EXP marks) was
edited, on the page or through the API; a save that also rewrites the rows is one change."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import transaction
from django.urls import reverse

from sheets import services
from sheets.models import Character
from tests.factories import make_ysolde

pytestmark = pytest.mark.django_db


@pytest.fixture
def ysolde(table: Any, hook: Any) -> Character:
    hook.events = ["character.changed"]
    hook.save()
    return make_ysolde(table.campaign, table.player)


def changes(receiver: Any) -> list[int]:
    """The sheet version each character.changed event carried, in order."""
    return [e["data"]["character"]["version"] for e in receiver.events]


def edit(client: Any, character: Character, kind: str, row: Any, field: str, value: str) -> Any:
    return client.post(
        reverse("sheets:character_edit_field", args=[character.pk]),
        {
            "kind": kind,
            "row": row.pk,
            "field": field,
            "value": value,
            "original": str(getattr(row, field)),
        },
        headers={"HX-Request": "true"},
    )


def test_row_edits_on_the_page_each_send_one_change(
    table, ysolde, receiver, client_for, django_capture_on_commit_callbacks
):
    page = client_for(table.player)
    zone = ysolde.zones.get(name="chest")
    weapon = ysolde.weapons.get()
    discipline = ysolde.disciplines.first()
    for kind, row, field, value in (
        ("zone", zone, "wounds", "3"),
        ("weapon", weapon, "dmg", "3"),
        ("discipline", discipline, "exp_marks", "2"),
    ):
        with django_capture_on_commit_callbacks(execute=True):
            assert edit(page, ysolde, kind, row, field, value).status_code == 200
    ysolde.refresh_from_db()
    assert changes(receiver) == [ysolde.version - 2, ysolde.version - 1, ysolde.version]
    with django_capture_on_commit_callbacks(execute=True):
        page.post(reverse("sheets:character_delete_row", args=[ysolde.pk, "weapon", weapon.pk]))
    assert len(receiver.events) == 4


def test_row_edits_through_the_api_each_send_one_change(
    table, ysolde, receiver, client_for, django_capture_on_commit_callbacks
):
    api = client_for(table.player)
    zone = ysolde.zones.get(name="chest")
    base = f"/api/characters/{ysolde.pk}"
    with django_capture_on_commit_callbacks(execute=True):
        r = api.patch(f"{base}/zones/{zone.pk}/", {"wounds": 4}, content_type="application/json")
    assert r.status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        r = api.post(
            f"{base}/weapons/",
            {"name": "Dagger", "category": "I", "dmg": 2, "dmg_max": 2},
            content_type="application/json",
        )
    assert r.status_code == 201
    with django_capture_on_commit_callbacks(execute=True):
        assert api.delete(f"{base}/weapons/{r.json()['id']}/").status_code == 204
    ysolde.refresh_from_db()
    assert changes(receiver) == [ysolde.version - 2, ysolde.version - 1, ysolde.version]


def test_a_sheet_saved_with_its_rows_is_one_change(
    table, ysolde, receiver, client_for, django_capture_on_commit_callbacks
):
    api = client_for(table.player)
    zones = api.get(f"/api/characters/{ysolde.pk}/").json()["zones"]
    zones[0]["wounds"] = 2
    with django_capture_on_commit_callbacks(execute=True):
        r = api.patch(
            f"/api/characters/{ysolde.pk}/",
            {"notes": "Bruised.", "zones": zones},
            content_type="application/json",
        )
    assert r.status_code == 200
    # One transaction, two edits of its rows and a save: one change.
    zone = ysolde.zones.get(name="chest")
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        services.update_row(
            user=ysolde.owner, character=ysolde, kind="zone", row_id=zone.pk, data={"wounds": 1}
        )
        services.update_row(
            user=ysolde.owner, character=ysolde, kind="zone", row_id=zone.pk, data={"arm": 1}
        )
        Character.objects.get(pk=ysolde.pk).save()
    ysolde.refresh_from_db()
    assert changes(receiver) == [r.json()["version"], ysolde.version]


def test_an_edit_rolled_back_sends_nothing(
    table, ysolde, receiver, django_capture_on_commit_callbacks
):
    zone = ysolde.zones.get(name="chest")
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        try:
            with transaction.atomic():
                services.update_row(
                    user=ysolde.owner,
                    character=ysolde,
                    kind="zone",
                    row_id=zone.pk,
                    data={"wounds": 1},
                )
                raise RuntimeError("undone")
        except RuntimeError:
            pass
        services.update_row(
            user=ysolde.owner, character=ysolde, kind="zone", row_id=zone.pk, data={"arm": 1}
        )
    assert len(receiver.events) == 1  # the edit that stood, not the one rolled back
