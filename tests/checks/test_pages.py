"""The checks pages: roll from the sheet with the odds, the result card, the log, the GM's calls
and the players' prompts, Mana and Chi. Each action with and without htmx."""

from __future__ import annotations

import random

import pytest
from django.urls import reverse

from checks import services
from checks.models import Check, CheckCall, ResourceChange
from sheets import randomness

pytestmark = [pytest.mark.django_db, pytest.mark.both_databases]
HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture(autouse=True)
def seeded(monkeypatch):
    monkeypatch.setattr(randomness, "RNG", random.Random(7))


def client_for(client, user):
    client.force_login(user)
    return client


def test_it_shows_the_exact_odds_before_rolling(client, table):
    c = client_for(client, table.owner)
    url = reverse("checks:check_roll", args=[table.ysolde.pk])
    page = c.get(url, {"kind": "discipline", "discipline": "Lock-picking", "against": "Ambitious"})
    html = page.content.decode()
    assert page.status_code == 200
    assert 'data-testid="check-pvd">85v30<' in html
    # 85v30: EpS 85, EpF 30, DrF 11 22, DrS 33..77 (5), SwS 88 99 100.
    assert 'data-testid="odds-epic_success">1<' in html
    assert 'data-testid="odds-dramatic_success">5<' in html
    assert 'data-testid="odds-success_with_sacrifice">3<' in html
    partial = c.get(url, {"kind": "save", "composite": "STM", "against": "Expert"}, **HX)
    assert b"<html" not in partial.content
    assert b"90v40" in partial.content


def test_the_sheet_links_each_number_to_its_check(client, table):
    c = client_for(client, table.owner)
    html = c.get(table.ysolde.get_absolute_url()).content.decode()
    roll = reverse("checks:check_roll", args=[table.ysolde.pk])
    assert f"{roll}?kind=aptitude&amp;aptitude=SKL" in html
    assert f"{roll}?kind=discipline&amp;discipline=Lock-picking" in html
    assert f"{roll}?kind=save&amp;composite=STM" in html
    other = client_for(client, table.player).get(table.ysolde.get_absolute_url()).content.decode()
    assert roll not in other


def test_it_rolls_typed_dice_and_redirects_to_the_result_card(client, table):
    c = client_for(client, table.owner)
    url = reverse("checks:check_roll", args=[table.ysolde.pk])
    data = {
        "kind": "discipline",
        "discipline": "Lock-picking",
        "against": "Ambitious",
        "roll": "85",
    }
    response = c.post(url, data)
    check = Check.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("checks:check_detail", args=[check.pk])
    card = c.get(response["Location"]).content.decode()
    assert "Epic success (EpS)" in card
    assert "+1 EXP on Lock-picking, +1 Fate" in card


def test_it_answers_an_htmx_roll_with_the_result_card(client, table):
    c = client_for(client, table.owner)
    url = reverse("checks:check_roll", args=[table.ysolde.pk])
    response = c.post(url, {"kind": "aptitude", "aptitude": "SKL", "against": "Casual"}, **HX)
    assert response.status_code == 200
    assert b'data-testid="check-result"' in response.content
    assert not Check.objects.get().physical


@pytest.mark.parametrize(
    ("data", "text"),
    [
        ({"kind": "aptitude", "aptitude": "SKL", "roll": "0"}, "roll"),
        ({"kind": "aptitude", "aptitude": "SKL", "roll": "101"}, "roll"),
        ({"kind": "aptitude", "aptitude": "SKL", "number": "51"}, "against"),
        ({"kind": "discipline", "discipline": "Basket Weaving"}, "discipline"),
    ],
)
@pytest.mark.parametrize("htmx", [False, True])
def test_it_refuses_bad_input_with_the_reason_and_stores_nothing(client, table, data, text, htmx):
    c = client_for(client, table.owner)
    url = reverse("checks:check_roll", args=[table.ysolde.pk])
    response = c.post(url, data, **(HX if htmx else {}))
    assert response.status_code == 422
    assert text.encode() in response.content
    assert not Check.objects.exists()


def test_it_refuses_a_roll_for_someone_elses_character(client, table):
    url = reverse("checks:check_roll", args=[table.bram.pk])
    data = {"kind": "aptitude", "aptitude": "SKL", "roll": "50"}
    assert client_for(client, table.owner).post(url, data).status_code == 403
    assert client_for(client, table.outsider).post(url, data).status_code == 404
    assert not Check.objects.exists()


def test_the_gm_calls_a_group_check_and_sees_the_answers(client, table):
    gm = client_for(client, table.gm)
    response = gm.post(
        reverse("checks:call_create", args=[table.campaign.pk]),
        {"everyone": "1", "kind": "discipline", "discipline": "Athletics", "against": "Ambitious"},
    )
    call = CheckCall.objects.get()
    assert response["Location"] == reverse("checks:call_detail", args=[call.pk])
    assert call.requests.count() == 2
    owner = client_for(client.__class__(), table.owner)
    prompts = owner.get(reverse("checks:prompts", args=[table.campaign.pk])).content.decode()
    assert "Athletics vs Ambitious 30" in prompts
    asked = call.requests.get(character=table.ysolde)
    page = owner.get(reverse("checks:request_answer", args=[asked.pk])).content.decode()
    assert "90v30" in page
    owner.post(reverse("checks:request_answer", args=[asked.pk]), {"roll": "90"})
    results = gm.get(reverse("checks:call_detail", args=[call.pk]), **HX).content.decode()
    assert "1 of 2 rolled · 1 succeeded" in results
    assert "Epic success" in results


def test_a_secret_result_stays_off_the_players_pages(client, table):
    target = services.parse_target(kind="aptitude", aptitude="SKL", against=20)
    call = services.call_checks(
        user=table.gm,
        campaign=table.campaign,
        characters=[table.ysolde],
        target=target,
        secret=True,
    )
    check = services.answer(
        user=table.owner, request=call.requests.get(), rng=random.Random(3), roll=None
    )
    for user in (table.owner, table.player):
        c = client_for(client.__class__(), user)
        log = c.get(reverse("checks:campaign_checks", args=[table.campaign.pk])).content.decode()
        assert check.degree_label not in log
        assert f">{check.roll}<" not in log
    card = client_for(client.__class__(), table.owner).get(
        reverse("checks:check_detail", args=[check.pk])
    )
    assert b"Secret roll: sent to the GM" in card.content
    assert check.degree_label.encode() not in card.content
    other = client_for(client.__class__(), table.player)
    assert other.get(reverse("checks:check_detail", args=[check.pk])).status_code == 404
    gm = client_for(client.__class__(), table.gm)
    assert (
        check.degree_label.encode() in gm.get(reverse("checks:call_detail", args=[call.pk])).content
    )


def test_the_gm_undoes_the_latest_from_the_log(client, table):
    c = client_for(client, table.owner)
    url = reverse("checks:check_roll", args=[table.ysolde.pk])
    c.post(url, {"kind": "aptitude", "aptitude": "SKL", "against": "Moderate", "roll": "70"})
    assert table.fresh(table.ysolde).fate == 3
    undo = reverse("checks:campaign_undo", args=[table.campaign.pk])
    assert c.post(undo).status_code == 403
    client_for(client, table.gm).post(undo)
    assert table.fresh(table.ysolde).fate == 2
    assert Check.objects.get().status == "undone"


def test_fate_from_the_result_card(client, table):
    c = client_for(client, table.owner)
    url = reverse("checks:check_roll", args=[table.ysolde.pk])
    c.post(url, {"kind": "aptitude", "aptitude": "SKL", "against": "Moderate", "roll": "20"})
    check = Check.objects.get()
    card = c.get(reverse("checks:check_detail", args=[check.pk])).content.decode()
    assert "Re-roll" in card
    c.post(
        reverse("checks:check_fate", args=[check.pk]),
        {"spender": table.ysolde.pk, "action": "reroll", "roll": "43"},
    )
    assert table.fresh(table.ysolde).fate == 1  # 2, EpF undone, then 1 spent
    assert Check.objects.get(replaces=check).degree == "success"


def test_mana_and_chi_are_spent_and_restored_from_the_page(client, table):
    c = client_for(client, table.owner)
    url = reverse("checks:resource_change", args=[table.ysolde.pk])
    top = table.fresh(table.ysolde).mana
    c.post(url, {"pool": "mana", "amount": "2", "direction": "spend", "cost": "ARC"})
    assert table.fresh(table.ysolde).mana == top - 2
    c.post(url, {"pool": "mana", "amount": "5", "direction": "restore"})
    assert table.fresh(table.ysolde).mana == top - 2  # refused: above the maximum
    assert ResourceChange.objects.count() == 1
    log = c.get(reverse("checks:campaign_checks", args=[table.campaign.pk])).content.decode()
    assert "Mana -2 (spell (ARC))" in log
