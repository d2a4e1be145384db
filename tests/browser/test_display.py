"""The table display on a TV (1920x1080), served by uvicorn, follows the fights the GM starts
and plays from a laptop, tells a hidden foe's wounds in words as the player's phone does, waits
between fights, and goes blank with a clear message when the GM turns it off."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, ViewportSize, expect

from combat import services
from combat.models import CombatLogEntry, Participant
from tests.browser.helpers import PHONE, log_in, move_clock_until
from tests.factories import make_campaign, make_thug, make_user, make_ysolde
from tests.qr_decode import decode_png

pytestmark = pytest.mark.django_db(transaction=True)

TV: ViewportSize = {"width": 1920, "height": 1080}
PROJECTOR: ViewportSize = {"width": 1280, "height": 720}
SHOTS = Path(tempfile.gettempdir()) / "omg-shots"  # looked at by hand, not compared
IDLE_PICKUP = 6_000  # ms: an idle screen looks again every second here (config/test_settings.py)
OVER = 8_000  # ms: how long the final board stays up (static/js/display.js)


@pytest.fixture
def night_market(transactional_db: None) -> dict[str, Any]:
    gm, player = make_user("gm"), make_user("pat")
    campaign = make_campaign(gm, players=(player,), name="Night Market")
    ysolde, thug = make_ysolde(campaign, player), make_thug(campaign, gm)

    def prepare(name: str) -> Any:
        encounter, _ = services.create_encounter(campaign=campaign, name=name, actor=gm)
        services.add_participants(encounter=encounter, characters=[ysolde, thug], actor=gm)
        p = Participant.objects.get(encounter=encounter, character=thug)
        services.update_participant(participant=p, hidden=True, hidden_shows="words", actor=gm)
        return encounter, p

    return {"campaign": campaign, "prepare": prepare, "thug": thug}


def gm_confirms(page: Page) -> None:
    page.once("dialog", lambda dialog: dialog.accept())


def test_the_display_follows_the_fights_and_turns_off(asgi_server, browser: Browser, night_market):
    base = asgi_server.url
    campaign = night_market["campaign"]
    errors: list[str] = []
    gm = log_in(browser, base, "gm")
    phone = log_in(browser, base, "pat", **PHONE)
    for page in (gm, phone):
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)

    # The GM makes the display link on the campaign page; its QR code reads as the link.
    gm.goto(f"{base}{campaign.get_absolute_url()}")
    gm.get_by_role("button", name="Make a display link").click()
    link = gm.get_by_test_id("display-url").inner_text().strip()
    assert re.fullmatch(rf"{re.escape(base)}/display/[\w-]{{43}}/", link)
    assert decode_png(gm.get_by_test_id("display-qr").locator("svg").screenshot()) == [link]

    # The TV opens it, logged in as nobody: no fight yet.
    tv = browser.new_context(viewport=TV).new_page()
    tv.clock.install()  # its own time, to skip the final board's seconds below
    tv.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    tv.goto(link)
    expect(tv.get_by_test_id("display-idle")).to_contain_text("Night Market")

    # The GM starts the first fight from the laptop; the TV picks it up by itself.
    first, thug = night_market["prepare"]("Ambush")
    gm.goto(f"{base}{first.get_absolute_url()}")
    gm.get_by_role("button", name="Start: roll initiative").click()
    expect(gm.get_by_test_id("round")).to_contain_text("1")
    board = tv.get_by_test_id("display-board")
    expect(board).to_contain_text("Ambush", timeout=IDLE_PICKUP)
    expect(tv.get_by_test_id("display-status")).to_have_text("Live")
    expect(tv.get_by_test_id("display-round")).to_have_text("Round 1")
    turn = gm.get_by_test_id("turn").inner_text().strip()
    now = tv.get_by_test_id("display-turn").locator("strong")
    expect(now).to_have_text(turn)

    # The hidden thug: a word on the TV and on the player's phone, never a number.
    word = tv.get_by_test_id(f"display-words-{thug.pk}")
    expect(word).to_have_text("unhurt")
    phone.goto(f"{base}{first.get_absolute_url()}")
    expect(phone.get_by_test_id(f"words-{thug.pk}")).to_have_text("unhurt")
    chest = night_market["thug"].zones.get(name="chest")
    menu = gm.locator(f"#row-menu-{thug.pk}")
    menu.locator("summary").click()
    menu.locator("select[name=zone]").select_option(str(chest.pk))
    menu.locator("input[name=amount]").fill("15")
    menu.get_by_role("button", name="Damage").click()
    expect(word).to_have_text("badly hurt", timeout=2_000)
    expect(phone.get_by_test_id(f"words-{thug.pk}")).to_have_text("badly hurt", timeout=2_000)
    row = tv.get_by_test_id(f"display-fighter-{thug.pk}").inner_text()
    assert not re.search(r"\d", row.replace("#1", "")), row

    # The GM passes the turn: the TV follows live.
    gm.get_by_test_id("next-turn").click()
    expect(gm.get_by_test_id("turn")).not_to_have_text(turn)
    expect(now).not_to_have_text(turn, timeout=2_000)
    expect(tv.get_by_test_id("display-next")).to_have_text(turn)
    # The laptop's own stream brings the same change a moment after its answer: wait for it, so
    # its redraw does not land between the two clicks that end the fight below.
    latest = CombatLogEntry.objects.filter(encounter=first).latest("id").pk
    expect(gm.locator("#live")).to_have_attribute("sse-connect", re.compile(rf"after={latest}$"))
    SHOTS.mkdir(exist_ok=True)
    tv.screenshot(path=SHOTS / "display-1920x1080.png")
    assert tv.evaluate("document.documentElement.scrollWidth") <= TV["width"]
    projector = browser.new_context(viewport=PROJECTOR).new_page()
    projector.goto(link)
    expect(projector.get_by_test_id("display-status")).to_have_text("Live")
    projector.screenshot(path=SHOTS / "display-1280x720.png")
    assert projector.evaluate("document.documentElement.scrollWidth") <= PROJECTOR["width"]
    assert projector.evaluate("document.documentElement.scrollHeight") <= PROJECTOR["height"]
    projector.close()

    # The GM ends the fight: the TV goes idle, then picks up the second fight by itself.
    gm.get_by_test_id("end-fight").locator("summary").click()  # it asks first
    gm.get_by_test_id("end-fight-confirm").click()
    # The laptop shows the end first, so a late TV is told apart from a lost click.
    expect(gm.get_by_test_id("status")).to_have_text(re.compile("Finished", re.I))
    # The TV's own stream brings it: a live push, which the browser leg's load (Chromium, lint)
    # once delayed past 5 s.
    expect(tv.get_by_test_id("display-round")).to_have_text("Fight over", timeout=15_000)
    idle = tv.get_by_test_id("display-idle")
    expect(idle).to_have_count(0)
    # Its 8 seconds are skipped (the board's timer may start a moment after the words show).
    move_clock_until(tv, lambda: idle.count() > 0, seconds=OVER // 1_000 + 4)
    expect(idle).to_be_visible(timeout=IDLE_PICKUP)
    second, _ = night_market["prepare"]("Bridge")
    gm.goto(f"{base}{second.get_absolute_url()}")
    gm.get_by_role("button", name="Start: roll initiative").click()
    expect(tv.get_by_test_id("display-board")).to_contain_text("Bridge", timeout=IDLE_PICKUP)
    expect(tv.get_by_test_id("display-status")).to_have_text("Live")

    # The GM turns the display off: the open TV says so at once, and shows nothing more.
    gm.goto(f"{base}{campaign.get_absolute_url()}")
    gm_confirms(gm)
    gm.get_by_role("button", name="Turn display off").click()
    expect(gm.get_by_test_id("display-url")).to_have_count(0)
    expect(tv.get_by_test_id("display-off")).to_have_text(
        re.compile("This display was turned off"), timeout=3_000
    )
    expect(tv.get_by_test_id("display-board")).to_have_count(0)
    assert "Bridge" not in tv.content() and "Ysolde" not in tv.content()
    tv.screenshot(path=SHOTS / "display-off.png")
    # The 404 of the turned-off page is expected; nothing else went wrong (CSP included).
    assert [e for e in errors if "404" not in e] == [], errors
