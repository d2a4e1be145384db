"""The sheet page's body is drawn once per state of the sheet and rights of its viewer
(sheets/fragments.py): whatever changes the page draws it again, each viewer gets their own
rights and their own CSRF token, and the stored body holds no token."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from sheets import fragments
from sheets.models import Campaign, Character, Weapon

pytestmark = pytest.mark.both_databases

TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
HEADER_TOKEN = re.compile(r'"X-CSRFToken": "([^"]+)"')


@pytest.fixture(autouse=True)
def _fresh_bodies():
    fragments.clear()
    yield
    fragments.clear()


def _per_request(html: str) -> str:
    """The page less what changes on every request: the CSRF token and the CSP nonce."""
    html = TOKEN.sub("", HEADER_TOKEN.sub("", html))
    return re.sub(r'nonce="[^"]+"', "", html)


def page(client, character: Character) -> str:
    response = client.get(reverse("sheets:character_detail", args=[character.pk]))
    assert response.status_code == 200
    return response.content.decode()


def test_it_draws_the_same_page_from_the_stored_body(hero, client_for):
    client = client_for(hero.owner)
    first = page(client, hero)
    assert len(fragments._bodies) == 1
    second = page(client, hero)
    assert _per_request(first) == _per_request(second)
    assert fragments.TOKEN_PLACEHOLDER not in second


def test_each_page_carries_its_viewers_token_once_in_every_form(hero, table, client_for):
    gm_page = page(client_for(table.gm), hero)
    owner_page = page(client_for(hero.owner), hero)
    for html in (gm_page, owner_page):
        tokens = set(TOKEN.findall(html)) | set(HEADER_TOKEN.findall(html))
        assert len(tokens) == 1, tokens
        assert len(TOKEN.findall(html)) > 50  # every field's form, for use without JavaScript
    assert set(TOKEN.findall(gm_page)) != set(TOKEN.findall(owner_page))
    stored = "".join(piece for body in fragments._bodies.values() for piece in body)
    for token in TOKEN.findall(gm_page) + TOKEN.findall(owner_page):
        assert token not in stored


def test_the_stored_tokens_are_accepted_by_a_plain_form_post(hero, client_for):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(hero.owner)
    page(client, hero)
    html = page(client, hero)  # from the stored body
    token = TOKEN.search(html).group(1)
    response = client.post(
        reverse("sheets:character_edit_field", args=[hero.pk]),
        {
            "csrfmiddlewaretoken": token,
            "kind": "character",
            "field": "notes",
            "value": "Owes the ferryman.",
            "original": "",
        },
    )
    assert response.status_code == 302
    hero.refresh_from_db()
    assert hero.notes == "Owes the ferryman."


def test_a_reader_after_the_owner_gets_no_forms(hero, table, client_for):
    reader = table.outsider
    table.campaign.memberships.create(user=reader)
    owner_page = page(client_for(hero.owner), hero)
    reader_page = page(client_for(reader), hero)
    assert 'name="field" value="notes"' in owner_page
    assert 'name="field" value="notes"' not in reader_page
    assert "only its player and the GM can change it" in reader_page
    assert not TOKEN.search(reader_page.split('<article class="sheet"')[1])


def test_the_gm_after_the_owner_gets_the_gms_controls(table, client_for):
    npc = Character.objects.create(
        campaign=table.campaign, owner=table.gm, name="Drowned Knight", is_npc=True, revealed=True
    )
    page(client_for(table.player), npc)
    gm_page = page(client_for(table.gm), npc)
    assert "Hide from players" in gm_page
    player_page = page(client_for(table.player), npc)
    assert "Hide from players" not in player_page


def test_a_hidden_npc_stays_hidden_though_its_body_is_stored(table, client_for):
    npc = Character.objects.create(
        campaign=table.campaign, owner=table.gm, name="Drowned Knight", is_npc=True, revealed=True
    )
    page(client_for(table.gm), npc)
    page(client_for(table.player), npc)
    Character.objects.filter(pk=npc.pk).update(revealed=False)
    response = client_for(table.player).get(reverse("sheets:character_detail", args=[npc.pk]))
    assert response.status_code == 404


@pytest.mark.parametrize(
    "change",
    [
        # Writes that do not go through the services (and so bump no version) still show.
        lambda hero: Character.objects.filter(pk=hero.pk).update(notes="Changed behind"),
        lambda hero: Weapon.objects.filter(character=hero).update(name="Changed behind"),
        lambda hero: hero.zones.filter(name="head").update(name="Changed behind"),
        lambda hero: Campaign.objects.filter(pk=hero.campaign_id).update(name="Changed behind"),
        lambda hero: (
            type(hero.owner).objects.filter(pk=hero.owner_id).update(username="changed_behind")
        ),
    ],
    ids=["character", "weapon", "zone", "campaign", "owner"],
)
def test_any_stored_change_draws_the_body_again(hero, table, client_for, change):
    client = client_for(table.gm)
    assert "Changed behind" not in page(client, hero).replace("changed_behind", "")
    change(hero)
    html = page(client, hero)
    assert "Changed behind" in html or "changed_behind" in html


def test_a_pending_reserve_call_is_the_viewers_own(hero, client_for):
    Character.objects.filter(pk=hero.pk).update(rsv=40)
    owner = client_for(hero.owner)
    session = owner.session
    session[f"reserve-call-{hero.pk}"] = 77
    session.save()
    assert 'data-testid="reserve-call"' in page(owner, hero)
    other_tab = client_for(hero.owner)
    assert 'data-testid="reserve-call"' not in page(other_tab, hero)


def test_it_keeps_a_bounded_number_of_bodies(hero, client_for, monkeypatch):
    monkeypatch.setattr(fragments, "MAX_BODIES", 2)
    client = client_for(hero.owner)
    for notes in ("one", "two", "three"):
        Character.objects.filter(pk=hero.pk).update(notes=notes)
        assert notes in page(client, hero)
    assert len(fragments._bodies) == 2
