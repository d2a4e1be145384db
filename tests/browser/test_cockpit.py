"""The table's loop on the screens it is played on: the GM's cockpit on a 1280x800 laptop with
twelve fighters, the player's phone (390x844, touch). A whole strike is played without
scrolling either screen: every control used is inside the viewport when it is used (its
bounding box is measured, not only found). Screenshots go to $COCKPIT_SHOTS when set."""

from __future__ import annotations

import os
from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Locator, Page, expect

from combat import services
from combat.models import Declaration, Participant
from tests.combat.conftest import make_thug, make_ysolde
from tests.factories import PASSWORD, make_campaign, make_user

pytestmark = pytest.mark.django_db(transaction=True)

LAPTOP = {"viewport": {"width": 1280, "height": 800}}
WIDE = {"viewport": {"width": 1920, "height": 1080}}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
SHOTS = os.environ.get("COCKPIT_SHOTS")


def log_in(browser: Browser, base: str, username: str, device: dict[str, Any]) -> Page:
    page = browser.new_context(**device).new_page()
    page.set_default_timeout(10_000)
    page.goto(f"{base}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url("**/dashboard/")
    return page


def open_live(page: Page, url: str) -> None:
    page.goto(url)
    expect(page.get_by_test_id("live-status")).to_contain_text("Live")


def shot(page: Page, name: str) -> None:
    if SHOTS:
        os.makedirs(SHOTS, exist_ok=True)
        page.screenshot(path=os.path.join(SHOTS, f"{name}.png"))


def in_view(locator: Locator) -> None:
    """Visible and wholly inside the viewport as the page stands (not scrolled to)."""
    expect(locator).to_be_visible()
    box = locator.bounding_box()
    size = locator.page.viewport_size
    assert box is not None and size is not None
    assert box["x"] >= 0 and box["x"] + box["width"] <= size["width"], box
    assert box["y"] >= 0 and box["y"] + box["height"] <= size["height"], box


def not_scrolled(page: Page) -> None:
    assert page.evaluate("window.scrollY") == 0
    assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]


def axe_clean(page: Page) -> None:
    found = Axe().run(page).response["violations"]
    serious = [
        f"{v['id']}: {[n['target'] for n in v['nodes']][:3]}"
        for v in found
        if v["impact"] in ("serious", "critical")
    ]
    assert serious == [], (page.url, serious)


def a_hitting_roll(declaration: Declaration) -> int:
    declaration.encounter = declaration.attacker.encounter
    odds = services.declaration_odds(declaration)
    pro, dif = odds[declaration.defense]["pro"], odds[declaration.defense]["dif"]
    return next(r for r in range(dif + 1, pro + 1) if r % 11 and r != 100)


@pytest.fixture
def twelve(transactional_db: None) -> dict[str, Any]:
    """Twelve fighters: two players' characters, the GM's captain and nine thugs (four of
    them hidden). The captain acts; Ysolde (pat's) is next."""
    gm, pat, kim = make_user("gm"), make_user("pat"), make_user("kim")
    campaign = make_campaign(gm, players=(pat, kim), name="The Sunken Keep")
    ysolde = make_ysolde(campaign, pat, itv=13)
    brannoc = make_ysolde(campaign, kim, name="Brannoc", itv=4)
    captain = make_thug(campaign, gm, name="Salvager Captain", itv=20)
    thug = make_thug(campaign, gm)
    encounter, _ = services.create_encounter(campaign=campaign, name="Ambush", actor=gm)
    services.add_participants(
        encounter=encounter, characters=[captain, ysolde, brannoc], actor=gm
    )
    services.add_npc_copies(encounter=encounter, npc=thug, count=5, actor=gm, hidden=False)
    services.add_npc_copies(encounter=encounter, npc=thug, count=4, actor=gm, hidden=True)
    services.start_encounter(encounter=encounter, actor=gm)
    first = Participant.objects.get(encounter=encounter, character=captain)
    encounter.refresh_from_db()
    assert encounter.turn_id == first.pk
    y = Participant.objects.get(encounter=encounter, character=ysolde)
    return {
        "encounter": encounter,
        "thug": first,
        "ysolde": y,
        "chest": ysolde.zones.get(name="chest"),
        "url": encounter.get_absolute_url(),
    }


def test_look(asgi_server, browser: Browser, twelve: dict[str, Any]) -> None:
    base = asgi_server.url
    gm = log_in(browser, base, "gm", LAPTOP)
    pat = log_in(browser, base, "pat", PHONE)
    open_live(gm, base + twelve["url"])
    open_live(pat, base + twelve["url"])
    shot(gm, "look-gm")
    pat.screenshot(path=os.path.join(SHOTS or "/tmp", "look-pat-full.png"), full_page=True)
    shot(pat, "look-pat")
