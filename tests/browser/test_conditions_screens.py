"""Conditions at the table: the GM stuns Ysolde from her row's menu on the laptop, her
player's phone shows it first (and no declare form), and it expires on the phone, live, when
her next turn is passed over. Both screens stay axe clean with nothing wider than the screen."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from combat.models import Participant
from tests.browser.helpers import LAPTOP, PHONE, check_page, open_as

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_stun_shows_on_both_screens_and_expires_with_the_lost_turn(
    asgi_server, browser, demo_table, tmp_path
):
    encounter = demo_table.encounter
    ysolde = encounter.participants.get(character=demo_table.character)
    gm = open_as(browser, asgi_server.url, "gm", LAPTOP)
    gm.goto(f"{asgi_server.url}{encounter.get_absolute_url()}")
    row = gm.locator(f'[data-testid="participant-{ysolde.pk}"]')
    row.get_by_label(f"More for {ysolde.character.name}").click()
    form = gm.locator(f'[data-testid="condition-form-{ysolde.pk}"]')
    form.get_by_label("Condition").select_option("stunned")
    form.get_by_role("button", name="Add").click()
    chip = gm.locator(f'[data-testid="condition-{ysolde.pk}-stunned"]')
    expect(chip).to_contain_text("Stunned")
    expect(chip).to_contain_text("until their next turn")
    # The menu did its job and closes, uncovering the row.
    expect(row.locator("details.row-menu")).not_to_have_attribute("open", "")
    # A refused one stays open, with the reason on the page.
    row.get_by_label(f"More for {ysolde.character.name}").click()
    form = gm.locator(f'[data-testid="condition-form-{ysolde.pk}"]')
    form.get_by_label("Condition").select_option("other")
    form.get_by_role("button", name="Add").click()
    expect(gm.get_by_text("Choose a condition or type its name.")).to_be_visible()
    expect(row.locator("details.row-menu")).to_have_attribute("open", "")
    gm.errors.clear()  # type: ignore[attr-defined]  # the browser logs the expected 422
    row.get_by_label(f"More for {ysolde.character.name}").click()
    gm.screenshot(path=tmp_path / "conditions-gm.png", full_page=True)
    check_page(gm, LAPTOP["viewport"]["width"])

    phone = open_as(browser, asgi_server.url, "alice", PHONE)
    phone.goto(f"{asgi_server.url}{encounter.get_absolute_url()}")
    mine = phone.locator(f'[data-testid="my-conditions-{ysolde.pk}"]')
    expect(mine).to_contain_text("Stunned")
    expect(mine).to_contain_text("cannot act while stunned")
    expect(phone.locator('[data-testid="declare-form"]')).to_have_count(0)
    expect(phone.get_by_role("button", name="Remove Stunned from Ysolde Varr")).to_have_count(0)
    phone.screenshot(path=tmp_path / "conditions-phone.png", full_page=True)
    check_page(phone, PHONE["viewport"]["width"])

    # The GM passes turns until Ysolde's next turn comes: it is passed over and the stun ends,
    # on the phone too, through the live feed.
    expect(phone.locator('[data-testid="live-status"]')).to_contain_text("Live")
    for _ in range(Participant.objects.filter(encounter=encounter).count() * 2):
        if "stunned" not in Participant.objects.get(pk=ysolde.pk).conditions:
            break
        seq = (
            gm.locator('[data-testid="round"]').inner_text(),
            gm.locator('[data-testid="turn"]').inner_text(),
        )
        gm.get_by_test_id("next-turn").click()
        expect(gm.locator('[data-testid="turn"]')).not_to_have_text(seq[1])
    assert "stunned" not in Participant.objects.get(pk=ysolde.pk).conditions
    expect(mine).to_have_count(0)
    expect(phone.locator(f'[data-testid="condition-{ysolde.pk}-stunned"]')).to_have_count(0)
    expect(phone.locator('[data-testid="log"]')).to_contain_text("is no longer stunned")
