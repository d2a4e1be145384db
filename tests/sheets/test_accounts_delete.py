"""Leaving for good: deleting one's account, case by case of what one owns."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from combat.models import CombatLogEntry, Encounter
from prep import services as prep
from prep.models import LibraryNpc
from sheets.models import ApiToken, Campaign, Character, IdempotencyRecord, LoginSession
from tests.factories import PASSWORD, a_fight, make_campaign, make_user, make_ysolde
from tests.security.pages import snapshot

pytestmark = [pytest.mark.django_db, pytest.mark.both_databases]

User = get_user_model()


def logged_in(username: str) -> Client:
    client = Client()
    assert (
        client.post(reverse("login"), {"username": username, "password": PASSWORD}).status_code
        == 302
    )
    return client


@pytest.fixture
def keep() -> Any:
    """The Sunken Keep: GM ``gm``, players ``ann`` (Ysolde) and ``bob``; a fight in it."""
    gm, ann, bob = make_user("gm"), make_user("ann"), make_user("bob")
    campaign = make_campaign(gm, players=(ann, bob), name="The Sunken Keep")
    ysolde = make_ysolde(campaign, ann)
    encounter = a_fight(campaign, gm, ysolde)
    return {
        "gm": gm,
        "ann": ann,
        "bob": bob,
        "campaign": campaign,
        "ysolde": ysolde,
        "fight": encounter,
    }


def delete(client: Client, **data: Any) -> Any:
    return client.post(reverse("sheets:account_delete"), {"password": PASSWORD, **data})


def test_it_leaves_a_players_characters_to_the_gm_marked_as_a_former_players(keep):
    client = logged_in("ann")
    response = delete(client, characters="give")
    assert response.status_code == 302
    assert response["Location"] == reverse("sheets:home")
    assert not User.objects.filter(username="ann").exists()
    ysolde = Character.objects.get(pk=keep["ysolde"].pk)
    assert ysolde.owner == keep["gm"]
    assert ysolde.left_by_player
    gm = Client()
    gm.force_login(keep["gm"])
    page = gm.get(ysolde.get_absolute_url()).text
    assert "a former player's, now the GM's" in page
    assert "played by ann" not in page


def test_it_deletes_a_players_characters_when_asked(keep):
    client = logged_in("ann")
    assert delete(client, characters="delete").status_code == 302
    assert not Character.objects.filter(pk=keep["ysolde"].pk).exists()
    assert Campaign.objects.filter(pk=keep["campaign"].pk).exists()


def test_the_fights_keep_their_history_without_the_name(keep):
    before = CombatLogEntry.objects.filter(encounter=keep["fight"]).count()
    theirs = list(CombatLogEntry.objects.filter(actor=keep["ann"]).values_list("pk", flat=True))
    assert theirs
    delete(logged_in("ann"), characters="give")
    assert CombatLogEntry.objects.filter(encounter=keep["fight"]).count() == before
    assert set(CombatLogEntry.objects.filter(pk__in=theirs).values_list("actor", flat=True)) == {
        None
    }
    api = APIClient()
    api.force_authenticate(keep["gm"])
    url = reverse("api:record-list", kwargs={"encounter_pk": keep["fight"].pk})
    record = api.get(url)
    assert record.status_code == 200
    assert '"ann"' not in record.content.decode()


def test_it_asks_what_becomes_of_the_characters(keep):
    client = logged_in("ann")
    before = snapshot()
    response = delete(client)
    assert response.status_code == 400
    assert "Choose what becomes of your characters." in response.text
    assert snapshot() == before


def test_it_refuses_a_wrong_password(keep):
    client = logged_in("ann")
    before = snapshot()
    response = client.post(
        reverse("sheets:account_delete"), {"password": "not-it", "characters": "delete"}
    )
    assert response.status_code == 400
    assert "That is not your password." in response.text
    assert snapshot() == before


def test_a_gm_confirms_each_campaign_by_name(keep):
    client = logged_in("gm")
    field = f"campaign_{keep['campaign'].pk}"
    page = client.get(reverse("sheets:account_delete")).text
    assert "Type “The Sunken Keep” to delete it with its fights" in page
    assert "2 players, 1 fight" in page
    before = snapshot()
    response = delete(client, **{field: "the sunken keep"})
    assert response.status_code == 400
    assert "type “The Sunken Keep” exactly" in response.text
    response = delete(client)
    assert "Type “The Sunken Keep” to delete it." in response.text
    assert snapshot() == before

    response = delete(client, **{field: " The Sunken Keep "})
    assert response.status_code == 302
    assert not Campaign.objects.filter(pk=keep["campaign"].pk).exists()
    assert not Encounter.objects.filter(pk=keep["fight"].pk).exists()
    assert not Character.objects.filter(pk=keep["ysolde"].pk).exists()
    # The players stay, with their other campaigns.
    assert User.objects.filter(username__in=["ann", "bob"]).count() == 2


def test_a_gm_who_plays_elsewhere_settles_both(keep):
    other = make_campaign(make_user("other_gm"), players=(keep["gm"],), name="Elsewhere")
    mine = make_ysolde(other, keep["gm"], name="Guest Star")
    client = logged_in("gm")
    field = f"campaign_{keep['campaign'].pk}"
    response = delete(client, characters="give", **{field: "The Sunken Keep"})
    assert response.status_code == 302
    mine.refresh_from_db()
    assert mine.owner == other.gm
    assert mine.left_by_player


def test_nothing_of_theirs_stays(keep):
    ann = keep["ann"]
    prep.add_starter_set(owner=ann)
    token, key = ApiToken.objects.create_token(user=ann, name="bot")
    IdempotencyRecord.objects.create(
        caller=f"user:{ann.pk}",
        key="k",
        method="POST",
        path="/api/characters/",
        request_hash="x",
        created_at="2026-01-01T00:00:00Z",
    )
    elsewhere = logged_in("ann")
    client = logged_in("ann")
    delete(client, characters="delete")
    assert not LibraryNpc.objects.filter(owner_id=ann.pk).exists()
    assert not ApiToken.objects.filter(pk=token.pk).exists()
    assert not IdempotencyRecord.objects.filter(caller=f"user:{ann.pk}").exists()
    assert not LoginSession.objects.filter(user_id=ann.pk).exists()
    # The old sessions and the API token no longer let anyone in.
    for session in (client, elsewhere):
        response = session.get(reverse("sheets:dashboard"))
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.get("/api/campaigns/").status_code == 401


def test_an_account_without_anything_just_goes(client):
    make_user("newbie")
    client = logged_in("newbie")
    page = client.get(reverse("sheets:account_delete")).text
    assert "Your characters in other people" not in page
    assert "Campaigns you run" not in page
    assert delete(client).status_code == 302
    assert not User.objects.filter(username="newbie").exists()


def test_the_delete_page_needs_a_login(client):
    response = client.get(reverse("sheets:account_delete"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))
