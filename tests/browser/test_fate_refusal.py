"""A refused Fate spend is told where the player is looking (issue 39): in the result card whose
Fate form they used, on a phone, not above the tracker out of sight."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from sheets.models import Character
from tests.browser.helpers import PHONE, log_in
from tests.factories import make_fight
from tests.fight_steps import strike

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_refused_reroll_is_told_in_the_result_card(
    live_server: Any, browser: Browser, table: Any
):
    fight = make_fight(table)
    gm, player = table.gm, table.player
    strike(fight.encounter, fight.ysolde, fight.thug, actor=player, defender=gm, roll=3)
    page = log_in(browser, live_server.url, player.username, **PHONE)
    page.goto(f"{live_server.url}{fight.encounter.get_absolute_url()}")
    card = page.get_by_test_id("result-card").locator("visible=true")
    expect(card.get_by_test_id("fate-reroll")).to_be_visible()
    # Spent elsewhere meanwhile (this server sends no live updates): the press is refused.
    Character.objects.filter(pk=fight.ysolde.character_id).update(fate=0)
    card.get_by_test_id("fate-reroll").click()
    refusal = page.get_by_test_id("result-card").get_by_test_id("fate-error")
    expect(refusal).to_have_text("Ysolde Varr has no Fate to spend.")
    expect(refusal).to_be_in_viewport()
    expect(page.get_by_test_id("error")).to_have_count(0)
