"""Checks outside combat in three browsers: the GM on a laptop (1280x800) calls a group check,
Alice and Bob answer on phones (390x844) from the prompt on their sheet, and the GM's results
fill in while the page stays open. A secret check reaches no player's page. Every checks page is
axe clean with nothing wider than the screen; screenshots go to CHECKS_SHOTS when it is set."""

from __future__ import annotations

import os
from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from checks.models import Check, CheckCall
from tests.browser.test_table_ready import LAPTOP, PHONE, check_page, open_as
from tests.security.pages import demo_table

pytestmark = pytest.mark.django_db(transaction=True)
SHOTS = os.environ.get("CHECKS_SHOTS", "")
LIVE = 10_000  # ms: the results refresh every 3 s


def shot(page: Page, name: str) -> None:
    if SHOTS:
        os.makedirs(SHOTS, exist_ok=True)
        # Playwright hides the caret with an inline style, which the CSP blocks (and reports).
        page.screenshot(path=os.path.join(SHOTS, f"{name}.png"), full_page=True, caret="initial")


@pytest.fixture
def table() -> Any:
    t = demo_table()
    # The walks' own check and call are not this test's.
    CheckCall.objects.all().delete()
    Check.objects.all().delete()
    return t


def call(gm: Page, base: str, campaign: Any, *, secret: bool, what: str) -> None:
    gm.goto(f"{base}{reverse('checks:campaign_checks', args=[campaign.pk])}")
    form = gm.get_by_test_id("call-form")
    form.locator("#call-everyone").check()
    form.locator("#call-kind").select_option("composite")
    form.locator("#call-composite").select_option("STM")
    form.locator("#call-against").select_option(what)
    if secret:
        form.locator("#call-secret").check()
    form.get_by_test_id("call-submit").click()
    expect(gm.get_by_test_id("call-summary")).to_contain_text("0 of 2 rolled")


def answer(player: Page, base: str, sheet_url: str) -> None:
    player.goto(f"{base}{sheet_url}")
    prompt = player.get_by_test_id("check-prompt")
    expect(prompt).to_be_visible(timeout=LIVE)
    prompt.get_by_role("button", name="See your odds and roll").click()
    expect(player.get_by_test_id("check-pvd")).to_be_visible()
    player.get_by_test_id("answer-roll").click()
    expect(player.get_by_test_id("check-result")).to_be_visible()


def test_the_gm_calls_a_group_check_and_sees_the_answers_come_in(asgi_server, browser, table):
    base = asgi_server.url
    gm = open_as(browser, base, "gm", LAPTOP)
    alice = open_as(browser, base, "alice", PHONE)
    bob = open_as(browser, base, "bob", PHONE)
    tamsin = table.campaign.characters.get(name="Tamsin Reed")

    call(gm, base, table.campaign, secret=False, what="Ambitious")
    check_page(gm, 1280)
    shot(gm, "gm-call-waiting")

    answer(alice, base, table.character.get_absolute_url())
    expect(gm.get_by_test_id("call-summary")).to_contain_text("1 of 2 rolled", timeout=LIVE)
    answer(bob, base, tamsin.get_absolute_url())
    check_page(bob, 390)
    shot(bob, "phone-result")
    expect(gm.get_by_test_id("call-summary")).to_contain_text("2 of 2 rolled", timeout=LIVE)
    succeeded = Check.objects.filter(request__isnull=False, success=True).count()
    expect(gm.get_by_test_id("call-summary")).to_contain_text(f"{succeeded} succeeded")
    expect(gm.get_by_test_id("call-degree")).to_have_count(2)
    shot(gm, "gm-call-answered")


def test_a_secret_check_reaches_only_the_gm(asgi_server, browser, table):
    base = asgi_server.url
    gm = open_as(browser, base, "gm", LAPTOP)
    alice = open_as(browser, base, "alice", PHONE)
    bob = open_as(browser, base, "bob", PHONE)
    call(gm, base, table.campaign, secret=True, what="Formidable")

    answer(alice, base, table.character.get_absolute_url())
    expect(alice.get_by_test_id("check-degree")).to_have_text("Secret roll: sent to the GM")
    shot(alice, "phone-secret")
    secret = Check.objects.filter(secret=True).get()
    expect(gm.get_by_test_id("call-degree")).to_have_text(secret.degree_label, timeout=LIVE)

    log = f"{base}{reverse('checks:campaign_checks', args=[table.campaign.pk])}"
    for page in (alice, bob):
        page.goto(log)
        text = page.get_by_test_id("check-log").inner_text()
        assert secret.degree_label not in text
        assert f"{secret.pro}v{secret.dif}" not in page.content()
        response = page.request.get(f"{base}/api/campaigns/{table.campaign.pk}/checks/")
        assert all("degree" not in c for c in response.json() if c["secret"])
    gm.goto(log)
    expect(gm.get_by_test_id("check-log")).to_contain_text(secret.degree_label)


def test_a_player_rolls_from_the_sheet_with_the_odds_first(asgi_server, browser, table):
    base = asgi_server.url
    alice = open_as(browser, base, "alice", PHONE)
    alice.goto(f"{base}{table.character.get_absolute_url()}")
    alice.get_by_test_id("sheet-roll-check").click()
    expect(alice.get_by_test_id("check-pvd")).to_be_visible()
    alice.locator("#kind-save").check()
    expect(alice.get_by_test_id("check-pvd")).to_contain_text("v")
    odds = [int(t) for t in alice.get_by_test_id("check-odds").locator(".num").all_inner_texts()]
    assert sum(odds) == 100
    check_page(alice, 390)
    shot(alice, "phone-check-form")
    alice.get_by_test_id("check-roll-input").fill("37")
    alice.get_by_test_id("check-roll").click()
    expect(alice.get_by_test_id("check-result")).to_contain_text("Rolled 37")
    check_page(alice, 390)
    shot(alice, "phone-check-rolled")
    gm = open_as(browser, base, "gm", LAPTOP)
    gm.goto(f"{base}{reverse('checks:campaign_checks', args=[table.campaign.pk])}")
    check_page(gm, 1280)
    shot(gm, "gm-log")
    gm.goto(f"{base}{reverse('checks:check_roll', args=[table.character.pk])}")
    check_page(gm, 1280)
    shot(gm, "gm-check-form")
