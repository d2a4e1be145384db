"""A double click applies once: htmx buttons and plain POST forms (static/js/app.js)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from sheets import services
from sheets.models import Character
from tests.browser.helpers import open_as
from tests.security.pages import DemoTable

pytestmark = pytest.mark.django_db(transaction=True)


def double_click(page: Page, button: Any) -> list[Any]:
    """Two clicks 120 ms apart, as a person's double click, the second one whatever state the
    button is in by then (a disabled button ignores it). Returns the POST requests the page
    sends from then on: a second one would leave at the second click, long before the slow
    server answers the first."""
    posts: list[Any] = []

    def keep_posts(request: Any) -> None:
        if request.method == "POST":
            posts.append(request)

    page.on("request", keep_posts)
    button.evaluate(
        "b => new Promise((done) => { b.click(); setTimeout(() => { b.click(); done(); }, 120); })"
    )
    return posts


@pytest.fixture
def slow_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sheet's writes take a moment, as on a busy server, so the second click of a double
    click lands while the first request is still being answered."""
    for name in ("adjust_wounds", "roll_reserve"):
        original = getattr(services, name)

        def slow(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
            time.sleep(0.4)
            return _original(*args, **kwargs)

        monkeypatch.setattr(services, name, slow)


def test_a_double_clicked_wound_button_adds_one_wound(
    live_server, browser: Browser, slow_server: None, demo_table: DemoTable
):
    demo = demo_table
    character = demo.character
    zone = character.zones.get(name="chest")
    page = open_as(browser, live_server.url, "gm", {})
    page.goto(f"{live_server.url}/characters/{character.pk}/")
    version = Character.objects.get(pk=character.pk).version
    posts = double_click(page, page.get_by_role("button", name="Add a wound to chest"))
    expect(page.get_by_test_id("wounds-chest")).to_have_text(str(zone.wounds + 1))
    assert len(posts) == 1, [p.url for p in posts]
    zone.refresh_from_db()
    assert zone.wounds == 1
    assert Character.objects.get(pk=character.pk).version == version + 1


def test_a_double_clicked_plain_form_posts_once(
    live_server, browser: Browser, slow_server: None, demo_table: DemoTable
):
    demo = demo_table
    character = demo.character
    page = open_as(browser, live_server.url, "gm", {})
    page.goto(f"{live_server.url}/characters/{character.pk}/")
    version = Character.objects.get(pk=character.pk).version
    page.get_by_text("Rest, Fate and reserve roll").click()
    page.get_by_label("Reserve roll (d100, empty: the server rolls)").fill("42")
    posts = double_click(page, page.get_by_role("button", name="Store as RSV"))
    expect(page.get_by_text("RSV is now 42.")).to_be_visible()
    assert len(posts) == 1, [p.url for p in posts]
    assert Character.objects.get(pk=character.pk).version == version + 1
    # The page that came back works again (and keeps the panel open that was open).
    page.get_by_label("Reserve roll (d100, empty: the server rolls)").fill("43")
    page.get_by_role("button", name="Store as RSV").click()
    expect(page.get_by_text("RSV is now 43.")).to_be_visible()
