"""A GM who leaves can hand a campaign to one of its players, who must accept it."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from combat.models import Encounter
from sheets.models import Campaign, CampaignHandover, Character, Membership
from tests.factories import PASSWORD, a_fight, make_campaign, make_thug, make_user, make_ysolde
from tests.security.pages import snapshot

pytestmark = [pytest.mark.django_db, pytest.mark.both_databases]


def client_of(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def keep() -> Any:
    gm, ann, bob = make_user("gm"), make_user("ann"), make_user("bob")
    campaign = make_campaign(gm, players=(ann, bob), name="The Sunken Keep")
    ysolde = make_ysolde(campaign, ann)
    fight = a_fight(campaign, gm, ysolde)
    npc = make_thug(campaign, gm, name="Warden")
    return {"gm": gm, "ann": ann, "bob": bob, "campaign": campaign, "fight": fight, "npc": npc}


def offer(keep: Any, to: Any) -> Any:
    return client_of(keep["gm"]).post(
        reverse("sheets:campaign_handover", args=[keep["campaign"].pk]),
        {"player": "" if to is None else to.pk},
        follow=True,
    )


def test_a_player_who_accepts_runs_the_campaign(keep):
    response = offer(keep, keep["ann"])
    assert "offered to ann" in response.text
    ann = client_of(keep["ann"])
    assert "gm offers you “The Sunken Keep”" in ann.get(reverse("sheets:dashboard")).text
    handover = CampaignHandover.objects.get()
    response = ann.post(reverse("sheets:handover_accept", args=[handover.pk]))
    assert response["Location"] == keep["campaign"].get_absolute_url()
    campaign = Campaign.objects.get(pk=keep["campaign"].pk)
    assert campaign.gm == keep["ann"]
    # Its NPCs are the new GM's; the former GM stays on as a player; the new one is not one.
    assert Character.objects.get(pk=keep["npc"].pk).owner == keep["ann"]
    assert Membership.objects.filter(campaign=campaign, user=keep["gm"]).exists()
    assert not Membership.objects.filter(campaign=campaign, user=keep["ann"]).exists()
    assert not CampaignHandover.objects.exists()
    assert ann.get(reverse("sheets:campaign_edit", args=[campaign.pk])).status_code == 200


def test_the_former_gm_then_leaves_without_taking_the_campaign(keep):
    offer(keep, keep["ann"])
    handover = CampaignHandover.objects.get()
    client_of(keep["ann"]).post(reverse("sheets:handover_accept", args=[handover.pk]))
    response = client_of(keep["gm"]).post(
        reverse("sheets:account_delete"), {"password": PASSWORD, "characters": "delete"}
    )
    assert response.status_code == 302
    assert not get_user_model().objects.filter(username="gm").exists()
    assert Campaign.objects.filter(pk=keep["campaign"].pk).exists()
    assert Encounter.objects.filter(pk=keep["fight"].pk).exists()


def test_until_it_is_accepted_the_campaign_is_the_gms(keep):
    offer(keep, keep["ann"])
    page = client_of(keep["gm"]).get(reverse("sheets:account_delete")).text
    assert "is offered to <strong>ann</strong>" in page
    assert f"campaign_{keep['campaign'].pk}" in page  # still to confirm by name to delete
    assert Campaign.objects.get(pk=keep["campaign"].pk).gm == keep["gm"]


def test_a_player_may_decline(keep):
    offer(keep, keep["ann"])
    handover = CampaignHandover.objects.get()
    response = client_of(keep["ann"]).post(reverse("sheets:handover_decline", args=[handover.pk]))
    assert response.status_code == 302
    assert not CampaignHandover.objects.exists()
    assert Campaign.objects.get(pk=keep["campaign"].pk).gm == keep["gm"]


def test_the_gm_may_withdraw_or_offer_to_someone_else(keep):
    offer(keep, keep["ann"])
    offer(keep, keep["bob"])
    assert CampaignHandover.objects.get().to_user == keep["bob"]
    offer(keep, None)
    assert not CampaignHandover.objects.exists()


def test_only_a_player_of_the_campaign_can_be_offered_it(keep):
    stranger = make_user("stranger")
    gm = client_of(keep["gm"])
    url = reverse("sheets:campaign_handover", args=[keep["campaign"].pk])
    before = snapshot()
    response = gm.post(url, {"player": stranger.pk}, follow=True)
    assert "Only a player of this campaign can take it over." in response.text
    assert gm.post(url, {"player": "x"}).status_code == 302
    assert snapshot() == before


def test_only_the_gm_offers_and_only_the_chosen_player_accepts(keep):
    url = reverse("sheets:campaign_handover", args=[keep["campaign"].pk])
    assert client_of(keep["ann"]).post(url, {"player": keep["ann"].pk}).status_code == 403
    assert client_of(make_user("outsider")).post(url, {"player": 1}).status_code == 404
    offer(keep, keep["ann"])
    handover = CampaignHandover.objects.get()
    for name in ("sheets:handover_accept", "sheets:handover_decline"):
        for who in (keep["bob"], keep["gm"]):
            assert client_of(who).post(reverse(name, args=[handover.pk])).status_code == 404
    assert Campaign.objects.get(pk=keep["campaign"].pk).gm == keep["gm"]


def test_a_player_removed_meanwhile_cannot_accept(keep):
    offer(keep, keep["ann"])
    handover = CampaignHandover.objects.get()
    Membership.objects.filter(user=keep["ann"]).delete()
    response = client_of(keep["ann"]).post(
        reverse("sheets:handover_accept", args=[handover.pk]), follow=True
    )
    assert "You are no longer a player of “The Sunken Keep”." in response.text
    assert Campaign.objects.get(pk=keep["campaign"].pk).gm == keep["gm"]
