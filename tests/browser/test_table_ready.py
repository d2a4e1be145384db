"""The demo table as the people at it see it: a player's phone (390x844, touch) and the GM's
laptop (1280x800). The sheet reads first, the tracker stays calm at rest, the attacked player
defends with one thumb, and every page passes axe-core with no serious or critical finding."""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from combat import services
from combat.models import Participant
from tests.browser.helpers import LAPTOP, PHONE, check_page, fired, listen, open_as, wait

pytestmark = pytest.mark.django_db(transaction=True)

# Visible form fields.
FIELDS = """[...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
  .filter(e => e.checkVisibility()).length"""


def test_a_players_phone_opens_the_sheet_on_what_the_table_needs(asgi_server, browser, demo_table):
    page = open_as(browser, asgi_server.url, "alice", PHONE)
    page.goto(f"{asgi_server.url}{demo_table.character.get_absolute_url()}")
    first_screen = PHONE["viewport"]["height"]
    # Vitality, the strikes and the defenses are on the first screen.
    for locator in (
        page.locator("#vitals meter"),
        page.locator("table.strikes tbody tr").first,
        page.locator(".defense-chips li").last,
    ):
        box = locator.bounding_box()
        assert box is not None and box["y"] + box["height"] <= first_screen
    assert page.evaluate(FIELDS) <= 12
    assert page.evaluate("document.documentElement.scrollHeight") <= 3 * first_screen
    # The wound buttons are thumb-sized.
    plus = page.get_by_role("button", name="Add a wound to chest")
    box = plus.bounding_box()
    assert box is not None and box["height"] >= 44 and box["width"] >= 44
    check_page(page, PHONE["viewport"]["width"])
    # Every panel open: still nothing wider than the phone, still axe clean.
    page.evaluate("document.querySelectorAll('details.panel').forEach(d => { d.open = true; })")
    check_page(page, PHONE["viewport"]["width"])


def test_the_attacked_player_defends_from_the_bottom_of_the_first_screen(
    asgi_server, browser, demo_table
):
    encounter = demo_table.encounter
    thug = Participant.objects.select_related("character", "encounter__campaign").get(
        encounter=encounter, character__name="Salvager Thug"
    )
    ysolde = Participant.objects.select_related("character", "encounter__campaign").get(
        encounter=encounter, character=demo_table.character
    )
    services.declare_attack(
        encounter=encounter,
        attacker=thug,
        target=ysolde,
        action="precise",
        zone=ysolde.character.zones.get(name="chest"),
        weapon=thug.character.weapons.first(),
        actor=demo_table.gm,
    )
    page = open_as(browser, asgi_server.url, "alice", PHONE)
    page.goto(f"{asgi_server.url}{encounter.get_absolute_url()}")
    dock = page.locator(".defense-dock")
    expect(dock).to_contain_text("Incoming attack!")
    for mode, dif in (("dodge", 25), ("parry", 30), ("block", 35)):
        button = dock.get_by_test_id(f"defend-{mode}")
        expect(button).to_contain_text(f"{mode.capitalize()} {dif}")
        box = button.bounding_box()
        assert box is not None
        assert box["height"] >= 44
        assert box["y"] + box["height"] <= PHONE["viewport"]["height"]
        assert box["x"] + box["width"] <= PHONE["viewport"]["width"]
    # It stays where the thumb is while the page scrolls.
    page.mouse.wheel(0, 2000)
    box = dock.get_by_test_id("defend-parry").bounding_box()
    assert box is not None and box["y"] + box["height"] <= PHONE["viewport"]["height"]
    # The odds are one tap away and fit the screen.
    dock.get_by_text("Odds of each defense").click()
    expect(dock.locator("table.odds")).to_be_visible()
    check_page(page, PHONE["viewport"]["width"])


def test_the_gms_tracker_is_calm_at_rest(asgi_server, browser, demo_table):
    page = open_as(browser, asgi_server.url, "gm", LAPTOP)
    page.goto(f"{asgi_server.url}{demo_table.encounter.get_absolute_url()}")
    expect(page.locator("table.initiative meter").first).to_be_visible()
    assert page.evaluate(FIELDS) <= 10
    # A row's menu holds its controls, quick damage among them.
    first = page.locator("details.row-menu").first
    first.locator("summary").click()
    expect(first.get_by_label("State")).to_be_visible()
    check_page(page, LAPTOP["viewport"]["width"])
    row = page.locator("table.initiative tbody tr").first
    zone = first.get_by_label("Zone").locator("option").first
    zone_name = zone.inner_text()
    first.get_by_label("Wounds").fill("2")
    first.get_by_role("button", name="Damage").click()
    expect(row.locator(".zones li", has_text=zone_name).first).to_contain_text(f"{zone_name} 2/")


PAGES = [
    ("dashboard", lambda t: reverse("sheets:dashboard")),
    ("campaign", lambda t: t.campaign.get_absolute_url()),
    ("sheet", lambda t: t.character.get_absolute_url()),
    ("encounters", lambda t: reverse("combat:encounter_list", args=[t.campaign.pk])),
    ("encounter", lambda t: t.encounter.get_absolute_url()),
    ("dice", lambda t: reverse("dice:index")),
    *(
        (system, lambda t, s=system: reverse(f"dice:{s}"))
        for system in ("omg", "ogs", "okrpg", "ore", "sds")
    ),
    ("campaign dice", lambda t: reverse("dice:campaign_omg", args=[t.campaign.pk])),
    ("wizard", lambda t: reverse("sheets:character_wizard", args=[t.campaign.pk])),
    ("import", lambda t: reverse("sheets:character_import", args=[t.campaign.pk])),
    ("tokens", lambda t: reverse("sheets:token_list")),
]


@pytest.mark.parametrize(("who", "device"), [("alice", PHONE), ("gm", LAPTOP)])
def test_every_page_passes_axe_for_the_gm_and_a_player(
    asgi_server, browser, demo_table, who, device
):
    page = open_as(browser, asgi_server.url, who, device)
    for _, url in PAGES:
        page.goto(f"{asgi_server.url}{url(demo_table)}")
        check_page(page, device["viewport"]["width"])


def test_the_gm_runs_the_tracker_from_the_keyboard(asgi_server, browser, demo_table):
    page = open_as(browser, asgi_server.url, "gm", LAPTOP)
    page.goto(f"{asgi_server.url}{demo_table.encounter.get_absolute_url()}")
    expect(page.get_by_test_id("live-status")).to_contain_text("Live")
    page.keyboard.press("?")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Next turn")
    check_page(page, LAPTOP["viewport"]["width"])
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    before = page.get_by_test_id("turn").inner_text()
    # The turn's own answer and its live redraw arrive in either order: "d" is pressed once both
    # are in, as a person would after seeing the new turn.
    redrawn = "(e) => e.detail.type === 'tracker'"
    listen(page, "turn-redrawn", "document", "htmx:sseBeforeMessage", redrawn)
    page.keyboard.press("n")
    expect(page.get_by_test_id("turn")).not_to_have_text(before)
    wait(page, "turn-redrawn")
    # "d" opens the declare form on its first field; keys pressed in a field are not shortcuts.
    page.keyboard.press("d")
    attacker = page.locator("#declare-form select[name=attacker]")
    expect(attacker).to_be_focused()
    turn = page.get_by_test_id("turn").inner_text()
    # The shortcut would press the button, whose request htmx starts in that same click.
    next_turn = "(e) => e.detail.elt.matches('[data-testid=next-turn]')"
    listen(page, "next-turn", "document", "htmx:beforeRequest", next_turn)
    page.keyboard.press("n")
    assert not fired(page, "next-turn")
    expect(page.get_by_test_id("turn")).to_have_text(turn)
