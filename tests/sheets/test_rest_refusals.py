"""A daily rest the rules refuse is a 400 (the pages: a message), never a 500; the campaign's
rest is all or nothing. EXP marks stay within what the rules engine rests (0 to 1000)."""

from __future__ import annotations

import random

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.urls import reverse

from rules.engine.omg import MAX_EXP_MARKS
from rules.engine.omg_data import MELEE_COMBAT
from sheets import randomness, services
from sheets.models import Character, Discipline

pytestmark = [pytest.mark.django_db, pytest.mark.both_databases]


@pytest.fixture(autouse=True)
def seeded(monkeypatch):
    rng = random.Random(11)
    monkeypatch.setattr(randomness, "RNG", rng)


@pytest.fixture
def hero(table):
    character = services.create_character(
        campaign=table.campaign, owner=table.player, name="Ysolde", spd=3, skl=4
    )
    Discipline.objects.create(character=character, name=MELEE_COMBAT, level=2, exp_marks=1)
    return character


@pytest.fixture
def broken(table):
    """A sheet whose stored data the rules refuse: a pending raise of an aptitude that does not
    exist, written past the model's validation as an old bug or a hand edit would."""
    character = services.create_character(campaign=table.campaign, owner=table.gm, name="Zed")
    Discipline.objects.create(character=character, name=MELEE_COMBAT, level=1, exp_marks=2)
    Character.objects.filter(pk=character.pk).update(pending_raises="XYZ")
    return character


def snapshot(campaign):
    return sorted(
        (
            c.pk,
            c.version,
            c.itv,
            c.pending_raises,
            [(d.level, d.exp_marks) for d in c.disciplines.all()],
        )
        for c in campaign.characters.prefetch_related("disciplines")
    )


# --- EXP marks ------------------------------------------------------------------------------


def test_it_refuses_exp_marks_the_rules_cannot_rest(hero, api_for):
    api = api_for(hero.owner)
    discipline = hero.disciplines.get()
    too_many = {"name": "Archery", "level": 1, "exp_marks": MAX_EXP_MARKS + 1}
    created = api.post(f"/api/characters/{hero.pk}/disciplines/", too_many, format="json")
    assert created.status_code == 400
    assert "exp_marks" in created.json()
    changed = api.patch(
        f"/api/characters/{hero.pk}/",
        {"disciplines": [{"name": MELEE_COMBAT, "level": 2, "exp_marks": MAX_EXP_MARKS + 1}]},
        format="json",
    )
    assert changed.status_code == 400
    discipline.refresh_from_db()
    assert discipline.exp_marks == 1
    at_the_limit = api.post(
        f"/api/characters/{hero.pk}/disciplines/",
        {**too_many, "exp_marks": MAX_EXP_MARKS},
        format="json",
    )
    assert at_the_limit.status_code == 201
    assert api.post(f"/api/characters/{hero.pk}/rest/").status_code == 200


def test_the_sheet_page_refuses_exp_marks_the_rules_cannot_rest(hero, client_for):
    discipline = hero.disciplines.get()
    response = client_for(hero.owner).post(
        reverse("sheets:character_edit_field", args=[hero.pk]),
        {
            "kind": "discipline",
            "row": discipline.pk,
            "field": "exp_marks",
            "value": str(MAX_EXP_MARKS + 1),
            "original": "1",
        },
        headers={"HX-Request": "true"},
    )
    assert response.status_code in (200, 422)
    discipline.refresh_from_db()
    assert discipline.exp_marks == 1


def test_the_database_refuses_exp_marks_past_the_limit(hero):
    with pytest.raises(IntegrityError), transaction.atomic():
        Discipline.objects.filter(character=hero).update(exp_marks=MAX_EXP_MARKS + 1)


def test_the_model_says_what_the_limit_is(hero):
    discipline = hero.disciplines.get()
    discipline.exp_marks = MAX_EXP_MARKS + 1
    with pytest.raises(ValidationError) as refused:
        discipline.full_clean()
    assert "exp_marks" in refused.value.message_dict


# --- A rest the rules refuse ----------------------------------------------------------------


def test_a_refused_rest_is_a_400_and_changes_nothing(broken, table, api_for):
    before = snapshot(table.campaign)
    response = api_for(table.gm).post(f"/api/characters/{broken.pk}/rest/")
    assert response.status_code == 400
    assert "XYZ" in response.json()["detail"]
    assert snapshot(table.campaign) == before


def test_the_sheet_page_explains_a_refused_rest(broken, table, client_for):
    before = snapshot(table.campaign)
    response = client_for(table.gm).post(
        reverse("sheets:character_rest", args=[broken.pk]), follow=True
    )
    assert response.status_code == 200
    assert "No rest: " in response.text
    assert "XYZ" in response.text
    assert snapshot(table.campaign) == before


def test_the_campaign_rest_is_all_or_nothing(hero, broken, table, api_for):
    # Ysolde (rested first, by id) would rise to Melee Combat 3; Zed's sheet is refused.
    before = snapshot(table.campaign)
    response = api_for(table.gm).post(f"/api/campaigns/{table.campaign.pk}/rest/")
    assert response.status_code == 400
    assert response.json()["detail"].startswith("No one rested. Zed: ")
    assert snapshot(table.campaign) == before


def test_the_campaign_page_explains_a_refused_rest(hero, broken, table, client_for):
    before = snapshot(table.campaign)
    response = client_for(table.gm).post(
        reverse("sheets:campaign_rest", args=[table.campaign.pk]), follow=True
    )
    assert response.status_code == 200
    assert "No one rested. Zed: " in response.text
    assert snapshot(table.campaign) == before


def test_the_campaign_rest_still_rests_everyone(hero, table, api_for):
    thug = services.create_character(campaign=table.campaign, owner=table.gm, name="Thug")
    response = api_for(table.gm).post(f"/api/campaigns/{table.campaign.pk}/rest/")
    assert response.status_code == 200
    ysolde = next(r for r in response.json() if r["name"] == "Ysolde")
    assert ysolde["raised"] == {MELEE_COMBAT: [2, 3]}
    thug.refresh_from_db()
    assert thug.itv is not None
