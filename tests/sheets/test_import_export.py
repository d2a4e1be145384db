"""Export then import keeps the whole sheet, and a hostile upload is a form error."""

from __future__ import annotations

import json
import random

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from rules import omg
from sheets import services
from sheets.models import BodyZone, Character, Discipline, Weapon

pytestmark = [pytest.mark.django_db, pytest.mark.both_databases]

#: What an import cannot keep: the new sheet's identity and clock.
IDENTITY = ("id", "version", "created_at", "updated_at")


@pytest.fixture
def veteran(table) -> Character:
    """A sheet with something in every field: built by the wizard (creation record, rolled
    BZF), then played: raises bought, pools spent, wounds, worn armor, a magic weapon."""
    rng = random.Random(7)
    character = services.create_from_build(
        campaign=table.campaign,
        owner=table.player,
        name="Brannoc",
        aptitudes=omg.roll_aptitudes_2d6(rng),
        archetype="ranger",
        weapon_category=None,
        ranks={"Archery": 3, "Cartography": 2},
        weight=None,
        rng=rng,
        weapon="Long Sword",
        armor="Leather",
        server_rolled=True,
    )
    Character.objects.filter(pk=character.pk).update(
        pending_raises="SPD,FOC",
        vitality=2,
        mana=3,
        chi=1,
        rsv=47,
        fate=4,
        exp_marks=1,
        talent_marks=2,
        occupation="Warden",
        notes="Owes the ferryman.",
        yards_per_height=3,
    )
    BodyZone.objects.filter(character=character, name="chest").update(
        wounds=14, grievous=services.GRIEVOUS_NOTE, arm=1, arm_bonus=2
    )
    Discipline.objects.filter(character=character, name="Archery").update(exp_marks=2)
    Weapon.objects.filter(character=character).update(dmg=3, bonus=1)
    BodyZone.objects.create(character=character, name="tail", position=9, armor_type="Padded")
    return character


def export(client, character) -> dict:
    response = client.get(reverse("sheets:character_export", args=[character.pk]))
    assert response.status_code == 200
    return json.loads(response.content)


def import_(client, campaign, document) -> Character:
    before = set(Character.objects.values_list("pk", flat=True))
    response = client.post(
        reverse("sheets:character_import", args=[campaign.pk]), {"text": json.dumps(document)}
    )
    assert response.status_code == 302, response.text
    return Character.objects.exclude(pk__in=before).get()


def without_identity(document: dict) -> dict:
    document = {k: v for k, v in document.items() if k not in IDENTITY}
    for rows in ("disciplines", "weapons", "zones"):
        document[rows] = [{k: v for k, v in row.items() if k != "id"} for row in document[rows]]
    document["strikes"] = [
        {k: v for k, v in row.items() if k != "weapon_id"} for row in document["strikes"]
    ]
    return document


def test_it_round_trips_every_field(veteran, table, client_for):
    client = client_for(table.player)
    first = export(client, veteran)
    copy = import_(client, table.campaign, first)
    second = export(client, copy)
    # The one deliberate difference: the creation record says it came with a file, so that
    # nobody takes its dice for rolls this server made.
    assert second["creation"] == {**first["creation"], "imported": True}
    second["creation"] = first["creation"]
    assert without_identity(second) == without_identity(first)


def test_the_fields_that_used_to_get_lost_survive(veteran, table, client_for):
    client = client_for(table.player)
    copy = import_(client, table.campaign, export(client, veteran))
    assert (copy.bzf, copy.bzf_rolled, copy.weight) == (veteran.bzf, True, veteran.bzf * 14)
    assert copy.pending_raises == "SPD,FOC"
    assert (copy.vitality, copy.mana, copy.chi) == (2, 3, 1)
    assert copy.creation["method"] == "2d6" and copy.creation["server_rolled"] is True
    chest = copy.zones.get(name="chest")
    assert (chest.wounds, chest.arm, chest.arm_max, chest.arm_bonus) == (14, 1, 2, 2)
    assert chest.grievous == services.GRIEVOUS_NOTE
    assert [z.name for z in copy.zones.all()][-1] == "tail"
    weapon = copy.weapons.get()
    assert (weapon.name, weapon.dmg, weapon.dmg_max, weapon.bonus) == ("Long Sword", 3, 4, 1)


def test_a_second_round_trip_changes_nothing_more(veteran, table, client_for):
    client = client_for(table.player)
    once = export(client, import_(client, table.campaign, export(client, veteran)))
    twice = export(client, import_(client, table.campaign, once))
    assert without_identity(twice) == without_identity(once)


DEEP = "[" * 100_000


@pytest.mark.parametrize(
    "text",
    [
        DEEP,  # deeper than the JSON parser goes: RecursionError
        "[" * 2_000 + "]" * 2_000,  # parses, but no sheet nests like that
        '{"name": "X", "creation": ' + "[" * 500 + "]" * 500 + "}",
    ],
    ids=["unparseable", "deep-list", "deep-field"],
)
def test_deeply_nested_json_is_a_form_error(table, client_for, text):
    response = client_for(table.player).post(
        reverse("sheets:character_import", args=[table.campaign.pk]), {"text": text}
    )
    assert response.status_code == 422
    assert "nested far too deeply" in response.text
    assert not Character.objects.exists()


def test_a_deeply_nested_file_is_a_form_error(table, client_for):
    upload = SimpleUploadedFile("evil.json", DEEP.encode(), content_type="application/json")
    response = client_for(table.player).post(
        reverse("sheets:character_import", args=[table.campaign.pk]), {"file": upload}
    )
    assert response.status_code == 422
    assert "nested far too deeply" in response.text


def test_the_api_answers_400_to_deeply_nested_json(table, api_for):
    response = api_for(table.player).post("/api/characters/", DEEP, content_type="application/json")
    assert response.status_code == 400


def test_outsiders_cannot_import_a_veteran(veteran, table, client_for):
    document = export(client_for(table.player), veteran)
    response = client_for(table.outsider).post(
        reverse("sheets:character_import", args=[table.campaign.pk]),
        {"text": json.dumps(document)},
    )
    assert response.status_code == 404
    assert Character.objects.count() == 1
