"""A GM signs up and starts a campaign; a second person signs up and joins with the code."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from sheets.models import Campaign

pytestmark = pytest.mark.django_db(transaction=True)


def sign_up(page: Page, base: str, username: str) -> None:
    page.goto(f"{base}/signup/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password:", exact=True).fill("a-long-pass-phrase")
    page.get_by_label("Password confirmation:").fill("a-long-pass-phrase")
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()


def test_a_gm_starts_a_campaign_and_a_player_joins(live_server, browser: Browser):
    base = live_server.url
    console_errors: list[str] = []

    gm_context = browser.new_context()
    gm = gm_context.new_page()
    gm.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
    sign_up(gm, base, "morgan")
    gm.get_by_role("button", name="New campaign").click()
    gm.get_by_label("Name").fill("Night Market")
    gm.get_by_role("button", name="Create campaign").click()
    expect(gm.get_by_role("heading", name="Night Market")).to_be_visible()
    code = gm.get_by_test_id("join-code").inner_text().strip()
    assert re.fullmatch(r"[A-Z0-9]{8}", code)

    # The GM makes a new code with htmx: the page is not reloaded, the code changes.
    gm.once("dialog", lambda dialog: dialog.accept())
    gm.get_by_role("button", name="New join code").click()
    expect(gm.get_by_test_id("join-code")).not_to_have_text(code)
    code = gm.get_by_test_id("join-code").inner_text().strip()

    player_context = browser.new_context()
    player = player_context.new_page()
    player.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
    sign_up(player, base, "robin")
    player.get_by_role("button", name="Join with a code").click()
    player.get_by_label("Join code").fill(code.lower())
    player.get_by_role("button", name="Join").click()
    expect(player.get_by_role("heading", name="Night Market")).to_be_visible()

    gm.reload()
    expect(gm.locator("#players")).to_contain_text("robin")
    campaign = Campaign.objects.get(name="Night Market")
    assert campaign.memberships.get().user.username == "robin"
    assert not console_errors, console_errors  # includes any CSP violation


def test_the_theme_toggle_switches_and_persists(live_server, page: Page):
    page.goto(f"{live_server.url}/accounts/login/")
    html = page.locator("html")
    page.get_by_role("button", name="Switch between light and dark theme").click()
    first = html.get_attribute("data-theme")
    assert first in {"light", "dark"}
    page.reload()
    expect(html).to_have_attribute("data-theme", first)


def test_the_layout_fits_a_phone(live_server, browser: Browser):
    context = browser.new_context(viewport={"width": 375, "height": 740})
    page = context.new_page()
    page.goto(f"{live_server.url}/signup/")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 375


def test_the_api_docs_render_under_the_csp(live_server, page: Page):
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"{live_server.url}/api/docs/")
    # The page draws the operations once the served schema has been built and fetched: the
    # first build of all 135 operations takes seconds of CPU, more beside the lint run.
    expect(page.get_by_text("/api/campaigns/join/")).to_be_visible(timeout=20_000)
    assert not errors, errors
