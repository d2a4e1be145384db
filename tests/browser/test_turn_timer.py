"""The turn timer on every screen: the GM's laptop, the player's phone and the table display
count down the same turn, warn in its last seconds, say when time is up, and nothing happens
by itself."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, ViewportSize, expect

from combat import display
from combat.models import Encounter
from tests.browser.helpers import PHONE, log_in, move_clock_until

pytestmark = pytest.mark.django_db(transaction=True)

TV: ViewportSize = {"width": 1920, "height": 1080}
SHOTS = Path(tempfile.gettempdir()) / "omg-shots"  # looked at by hand, not compared


def timer_shows(page: Page, state: str) -> Callable[[], bool]:
    timer = page.get_by_test_id("turn-timer")
    return lambda: state in (timer.get_attribute("class") or "").split()


def test_the_timer_counts_down_on_every_screen(
    asgi_server,
    browser: Browser,
    fight: dict[str, Any],
):
    base = asgi_server.url
    encounter = fight["encounter"]
    url = f"{base}{encounter.get_absolute_url()}"
    gm = log_in(browser, base, "gm")
    phone = log_in(browser, base, "pat", **PHONE)
    link = display.make_link(campaign=encounter.campaign, actor=encounter.campaign.gm)
    tv = browser.new_context(viewport=TV).new_page()
    screens = (gm, phone, tv)
    for page in screens:  # each screen's own time, moved on below instead of waited out
        page.clock.install()
    for page in (gm, phone):
        page.goto(url)
        expect(page.get_by_test_id("live-status")).to_contain_text("Live")
    tv.goto(f"{base}/display/{link.secret}/")
    expect(tv.get_by_test_id("display-status")).to_have_text("Live")
    for page in screens:
        expect(page.get_by_test_id("turn-timer")).to_have_count(0)

    # The GM switches it on from the laptop: 12 seconds a turn.
    form = gm.get_by_test_id("timer-form")
    form.locator("input[name=seconds]").fill("12")
    form.get_by_role("button", name="Set").click()
    for page in screens:
        timer = page.get_by_test_id("turn-timer")
        expect(timer).to_contain_text("of 12 s", timeout=2_000)
    # Its last 10 seconds are a warning, then time is up, on each screen.
    for page in screens:
        move_clock_until(page, timer_shows(page, "turn-timer-warning"))
        expect(page.get_by_test_id("turn-timer")).to_have_class("turn-timer turn-timer-warning")
    SHOTS.mkdir(exist_ok=True)
    for name, page in zip(("gm", "phone", "tv"), screens, strict=True):
        page.screenshot(path=SHOTS / f"timer-{name}.png")
    for page in screens:
        move_clock_until(page, timer_shows(page, "turn-timer-up"))
        timer = page.get_by_test_id("turn-timer")
        expect(timer).to_contain_text("time's up")
        expect(timer).to_have_class("turn-timer turn-timer-up")
    # Nothing happens by itself: a whole minute more on every screen's clock sends nothing,
    # and the turn stays where it was.
    turn = gm.get_by_test_id("turn").inner_text()
    posts: list[str] = []
    for page in screens:
        page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
        page.clock.fast_forward(60_000)
        page.evaluate("() => null")  # a round trip: what the timers started has been sent
    assert posts == []
    assert Encounter.objects.get(pk=encounter.pk).turn_id == fight["thug"].pk
    expect(gm.get_by_test_id("turn")).to_have_text(turn)
    # The GM passes the turn: the next one gets the whole time again everywhere.
    gm.get_by_test_id("next-turn").click()
    for page in screens:
        expect(page.get_by_test_id("turn-timer")).not_to_contain_text("time's up", timeout=2_000)
