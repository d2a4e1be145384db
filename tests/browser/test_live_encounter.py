"""A fight in three browsers at once, served by uvicorn: the GM on a laptop, the player on a
phone, and a second screen of the player's that loses its connection and comes back.

Every action goes through the pages (the server runs in its own process with its own channel
layer); the test process only prepares the fight and reads the database to pick a roll."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from combat.models import Declaration
from tests.browser.helpers import PHONE, a_hitting_roll, listen, log_in, open_live, wait

pytestmark = pytest.mark.django_db(transaction=True)

WITHIN_A_SECOND = 1_000  # ms
WIDTH = PHONE["viewport"]["width"]


def log_texts(page: Page) -> list[str]:
    return page.locator("#combat-log li[data-entry]").all_inner_texts()


def test_gm_and_player_fight_live_and_a_dropped_screen_catches_up(
    asgi_server, browser: Browser, fight: dict[str, Any]
):
    base = asgi_server.url
    url = f"{base}{fight['encounter'].get_absolute_url()}"
    gm = log_in(browser, base, "gm")
    player = log_in(browser, base, "pat", **PHONE)
    second = log_in(browser, base, "pat")
    for page in (gm, player, second):
        open_live(page, url)

    # The GM sees who is following.
    expect(gm.get_by_test_id("presence-pat")).to_contain_text("connected")

    # The second screen drops (a laptop lid closing): its stream is closed, no reconnect yet.
    second.evaluate("document.getElementById('live')['htmx-internal-data'].sseEventSource.close()")

    # The GM declares the thug's precise strike at Ysolde's chest.
    form = gm.get_by_test_id("declare-form")
    form.locator("select[name=attacker]").select_option(str(fight["thug"].pk))
    form.locator("select[name=target_zone]").select_option(
        f"{fight['ysolde'].pk}:{fight['chest'].pk}"
    )
    form.locator("select[name=weapon]").select_option(str(fight["hatchet"].pk))
    form.locator("select[name=action]").select_option("precise")
    form.get_by_test_id("declare").click()

    # The player's phone shows the incoming attack with its odds, without a reload.
    incoming = player.locator(".declaration.incoming")
    expect(incoming).to_contain_text("Incoming attack!", timeout=WITHIN_A_SECOND)
    expect(incoming).to_contain_text("Salvager Thug")
    expect(incoming).to_contain_text("chest")
    expect(incoming.locator("table.odds tbody tr")).to_have_count(3)  # dodge, parry, block
    parry = incoming.get_by_test_id("defend-parry")
    box = parry.bounding_box()
    assert box is not None and box["x"] + box["width"] <= WIDTH
    assert player.evaluate("document.documentElement.scrollWidth") <= WIDTH
    parry.click()

    # The GM sees the parry arrive, and rolls physical dice typed in.
    declaration = Declaration.objects.get(encounter=fight["encounter"])
    expect(gm.get_by_test_id(f"declaration-{declaration.pk}")).to_contain_text(
        "will parry", timeout=WITHIN_A_SECOND
    )
    declaration.refresh_from_db()
    roll = a_hitting_roll(declaration)
    gm.get_by_test_id("roll-value").fill(str(roll))
    gm.get_by_test_id("roll").click()

    # Both screens show the same wounds and the same log within a second.
    expect(gm.locator("#combat-log li[data-entry]").first).to_contain_text(f"rolled {roll}")
    chest = f"zone-{fight['chest'].pk}"
    expect(gm.get_by_test_id(chest)).not_to_contain_text("chest 0/")
    wounds = gm.get_by_test_id(chest).inner_text()
    expect(player.get_by_test_id(chest)).to_have_text(wounds, timeout=WITHIN_A_SECOND)
    expect(player.locator("#combat-log li[data-entry]").first).to_have_text(
        log_texts(gm)[0], timeout=WITHIN_A_SECOND
    )
    assert log_texts(player) == log_texts(gm)

    # The GM passes the turn: the turn marker moves on the player's phone too.
    expect(player.get_by_test_id("turn")).to_have_text("Salvager Thug")
    gm.get_by_test_id("next-turn").click()
    expect(gm.get_by_test_id("turn")).not_to_have_text("Salvager Thug")
    turn, round_ = gm.get_by_test_id("turn").inner_text(), gm.get_by_test_id("round").inner_text()
    expect(player.get_by_test_id("turn")).to_have_text(turn, timeout=WITHIN_A_SECOND)
    expect(player.get_by_test_id("round")).to_have_text(round_, timeout=WITHIN_A_SECOND)

    # The dropped screen reconnects (as htmx does after an error) and catches up: same wounds,
    # same log, no entry twice.
    second.evaluate(
        "document.getElementById('live')['htmx-internal-data'].sseEventSource.onerror({})"
    )
    expect(second.get_by_test_id(chest)).to_have_text(wounds)
    expect(second.locator("#combat-log li[data-entry]").first).to_have_text(log_texts(gm)[0])
    ids = second.locator("#combat-log li[data-entry]").evaluate_all(
        "items => items.map(li => li.dataset.entry)"
    )
    assert len(ids) == len(set(ids))
    assert log_texts(second) == log_texts(gm)


def test_a_live_update_waits_while_the_gm_types_a_roll(
    asgi_server, browser: Browser, fight: dict[str, Any]
):
    """A tracker pushed while someone is typing does not wipe what they typed: it lands once
    they leave the form."""
    base = asgi_server.url
    url = f"{base}{fight['encounter'].get_absolute_url()}"
    gm = log_in(browser, base, "gm")
    player = log_in(browser, base, "pat")
    open_live(gm, url)
    open_live(player, url)
    decl_form = gm.get_by_test_id("declare-form")
    decl_form.locator("select[name=attacker]").select_option(str(fight["thug"].pk))
    decl_form.locator("select[name=target_zone]").select_option(
        f"{fight['ysolde'].pk}:{fight['chest'].pk}"
    )
    decl_form.locator("select[name=weapon]").select_option(str(fight["hatchet"].pk))
    decl_form.get_by_test_id("declare").click()
    expect(gm.locator(".declaration")).to_contain_text("Waiting for Ysolde")
    # The GM starts typing a manual damage amount; meanwhile the player defends.
    amount = gm.locator("[data-testid=adjust-form] input[name=amount]")
    amount.fill("3")
    dodged = "(e) => e.detail.type === 'tracker' && e.detail.data.includes('will dodge')"
    listen(gm, "dodge", "[data-live]", "htmx:sseBeforeMessage", dodged)
    player.get_by_test_id("defend-dodge").click()
    wait(gm, "dodge")  # the tracker with the defense reached the GM's page, which holds it
    expect(amount).to_have_value("3")  # not wiped by the pushed tracker
    expect(gm.locator(".declaration")).not_to_contain_text("will dodge")
    amount.blur()
    expect(gm.locator(".declaration")).to_contain_text("will dodge")
