"""The GM reads the fight forecast before the first roll: on the prepared encounter a first
look at once, then the full forecast swapped in; a "what if" of one NPC more; the same block
on the matchup page. Every page passes the checks of tests/browser/helpers.py (axe-core, nothing
wider than the screen, no control under 24 px, no console error). A player never reaches it."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from playwright.sync_api import expect

from prep.models import PreparedEncounter
from tests.browser.helpers import LAPTOP, PHONE, check_page, open_as
from tests.security.pages import DemoTable

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def demo_table(demo_table: DemoTable) -> DemoTable:
    """The demo table's prepared "Ford" (two town guards), with Ysolde expected."""
    demo = demo_table
    prepared = PreparedEncounter.objects.get(pk=demo.ids["prepared"])
    prepared.expected.set([demo.character])
    cache.clear()
    return demo


@pytest.mark.parametrize(("device", "label"), [(LAPTOP, "laptop"), (PHONE, "phone")])
def test_the_gm_reads_the_forecast_on_both_pages(asgi_server, browser, demo_table, device, label):
    width = device["viewport"]["width"]
    base = asgi_server.url
    prepared = PreparedEncounter.objects.get(pk=demo_table.ids["prepared"])
    page = open_as(browser, base, "gm", device)

    page.goto(f"{base}{prepared.get_absolute_url()}")
    block = page.get_by_test_id("forecast")
    expect(block.get_by_role("heading", name="Fight forecast")).to_be_visible()
    expect(page.get_by_test_id("forecast-verdict")).to_be_visible()
    # The full forecast replaces the first look on its own.
    expect(page.get_by_test_id("forecast-summary")).to_contain_text("10000 fights")
    expect(page.get_by_test_id("forecast-refining")).to_have_count(0)
    expect(page.get_by_test_id("forecast-party")).to_contain_text("Ysolde Varr")
    expect(page.get_by_test_id("forecast-groups")).to_contain_text("2 × Town Guard")
    check_page(page, width)

    # What if one more thug came?
    form = page.get_by_test_id("what-if-form")
    form.get_by_label("one more").select_option(label="Thug")
    form.get_by_role("button", name="Forecast it").click()
    expect(page.get_by_test_id("what-if-heading")).to_have_text("What if: one more Thug")
    expect(page.get_by_test_id("what-if-groups")).to_contain_text("1 × Thug")
    expect(page.get_by_test_id("forecast-verdict")).to_be_visible()
    check_page(page, width)

    # The matchup table carries the same forecast, cached by now.
    page.goto(f"{base}/prepared/{prepared.pk}/matchups/")
    expect(page.get_by_role("heading", name="Matchup table")).to_be_visible()
    expect(page.get_by_test_id("forecast-summary")).to_contain_text("10000 fights")
    check_page(page, width)


def test_a_player_never_reaches_the_forecast(asgi_server, browser, demo_table):
    page = open_as(browser, asgi_server.url, "alice", PHONE)
    response = page.goto(f"{asgi_server.url}/prepared/{demo_table.ids['prepared']}/forecast/")
    assert response is not None and response.status == 404
    expect(page.get_by_test_id("forecast")).to_have_count(0)


def test_a_refused_forecast_request_is_told_beside_its_form(asgi_server, browser, demo_table):
    """An htmx request the server refuses swaps nothing (htmx-config): static/js/app.js tells
    the plain-text reason beside the form that sent it, and the next answer clears it."""
    base = asgi_server.url
    prepared = PreparedEncounter.objects.get(pk=demo_table.ids["prepared"])
    page = open_as(browser, base, "gm", LAPTOP)
    page.goto(f"{base}{prepared.get_absolute_url()}")
    expect(page.get_by_test_id("forecast-refining")).to_have_count(0)

    # More fights than any forecast plays (a stale tab, an edited link): a 400 whose text
    # names the cap. With DEBUG on (make run, this server), django-htmx's helper swapped it
    # in place of the whole page; in production nothing at all was shown.
    form = page.get_by_test_id("what-if-form")
    form.evaluate(
        """form => { const extra = document.createElement("input");
                     extra.type = "hidden"; extra.name = "fights"; extra.value = "999999";
                     form.append(extra); }"""
    )
    form.get_by_label("one more").select_option(label="Thug")
    form.get_by_role("button", name="Forecast it").click()
    error = page.get_by_test_id("request-error")
    expect(error).to_be_visible()
    expect(error).to_have_attribute("role", "alert")
    expect(error).to_contain_text("fights")
    expect(page.get_by_test_id("forecast-summary")).to_contain_text("10000 fights")

    # The same form's next request succeeds: the reason goes away.
    form.evaluate("""form => form.querySelector("input[name=fights]").remove()""")
    form.get_by_role("button", name="Forecast it").click()
    expect(page.get_by_test_id("what-if-heading")).to_have_text("What if: one more Thug")
    expect(page.get_by_test_id("request-error")).to_have_count(0)
    # The refused request was logged by the browser (its 400) and by htmx: nothing else.
    errors = page.errors  # type: ignore[attr-defined]  # collected by open_as
    assert len(errors) == 2 and "400" in errors[0] and "400" in errors[1], errors
    errors.clear()
    check_page(page, LAPTOP["viewport"]["width"])
