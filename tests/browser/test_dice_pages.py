"""The PvD calculator updates in place with htmx, a sibling dice page works, and a campaign's
dice page logs its rolls, all under the CSP."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from combat.models import DiceRoll
from tests.factories import PASSWORD, make_campaign, make_user

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_reads_a_typed_roll_without_reloading(live_server, page: Page):
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"{live_server.url}/dice/omg/")
    expect(page.get_by_role("heading", name="PvD calculator")).to_be_visible()
    expect(page.locator("svg rect").first).to_be_visible()
    page.evaluate("window.__sameDocument = true")

    page.get_by_label("PRO and DIF").check()
    page.get_by_label("PRO:", exact=True).fill("70")
    page.get_by_label("DIF:", exact=True).fill("20")
    page.get_by_label("Read as a fast strike (second hit)").check()
    expect(page.get_by_test_id("hit-chance")).to_have_text("54%")
    page.get_by_label("Your d100 roll").fill("43")
    page.get_by_role("button", name="Read my roll").click()

    expect(page.get_by_test_id("degree")).to_have_text("Success")
    expect(page.get_by_test_id("sum")).to_have_text("7")
    expect(page.get_by_test_id("second")).to_have_text("Hit")
    assert page.evaluate("window.__sameDocument") is True  # no full reload
    assert not errors, errors  # includes any CSP violation


def test_it_rolls_ore_dice_on_a_sibling_page(live_server, page: Page):
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"{live_server.url}/dice/")
    page.get_by_role("link", name="ORE", exact=True).first.click()
    expect(page.get_by_role("heading", name="ORE dice")).to_be_visible()
    page.get_by_label("Your d10s").fill("3 4 4 4 6 8 10")
    page.get_by_role("button", name="Read my dice").click()
    expect(page.get_by_test_id("best")).to_have_text("Best set 3x4, to the left arm")
    expect(page.locator(".die-best")).to_have_count(3)
    page.get_by_role("button", name="Roll for me").click()
    expect(page.get_by_test_id("result")).to_contain_text("7 dice on the table")
    assert not errors, errors


def test_it_logs_rolls_on_a_campaign_dice_page(live_server, page: Page):
    player = make_user("robin")
    campaign = make_campaign(make_user("morgan"), players=(player,), name="Night Market")
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill("robin")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/")
    page.get_by_role("button", name="Dice and roll log").click()
    expect(page.get_by_role("heading", name="Dice for Night Market")).to_be_visible()
    page.get_by_role("link", name="ORE", exact=True).first.click()
    expect(page.get_by_role("heading", name="ORE dice")).to_be_visible()
    expect(page.locator("#dice-log")).to_contain_text("No rolls yet")
    page.evaluate("window.__sameDocument = true")

    # The odds still follow the inputs (a GET), and nothing is logged for them.
    page.get_by_label("Pool").fill("2")
    page.get_by_label("Pool").blur()
    expect(page.get_by_test_id("success-chance")).to_have_text("10%")
    page.get_by_label("Pool").fill("7")
    page.get_by_label("Pool").blur()
    expect(page.get_by_test_id("success-chance")).not_to_have_text("10%")

    page.get_by_label("Your d10s").fill("3 4 4 4 6 8 10")
    page.get_by_label("What for? (optional)").fill("Punch the mugger")
    page.get_by_role("button", name="Read my dice").click()
    expect(page.get_by_test_id("best")).to_have_text("Best set 3x4, to the left arm")
    log = page.get_by_test_id("dice-log")
    expect(log.locator("tbody tr")).to_have_count(1)
    expect(log).to_contain_text("Punch the mugger")
    expect(log).to_contain_text("3x4 to the left arm")
    expect(log).to_contain_text("robin")

    page.get_by_role("button", name="Roll for me").click()
    expect(log.locator("tbody tr")).to_have_count(2)
    expect(log.locator("tbody tr").first).to_contain_text("server dice")
    assert page.evaluate("window.__sameDocument") is True  # no full reload
    assert DiceRoll.objects.filter(campaign=campaign, roller=player).count() == 2
    assert not errors, errors  # includes any CSP violation
