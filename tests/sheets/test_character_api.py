from __future__ import annotations

import json

import pytest
from django.urls import reverse

from rules.engine.omg_data import MELEE_COMBAT, weapon_discipline
from sheets import services
from sheets.models import Character, Discipline, Weapon

pytestmark = pytest.mark.django_db

LIST = "/api/characters/"


@pytest.fixture
def hero(table):
    character = services.create_character(
        campaign=table.campaign,
        owner=table.player,
        name="Ysolde",
        spd=3,
        skl=4,
        vgr=5,
        foc=2,
        nrv=2,
        chr=2,
        svy=2,
        weight=168,
    )
    Discipline.objects.create(character=character, name=weapon_discipline("III"), level=3)
    Discipline.objects.create(character=character, name=MELEE_COMBAT, level=2)
    Weapon.objects.create(character=character, name="Long Sword", category="III", dmg=4, dmg_max=4)
    character.zones.filter(name="chest").update(wounds=3, armor_type="Leather", arm=2, arm_max=2)
    return character


def detail(character):
    return f"{LIST}{character.pk}/"


def test_anonymous_is_refused(hero, api_for):
    assert api_for(None).get(LIST).status_code in (401, 403)


@pytest.mark.parametrize(
    ("role", "count"), [("gm", 1), ("player", 1), ("outsider", 0), ("other_gm", 0)]
)
def test_the_list_never_leaks_other_campaigns(hero, table, api_for, role, count):
    assert api_for(getattr(table, role)).get(LIST).json()["count"] == count


def test_the_document_carries_the_computed_numbers(hero, api_for):
    body = api_for(hero.owner).get(detail(hero)).json()
    strike = body["strikes"][0]
    assert (strike["fast"], strike["precise"], strike["mighty"], strike["dmg"]) == (80, 85, 90, 4)
    assert body["defenses"] == {"dodge": 25, "parry": 30, "block": 35, "melee": 2}
    chest = next(z for z in body["zones"] if z["name"] == "chest")
    assert (chest["wounds"], chest["armor_type"], chest["arm"]) == (3, "Leather", 2)
    assert body["composites"]["AGL"] == {"value": 7, "pro": 85, "dif": 35}
    assert body["derived"]["bzf"] == 12
    assert body["discipline_pro"]["Melee Combat"] == 80  # SKL 4 + 2 -> 50 + 30


@pytest.mark.parametrize(("role", "status"), [("gm", 200), ("player", 200), ("outsider", 404)])
def test_who_may_patch(hero, table, api_for, role, status):
    response = api_for(getattr(table, role)).patch(detail(hero), {"spd": 4}, format="json")
    assert response.status_code == status
    hero.refresh_from_db()
    assert hero.spd == (4 if status == 200 else 3)


def test_another_player_may_read_but_not_write(hero, table, api_for):
    from sheets.models import Membership
    from tests.factories import make_user

    other = make_user()
    Membership.objects.create(campaign=table.campaign, user=other)
    client = api_for(other)
    assert client.get(detail(hero)).status_code == 200
    assert client.patch(detail(hero), {"spd": 5}, format="json").status_code == 403
    assert client.delete(detail(hero)).status_code == 403


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"spd": 6}, "spd"),
        ({"spd": "fast"}, "spd"),
        ({"rsv": 0}, "rsv"),
        ({"bzf": 0}, "bzf"),
        ({"spd": 10**20}, "spd"),
        ({"archetype": "pirate"}, "archetype"),
        ({"name": ""}, "name"),
    ],
)
def test_bad_values_are_400s_with_the_field_named(hero, api_for, payload, field):
    response = api_for(hero.owner).patch(detail(hero), payload, format="json")
    assert response.status_code == 400
    assert field in response.json()
    hero.refresh_from_db()
    assert hero.spd == 3


def test_a_stale_version_is_a_conflict(hero, api_for):
    client = api_for(hero.owner)
    version = client.get(detail(hero)).json()["version"]
    assert (
        client.patch(detail(hero), {"spd": 4, "version": version}, format="json").status_code == 200
    )
    response = client.patch(detail(hero), {"spd": 5, "version": version}, format="json")
    assert response.status_code == 409
    hero.refresh_from_db()
    assert hero.spd == 4


@pytest.mark.parametrize("version", [None, 0, -1, "1", True, 1.0, 2**63])
@pytest.mark.parametrize("method", ["put", "patch"])
def test_a_version_that_is_no_version_number_is_refused(hero, api_for, method, version):
    """The schema says ``version`` is an integer from 1 (CharacterUpdateSerializer): null was
    taken for a missing version, and the write went through whatever changed meanwhile."""
    client = api_for(hero.owner)
    body = client.get(detail(hero)).json()
    before = body["version"]
    body.update(spd=4, version=version)
    response = getattr(client, method)(detail(hero), body, format="json")
    assert response.status_code == 400
    assert list(response.json()) == ["version"]
    hero.refresh_from_db()
    assert (hero.spd, hero.version) == (3, before)


def test_a_write_without_a_version_still_goes_through(hero, api_for):
    client = api_for(hero.owner)
    assert client.patch(detail(hero), {"spd": 4}, format="json").status_code == 200
    body = client.get(detail(hero)).json()
    del body["version"]
    body["spd"] = 5
    assert client.put(detail(hero), body, format="json").status_code == 200
    hero.refresh_from_db()
    assert hero.spd == 5


def test_a_player_cannot_create_in_a_campaign_they_are_not_in(table, api_for):
    from tests.factories import make_campaign

    elsewhere = make_campaign(table.other_gm)
    response = api_for(table.player).post(
        LIST, {"campaign": elsewhere.pk, "name": "Spy"}, format="json"
    )
    assert response.status_code == 400
    assert not Character.objects.filter(name="Spy").exists()


def test_only_the_gm_creates_npcs(table, api_for):
    response = api_for(table.player).post(
        LIST, {"campaign": table.campaign.pk, "name": "Goblin", "is_npc": True}, format="json"
    )
    assert response.status_code == 400
    ok = api_for(table.gm).post(
        LIST, {"campaign": table.campaign.pk, "name": "Goblin", "is_npc": True}, format="json"
    )
    assert ok.status_code == 201
    assert len(ok.json()["zones"]) == 7


def test_a_character_cannot_move_campaigns(hero, table, api_for):
    from tests.factories import make_campaign

    mine = make_campaign(table.player)
    response = api_for(table.player).patch(detail(hero), {"campaign": mine.pk}, format="json")
    assert response.status_code == 400


def test_a_bad_nested_row_changes_nothing(hero, api_for):
    response = api_for(hero.owner).patch(
        detail(hero),
        {"name": "Renamed", "weapons": [{"name": "Club", "category": "V", "dmg": 4, "dmg_max": 2}]},
        format="json",
    )
    assert response.status_code == 400
    hero.refresh_from_db()
    assert hero.name == "Ysolde"
    assert hero.weapons.get().name == "Long Sword"


def test_export_then_import_round_trips(hero, table, client_for):
    client = client_for(table.player)
    exported = client.get(reverse("sheets:character_export", args=[hero.pk]))
    assert exported["Content-Disposition"] == 'attachment; filename="ysolde.json"'
    document = json.loads(exported.content)
    response = client.post(
        reverse("sheets:character_import", args=[table.campaign.pk]),
        {"text": exported.content.decode()},
    )
    assert response.status_code == 302
    copy = Character.objects.exclude(pk=hero.pk).get(name="Ysolde")
    again = json.loads(client.get(reverse("sheets:character_export", args=[copy.pk])).content)
    for key in ("id", "version", "created_at", "updated_at"):
        document.pop(key), again.pop(key)
    for rows in ("disciplines", "weapons", "zones"):
        for row in document[rows] + again[rows]:
            row.pop("id")
    document["strikes"][0].pop("weapon_id"), again["strikes"][0].pop("weapon_id")
    assert again == document


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "Choose an exported"),
        ("{nope", "not valid JSON"),
        ("[1, 2]", "one character"),
        ('{"name": "X", "spd": 9}', "spd"),
        ('{"name": "X", "zones": [{"name": "head", "wounds": -1}]}', "wounds"),
    ],
)
def test_a_bad_import_creates_nothing_and_says_why(table, client_for, text, message):
    before = Character.objects.count()
    response = client_for(table.player).post(
        reverse("sheets:character_import", args=[table.campaign.pk]), {"text": text}
    )
    assert response.status_code == 422
    assert message in response.text
    assert Character.objects.count() == before


def test_outsiders_cannot_import_into_a_campaign(table, client_for):
    url = reverse("sheets:character_import", args=[table.campaign.pk])
    assert client_for(table.outsider).post(url, {"text": '{"name": "X"}'}).status_code == 404


# Outside the test's own transaction, as a request runs: inside one, the lock is allowed.
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("role", ["player", "gm", "other_gm"])
def test_options_on_a_character_answers_without_locking(hero, table, api_for, role):
    """OPTIONS describes the PUT by reading the sheet as a PUT would: that read took the
    write's lock, outside any transaction, which PostgreSQL refuses (a 500 for any logged-in
    user; SQLite has no such lock). The lock is taken in the write's transaction only."""
    response = api_for(getattr(table, role)).options(detail(hero))
    assert response.status_code == 200
    # An outsider learns nothing of the sheet: no actions described (DRF's metadata).
    assert ("actions" in response.json()) == (role != "other_gm")
