"""The table's loop on the screens it is played on: the GM's cockpit on a 1280x800 laptop with
twelve fighters, the player's phone (390x844, touch). A whole strike is played without
scrolling either screen: every control used is inside the viewport when it is used (its
bounding box is measured, not only found). Screenshots go to $COCKPIT_SHOTS when set."""

from __future__ import annotations

import os
import re
from typing import Any

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from combat import services
from combat.models import Declaration, Participant
from tests.browser.helpers import LAPTOP, PHONE, a_hitting_roll, axe_clean, log_in, open_live
from tests.factories import make_campaign, make_thug, make_user, make_ysolde

pytestmark = pytest.mark.django_db(transaction=True)

WIDE = {"viewport": {"width": 1920, "height": 1080}}
SHOTS = os.environ.get("COCKPIT_SHOTS")


def shot(page: Page, name: str) -> None:
    if SHOTS:
        os.makedirs(SHOTS, exist_ok=True)
        page.screenshot(path=os.path.join(SHOTS, f"{name}.png"))


def in_view(locator: Locator) -> None:
    """Visible and wholly inside the viewport as the page stands (not scrolled to)."""
    box = None
    for _ in range(50):
        # A live redraw may replace the element between the check and the measure: again.
        expect(locator).to_be_visible()
        box = locator.bounding_box()
        if box is not None:
            break
    size = locator.page.viewport_size
    assert box is not None and size is not None
    assert box["x"] >= 0 and box["x"] + box["width"] <= size["width"], box
    assert box["y"] >= 0 and box["y"] + box["height"] <= size["height"], box


def every_row_in_view(page: Page) -> None:
    """The whole initiative order at a glance: every fighter's row inside the viewport."""
    rows = page.locator(".cockpit-fight tr[data-participant]")
    expect(rows).to_have_count(12)
    for i in range(12):
        in_view(rows.nth(i))
    # The zone cells, clicked to choose a target, stay 24 px targets (WCAG 2.2).
    sizes = rows.locator(".zones li").evaluate_all(
        "els => els.map(e => Math.min(e.offsetWidth, e.offsetHeight))"
    )
    assert len(sizes) == 12 * 7 and min(sizes) >= 24, min(sizes)
    # Every column too: the table does not scroll sideways (its row menus would hide).
    table = page.locator(".cockpit-fight .table-scroll")
    assert table.evaluate("el => el.scrollWidth <= el.clientWidth"), table.evaluate(
        "el => [el.scrollWidth, el.clientWidth]"
    )


def not_scrolled(page: Page) -> None:
    assert page.evaluate("window.scrollY") == 0
    assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]


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
    services.add_participants(encounter=encounter, characters=[captain, ysolde, brannoc], actor=gm)
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


def test_a_strike_is_played_without_scrolling_on_the_laptop_and_the_phone(
    asgi_server, browser: Browser, twelve: dict[str, Any]
) -> None:
    base, url = asgi_server.url, asgi_server.url + twelve["url"]
    gm = log_in(browser, base, "gm", **LAPTOP)
    pat = log_in(browser, base, "pat", **PHONE)
    open_live(gm, url)
    open_live(pat, url)
    ysolde, chest = twelve["ysolde"], twelve["chest"]
    # Pat's row is marked, and Pat is told the turn comes next.
    expect(pat.get_by_test_id(f"participant-{ysolde.pk}")).to_have_class(re.compile("mine-row"))
    in_view(pat.get_by_test_id("youre-next"))
    shot(gm, "1-gm-turn")
    every_row_in_view(gm)
    shot(pat, "1-phone-next")

    # The GM picks Ysolde's chest by clicking its chip in her row, and declares.
    gm.get_by_test_id(f"zone-{chest.pk}").click()
    form = gm.get_by_test_id("declare-form")
    expect(form.locator("select[name=target_zone]")).to_have_value(f"{ysolde.pk}:{chest.pk}")
    form.locator("select[name=action]").select_option("precise")
    in_view(form.get_by_test_id("declare"))
    form.get_by_test_id("declare").click()

    # The phone's defense dock, at the bottom of the screen.
    parry = pat.get_by_test_id("defend-parry")
    in_view(parry)
    shot(pat, "2-phone-defend")
    parry.click()

    # The GM's roll button is in view, and focused: the next thing to do.
    decl = Declaration.objects.get(encounter=twelve["encounter"])
    roll = gm.get_by_test_id("roll")
    in_view(roll)
    expect(roll).to_be_focused()
    decl.refresh_from_db()
    gm.get_by_test_id("roll-value").fill(str(a_hitting_roll(decl)))
    shot(gm, "2-gm-roll")
    roll.click()

    # Both read the outcome in view, each from their side.
    card = gm.get_by_test_id("result-card")
    in_view(card)
    expect(card.get_by_test_id("result-headline")).to_have_text(
        "Salvager Captain's precise strike hit Ysolde Varr"
    )
    phone_card = pat.get_by_test_id("result-card")
    expect(phone_card.get_by_test_id("result-headline")).to_have_text(
        "Hit you: Salvager Captain's precise strike struck Ysolde Varr"
    )
    expect(phone_card).to_have_attribute("data-tone", "bad")
    in_view(phone_card)
    next_turn = gm.get_by_test_id("next-turn")
    in_view(next_turn)
    expect(next_turn).to_be_focused()
    shot(gm, "3-gm-result")
    shot(pat, "3-phone-result")
    every_row_in_view(gm)
    not_scrolled(gm)
    not_scrolled(pat)

    # Next turn: Ysolde's. The phone docks the turn, and Pat strikes from the dock.
    next_turn.click()
    dock = pat.get_by_test_id("turn-dock")
    expect(dock).to_contain_text("Your turn: Ysolde Varr")
    strike = dock.get_by_test_id("dock-precise")
    in_view(strike)
    in_view(dock.get_by_test_id("turn-dock-target"))
    shot(pat, "4-phone-your-turn")
    shot(gm, "4-gm-next")
    strike.click()
    expect(gm.locator(".declaration")).to_contain_text("Ysolde Varr → ")
    mine = Declaration.objects.filter(attacker=ysolde).get()
    assert mine.action == "precise"
    # The GM defends for the NPC from the pane, in view, by key.
    defend = gm.get_by_test_id("defend-dodge")
    in_view(defend)
    gm.keyboard.press("1")
    expect(gm.locator(f"[data-testid=declaration-{mine.pk}]")).to_contain_text("will dodge")
    shot(gm, "5-gm-defended")
    shot(pat, "5-phone-declared")
    # Pat's attack waits docked at the bottom of the phone, and is rolled from there.
    own = pat.locator(f"[data-own-attack='{mine.pk}']")
    expect(own).to_contain_text("will dodge")
    pat_roll = own.get_by_test_id("roll")
    in_view(pat_roll)
    shot(pat, "6-phone-own-roll")
    pat_roll.click()
    expect(pat.get_by_test_id("result-card").get_by_test_id("result-headline")).to_contain_text(
        "Your precise strike"
    )
    in_view(pat.get_by_test_id("result-card"))
    expect(gm.get_by_test_id("result-card").get_by_test_id("result-headline")).to_contain_text(
        "Ysolde Varr's precise strike"
    )
    shot(pat, "7-phone-own-result")
    not_scrolled(gm)
    not_scrolled(pat)


def test_the_new_layouts_pass_axe_and_a_strike_works_by_keyboard_alone(
    asgi_server, browser: Browser, twelve: dict[str, Any]
) -> None:
    base, url = asgi_server.url, asgi_server.url + twelve["url"]
    gm = log_in(browser, base, "gm", **LAPTOP)
    open_live(gm, url)
    axe_clean(gm)
    # Keyboard only: Tab to the target picker, choose, Tab to Declare, Enter.
    target = gm.locator("#declare-form select[name=target_zone]")
    for _ in range(40):
        gm.keyboard.press("Tab")
        if target.evaluate("el => el === document.activeElement"):
            break
    expect(target).to_be_focused()
    gm.keyboard.press("ArrowDown")  # the next zone
    declare = gm.get_by_test_id("declare")
    for _ in range(10):
        gm.keyboard.press("Tab")
        if declare.evaluate("el => el === document.activeElement"):
            break
    expect(declare).to_be_focused()
    gm.keyboard.press("Enter")
    expect(gm.locator("article.declaration")).to_contain_text("Waiting for")
    # Pat defends by key on a laptop: 2 is parry.
    pat = log_in(browser, base, "pat", **LAPTOP)
    open_live(pat, url)
    expect(pat.get_by_test_id("defend-parry")).to_be_visible()
    pat.keyboard.press("2")
    expect(pat.locator("article.declaration").first).to_contain_text("will parry")
    roll = gm.get_by_test_id("roll")
    expect(roll).to_be_focused()
    gm.keyboard.press("Enter")
    expect(gm.get_by_test_id("result-card")).to_be_visible()
    expect(gm.get_by_test_id("next-turn")).to_be_focused()
    # A focus ring you can see: solid, at least 2 px, off the button (WCAG 2.2).
    ring = gm.evaluate(
        "() => { const s = getComputedStyle(document.activeElement);"
        " return [s.outlineStyle, parseFloat(s.outlineWidth), parseFloat(s.outlineOffset)]; }"
    )
    assert ring[0] == "solid" and ring[1] >= 2 and ring[2] >= 1, ring
    # Undo asks first: "u" opens the question, Escape leaves it, nothing undone.
    gm.keyboard.press("u")
    expect(gm.get_by_test_id("undo")).to_be_focused()
    expect(gm.get_by_test_id("undo-ask")).to_have_attribute("open", "")
    axe_clean(gm)
    gm.keyboard.press("Enter")
    expect(gm.get_by_test_id("result-card")).to_have_count(0)
    phone = log_in(browser, base, "pat", **PHONE)
    open_live(phone, url)
    axe_clean(phone)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_screens_look_right(asgi_server, browser: Browser, twelve: dict[str, Any], scheme):
    base, url = asgi_server.url, asgi_server.url + twelve["url"]
    gm = log_in(browser, base, "gm", **{**WIDE, "color_scheme": scheme})
    open_live(gm, url)
    shot(gm, f"gm-1920-{scheme}")
    services.next_turn(encounter=twelve["encounter"], actor=twelve["encounter"].campaign.gm)
    pat = log_in(browser, base, "pat", **{**PHONE, "color_scheme": scheme})
    open_live(pat, url)
    expect(pat.get_by_test_id("turn-dock")).to_be_visible()
    shot(pat, f"phone-turn-{scheme}")
    axe_clean(pat)
    laptop = log_in(browser, base, "gm", **{**LAPTOP, "color_scheme": scheme})
    open_live(laptop, url)
    shot(laptop, f"gm-1280-{scheme}")
    axe_clean(laptop)
