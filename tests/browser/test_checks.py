"""Checks outside combat in three browsers: the GM on a laptop (1280x800) calls a group check,
and the prompt arrives on the pages Alice and Bob already have open on their phones (390x844),
her sheet and the fight, with one buzz each; the GM's results fill in as they answer. All of it
comes over the campaign's stream: no page polls. A secret check reaches no player's page, and
the unasked player neither sees nor feels it. Every checks page is axe clean with nothing wider
than the screen; screenshots go to CHECKS_SHOTS when it is set."""

from __future__ import annotations

import os
from typing import Any

import pytest
from django.urls import reverse
from playwright.sync_api import Page, expect

from checks.models import Check, CheckCall
from tests.browser.helpers import LAPTOP, PHONE, check_page, open_as
from tests.security.pages import DemoTable

pytestmark = pytest.mark.django_db(transaction=True)
SHOTS = os.environ.get("CHECKS_SHOTS", "")
LIVE = 5_000  # ms: pushed as it happens (the old polling took up to 3 s a step)
#: Counts the phone's buzzes: Chromium refuses navigator.vibrate without a tap, and a test has
#: no hand to feel it.
BUZZ = "window.buzzes = []; navigator.vibrate = (p) => { window.buzzes.push(p); return true; };"


def shot(page: Page, name: str) -> None:
    if SHOTS:
        os.makedirs(SHOTS, exist_ok=True)
        # Playwright hides the caret with an inline style, which the CSP blocks (and reports).
        page.screenshot(path=os.path.join(SHOTS, f"{name}.png"), full_page=True, caret="initial")


@pytest.fixture
def demo_table(demo_table: DemoTable) -> DemoTable:
    # The walks' own check and call are not this test's.
    CheckCall.objects.all().delete()
    Check.objects.all().delete()
    return demo_table


def follow(page: Page, url: str) -> None:
    """Open ``url`` and wait until its campaign stream is open (no page polls)."""
    page.goto(url)
    expect(page.get_by_test_id("check-live")).to_have_attribute("data-state", "open")
    assert page.locator('[hx-trigger*="every"]').count() == 0, url


def call(gm: Page, base: str, campaign: Any, *, secret: bool, what: str, only: str = "") -> None:
    gm.goto(f"{base}{reverse('checks:campaign_checks', args=[campaign.pk])}")
    form = gm.get_by_test_id("call-form")
    if only:
        form.get_by_label(only).check()
    else:
        form.locator("#call-everyone").check()
    form.locator("#call-kind").select_option("composite")
    form.locator("#call-composite").select_option("STM")
    form.locator("#call-against").select_option(what)
    if secret:
        form.locator("#call-secret").check()
    form.get_by_test_id("call-submit").click()
    expect(gm.get_by_test_id("call-summary")).to_contain_text("0 of")
    expect(gm.get_by_test_id("check-live")).to_have_attribute("data-state", "open")
    assert gm.locator('[hx-trigger*="every"]').count() == 0


def prompted(player: Page) -> None:
    """The GM's call arrives on the page the player has open, with one buzz."""
    expect(player.get_by_test_id("check-prompt")).to_be_visible(timeout=LIVE)
    assert player.evaluate("window.buzzes.length") == 1


def answer(player: Page) -> None:
    prompt = player.get_by_test_id("check-prompt")
    prompt.get_by_role("button", name="See your odds and roll").click()
    expect(player.get_by_test_id("check-pvd")).to_be_visible()
    player.get_by_test_id("answer-roll").click()
    expect(player.get_by_test_id("check-result")).to_be_visible()


def test_the_gm_calls_a_group_check_and_sees_the_answers_come_in(asgi_server, browser, demo_table):
    base = asgi_server.url
    gm = open_as(browser, base, "gm", LAPTOP)
    alice = open_as(browser, base, "alice", PHONE)
    bob = open_as(browser, base, "bob", PHONE)
    for phone in (alice, bob):
        phone.context.add_init_script(BUZZ)
    # Where the players are when the GM calls: Alice on her sheet, Bob in the fight.
    follow(alice, f"{base}{demo_table.character.get_absolute_url()}")
    follow(bob, f"{base}{demo_table.encounter.get_absolute_url()}")

    call(gm, base, demo_table.campaign, secret=False, what="Ambitious")
    check_page(gm, 1280)
    shot(gm, "gm-call-waiting")
    prompted(alice)
    prompted(bob)
    check_page(bob, 390)
    shot(bob, "phone-prompt-in-the-fight")

    answer(alice)
    expect(gm.get_by_test_id("call-summary")).to_contain_text("1 of 2 rolled", timeout=LIVE)
    answer(bob)
    check_page(bob, 390)
    shot(bob, "phone-result")
    expect(gm.get_by_test_id("call-summary")).to_contain_text("2 of 2 rolled", timeout=LIVE)
    succeeded = Check.objects.filter(request__isnull=False, success=True).count()
    expect(gm.get_by_test_id("call-summary")).to_contain_text(f"{succeeded} succeeded")
    expect(gm.get_by_test_id("call-degree")).to_have_count(2)
    shot(gm, "gm-call-answered")


def test_a_secret_check_reaches_only_the_gm(asgi_server, browser, demo_table):
    base = asgi_server.url
    gm = open_as(browser, base, "gm", LAPTOP)
    alice = open_as(browser, base, "alice", PHONE)
    bob = open_as(browser, base, "bob", PHONE)
    for phone in (alice, bob):
        phone.context.add_init_script(BUZZ)
    follow(alice, f"{base}{demo_table.campaign.get_absolute_url()}")
    follow(bob, f"{base}{demo_table.campaign.get_absolute_url()}")
    call(
        gm,
        base,
        demo_table.campaign,
        secret=True,
        what="Formidable",
        only=demo_table.character.name,
    )

    prompted(alice)
    answer(alice)
    expect(alice.get_by_test_id("check-degree")).to_have_text("Secret roll: sent to the GM")
    shot(alice, "phone-secret")
    secret = Check.objects.filter(secret=True).get()
    expect(gm.get_by_test_id("call-degree")).to_have_text(secret.degree_label, timeout=LIVE)
    # Bob was not asked: no prompt, no buzz.
    expect(bob.get_by_test_id("check-prompt")).to_have_count(0)
    assert bob.evaluate("window.buzzes.length") == 0

    log = f"{base}{reverse('checks:campaign_checks', args=[demo_table.campaign.pk])}"
    for page in (alice, bob):
        page.goto(log)
        text = page.get_by_test_id("check-log").inner_text()
        assert secret.degree_label not in text
        assert f"{secret.pro}v{secret.dif}" not in page.content()
        response = page.request.get(f"{base}/api/campaigns/{demo_table.campaign.pk}/checks/")
        assert all("degree" not in c for c in response.json() if c["secret"])
    gm.goto(log)
    expect(gm.get_by_test_id("check-log")).to_contain_text(secret.degree_label)


def test_a_player_rolls_from_the_sheet_with_the_odds_first(asgi_server, browser, demo_table):
    base = asgi_server.url
    alice = open_as(browser, base, "alice", PHONE)
    alice.goto(f"{base}{demo_table.character.get_absolute_url()}")
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
    gm.goto(f"{base}{reverse('checks:campaign_checks', args=[demo_table.campaign.pk])}")
    check_page(gm, 1280)
    shot(gm, "gm-log")
    gm.goto(f"{base}{reverse('checks:check_roll', args=[demo_table.character.pk])}")
    check_page(gm, 1280)
    shot(gm, "gm-check-form")
