"""The PvD calculator updates in place with htmx, the sibling dice pages read, roll and show
their odds, and a campaign's dice page logs its rolls, all under the CSP."""

from __future__ import annotations

import random
from typing import Any

import pytest
from playwright.sync_api import Page, Route, expect

from rules import ogs, okrpg, sds
from rules.models import DiceRoll
from sheets import randomness
from tests.browser.helpers import listen, wait
from tests.factories import PASSWORD, make_campaign, make_user

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_reads_a_typed_roll_without_reloading(live_server, page: Page):
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"{live_server.url}/dice/omg/")
    expect(page.get_by_role("heading", name="PvD calculator")).to_be_visible()
    expect(page.locator("svg rect").first).to_be_visible()
    page.evaluate("window.__sameDocument = true")

    # From the default scores (a fast strike) the fields already say 80, 25 and fast.
    expect(page.get_by_label("PRO:", exact=True)).to_have_value("80")
    expect(page.get_by_label("Read as a fast strike (second hit)")).to_be_checked()
    page.get_by_label("PRO and DIF").check()
    page.get_by_label("PRO:", exact=True).fill("70")
    page.get_by_label("DIF:", exact=True).fill("20")
    page.get_by_label("DIF:", exact=True).press("Tab")
    expect(page.get_by_test_id("hit-chance")).to_have_text("54%")
    page.get_by_label("Your d100 roll").fill("43")
    page.get_by_role("button", name="Read my roll").click()

    expect(page.get_by_test_id("degree")).to_have_text("Success")
    expect(page.get_by_test_id("sum")).to_have_text("7")
    expect(page.get_by_test_id("second")).to_have_text("Hit")
    assert page.evaluate("window.__sameDocument") is True  # no full reload
    assert not errors, errors  # includes any CSP violation


def test_it_rolls_ore_dice_on_a_sibling_page(live_server, page: Page):
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"{live_server.url}/dice/")
    page.get_by_role("link", name="ORE", exact=True).first.click()
    expect(page.get_by_role("heading", name="ORE dice")).to_be_visible()
    page.get_by_label("Your d10s").fill("3 4 4 4 6 8 10")
    page.get_by_role("button", name="Read my dice").click()
    expect(page.get_by_test_id("best")).to_have_text("Best set 3x4, to the left arm")
    expect(page.locator(".die-best")).to_have_count(3)
    page.get_by_role("button", name="Roll for me").click()
    expect(page.get_by_test_id("result")).to_contain_text("7 dice on the table")
    assert not errors, errors


def open_campaign_ore_page(page: Page, base: str) -> tuple[Any, list[str]]:
    """Robin, a player of Night Market, on the ORE tab of the campaign's dice page."""
    player = make_user("robin")
    campaign = make_campaign(make_user("morgan"), players=(player,), name="Night Market")
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"{base}/accounts/login/")
    page.get_by_label("Username").fill("robin")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.goto(f"{base}/campaigns/{campaign.pk}/")
    page.get_by_role("button", name="Dice and roll log").click()
    expect(page.get_by_role("heading", name="Dice for Night Market")).to_be_visible()
    page.get_by_role("link", name="ORE", exact=True).first.click()
    expect(page.get_by_role("heading", name="ORE dice")).to_be_visible()
    return campaign, errors


def test_it_logs_rolls_on_a_campaign_dice_page(live_server, page: Page):
    campaign, errors = open_campaign_ore_page(page, live_server.url)
    player = campaign.players.get()
    expect(page.locator("#dice-log")).to_contain_text("No rolls yet")
    page.evaluate("window.__sameDocument = true")

    # The odds still follow the inputs (a GET), and nothing is logged for them.
    page.get_by_label("Pool").fill("2")
    page.get_by_label("Pool").blur()
    expect(page.get_by_test_id("success-chance")).to_have_text("10%")
    page.get_by_label("Pool").fill("7")
    page.get_by_label("Pool").blur()
    expect(page.get_by_test_id("success-chance")).not_to_have_text("10%")

    page.get_by_label("Your d10s").fill("3 4 4 4 6 8 10")
    page.get_by_label("What for? (optional)").fill("Punch the mugger")
    page.get_by_role("button", name="Read my dice").click()
    expect(page.get_by_test_id("best")).to_have_text("Best set 3x4, to the left arm")
    log = page.get_by_test_id("dice-log")
    expect(log.locator("tbody tr")).to_have_count(1)
    expect(log).to_contain_text("Punch the mugger")
    expect(log).to_contain_text("3x4 to the left arm")
    expect(log).to_contain_text("robin")

    page.get_by_role("button", name="Roll for me").click()
    expect(log.locator("tbody tr")).to_have_count(2)
    expect(log.locator("tbody tr").first).to_contain_text("server dice")
    assert page.evaluate("window.__sameDocument") is True  # no full reload
    assert DiceRoll.objects.filter(campaign=campaign, roller=player).count() == 2
    assert not errors, errors  # includes any CSP violation


def test_it_keeps_a_roll_when_an_older_odds_answer_arrives_after_it(live_server, page: Page):
    _, errors = open_campaign_ore_page(page, live_server.url)

    # The odds request for a new pool is held back until the roll's answer is on the page.
    held: list[Route] = []

    def hold_odds(route: Route) -> None:
        if route.request.method == "GET" and route.request.headers.get("hx-request"):
            held.append(route)
        else:
            route.continue_()

    page.route(lambda url: "/dice" in url, hold_odds)
    with page.expect_request(lambda r: r.method == "GET" and "hx-request" in r.headers):
        page.get_by_label("Pool").fill("2")
        page.get_by_label("Pool").blur()
    page.get_by_label("Your d10s").fill("3 4")
    page.get_by_role("button", name="Read my dice").click()
    expect(page.get_by_test_id("result")).to_contain_text("2 dice on the table")
    assert len(held) == 1
    # The late answer arrives and must be dropped, not shown.
    odds = "(e) => e.detail.elt.closest('[data-dice-fields]') !== null"
    listen(page, "late-odds", "document", "htmx:afterRequest", odds)
    held[0].continue_()
    wait(page, "late-odds")

    expect(page.get_by_test_id("result")).to_contain_text("2 dice on the table")
    expect(page.get_by_test_id("dice-log").locator("tbody tr")).to_have_count(1)
    assert not errors, errors  # an aborted request would be logged as an error


@pytest.fixture
def seeded(monkeypatch: pytest.MonkeyPatch) -> None:
    # The live server runs in this process: its server dice are this seeded generator.
    monkeypatch.setattr(randomness, "RNG", random.Random(7))


def open_tab(page: Page, url: str, tab: str, heading: str) -> list[str]:
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"{url}/dice/")
    page.get_by_role("navigation", name="Dice systems").get_by_role("link", name=tab).click()
    expect(page.get_by_role("heading", name=heading, exact=True)).to_be_visible()
    page.evaluate("window.__sameDocument = true")
    return errors


def test_it_reads_and_rolls_an_ogs_check_with_its_odds(live_server, page: Page, seeded):
    errors = open_tab(page, live_server.url, "OGS", "OGS dice")
    # Seed: d6 + d8 + d10 rolling 4, 5, 7 against 8 is 16, four stages of critical success.
    page.get_by_label("Dice:", exact=True).fill("d6 d8 d10")
    page.get_by_label("Dice:", exact=True).blur()
    expect(page.get_by_role("heading", name="d6 + d8 + d10")).to_be_visible()
    page.get_by_label("Difficulty:", exact=True).fill("12")
    page.get_by_label("Difficulty:", exact=True).blur()
    expect(page.get_by_test_id("success-chance")).to_have_text("68%")
    page.get_by_label("Difficulty:", exact=True).fill("8")
    page.get_by_label("Difficulty:", exact=True).blur()
    expect(page.get_by_test_id("success-chance")).to_have_text("93%")
    page.get_by_label("Your dice").fill("4 5 7")
    page.get_by_role("button", name="Read my dice").click()
    expect(page.get_by_test_id("total")).to_have_text("Total 16: success")
    expect(page.get_by_test_id("result")).to_contain_text("4 stages of critical success")
    expect(page.get_by_text("(exactly 89/96)")).to_be_visible()

    rolled = ogs.roll_check(ogs.ActionCheck((6, 8, 10)), difficulty=8, rng=random.Random(7))
    page.get_by_role("button", name="Roll for me").click()
    expect(page.get_by_test_id("total")).to_contain_text(f"Total {rolled.total}")
    expect(page.get_by_test_id("success-chance")).to_have_text("93%")
    assert page.evaluate("window.__sameDocument") is True  # no full reload
    assert not errors, errors  # includes any CSP violation


def test_it_reads_and_rolls_the_ok_rpg_tide_with_its_odds(live_server, page: Page, seeded):
    errors = open_tab(page, live_server.url, "OK RPG", "OK RPG")
    page.get_by_label("Damage rank").select_option("Grt")
    page.get_by_label("Damage resistance").select_option("Avg+")
    page.get_by_label("Lethality").select_option("cutting")
    expect(page.get_by_test_id("damage")).to_have_text("3 points: 2 lethal, 1 nonlethal")
    expect(page.get_by_test_id("success-chance")).to_have_text("17%")
    # A cursed side keeps the worse of two d6: a setback 11 times in 36.
    page.get_by_label("Tide of Battle").select_option("worse")
    expect(page.get_by_test_id("success-chance")).to_have_text("31%")
    page.get_by_label("Your Tide d6(s)").fill("6 2")
    page.get_by_role("button", name="Read my Tide").click()
    expect(page.get_by_test_id("tide")).to_have_text("2")
    expect(page.get_by_test_id("result")).to_contain_text("Tide: 6, 2")

    rolled = okrpg.roll_tide("worse", rng=random.Random(7))
    page.get_by_role("button", name="Roll the Tide for me").click()
    expect(page.get_by_test_id("result")).to_contain_text(
        "Tide: " + ", ".join(map(str, rolled.dice))
    )
    expect(page.get_by_test_id("tide")).to_contain_text(str(rolled.value))
    assert page.evaluate("window.__sameDocument") is True
    assert not errors, errors


def test_it_reads_and_rolls_a_simple_die_check_with_its_odds(live_server, page: Page, seeded):
    errors = open_tab(page, live_server.url, "Simple Die", "Simple Die System dice")
    page.get_by_label("Skill:", exact=True).fill("8")
    page.get_by_label("Against").select_option("die")
    page.get_by_label("Difficulty:", exact=True).fill("8")
    page.get_by_label("Difficulty:", exact=True).blur()
    expect(page.get_by_test_id("success-chance")).to_have_text("55%")
    page.get_by_label("Difficulty:", exact=True).fill("10")
    page.get_by_label("Difficulty:", exact=True).blur()
    expect(page.get_by_test_id("success-chance")).to_have_text("46%")
    # Seed: a 5 on the d8 with a heroic chain 10, 20, 3 is 500, against the GM's 7.
    page.get_by_label("Skill die face(s)").fill("5")
    page.get_by_label("Flag d20 face(s)").fill("10 20 3")
    page.get_by_label("GM's die face").fill("7")
    page.get_by_role("button", name="Read my dice").click()
    expect(page.get_by_test_id("outcome")).to_have_text("5 × 100 = 500 against 7: the player wins")
    expect(page.get_by_test_id("result")).to_contain_text("Heroic chain")

    # Typed-in dice missing the GM's die are refused on the page, never rolled for it.
    page.get_by_label("GM's die face").fill("")
    page.get_by_role("button", name="Read my dice").click()
    expect(page.locator(".dice-errors")).to_contain_text("the GM's d10 too")
    expect(page.get_by_test_id("result")).to_have_count(0)

    rolled = sds.check(sds.SkillCheck(8), sds.Difficulty(die=10), rng=random.Random(7))
    page.get_by_role("button", name="Roll for me").click()
    expect(page.get_by_test_id("outcome")).to_contain_text(f"against {rolled.gm_result}")
    expect(page.get_by_test_id("outcome")).to_contain_text(str(rolled.result))
    expect(page.get_by_test_id("success-chance")).to_have_text("46%")
    assert page.evaluate("window.__sameDocument") is True
    assert not errors, errors


def test_typing_pro_and_dif_reads_the_roll_at_them(live_server, page: Page):
    """The calculator starts from scores (80v25 here); typing PRO and DIF switches it to them,
    so the roll is read at 70v20 without choosing "PRO and DIF" first."""
    page.goto(f"{live_server.url}/dice/omg/")
    expect(page.get_by_label("Aptitude + discipline")).to_be_checked()
    page.get_by_label("PRO:", exact=True).fill("70")
    page.get_by_label("DIF:", exact=True).fill("20")
    expect(page.get_by_label("PRO and DIF")).to_be_checked()
    page.get_by_label("Your d100 roll").fill("43")
    page.get_by_role("button", name="Read my roll").click()
    expect(page.get_by_test_id("result")).to_contain_text("at 70v20")


def test_a_hit_on_a_disciplined_dodge_says_it_was_halved(live_server, page: Page):
    page.goto(f"{live_server.url}/dice/omg/")
    # From scores: a fast strike 80 against a disciplined dodge (DIF 25); 43 hits.
    page.get_by_label("Your d100 roll").fill("43")
    page.get_by_role("button", name="Read my roll").click()
    expect(page.get_by_test_id("result")).to_contain_text("halved by the dodge")


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("system", ["omg", "ogs", "okrpg", "ore", "sds"])
def test_it_puts_each_label_with_its_own_field(live_server, browser, system, width):
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.goto(f"{live_server.url}/dice/{system}/")
    # Every panel open, so that each field has a box.
    page.eval_on_selector_all(".dice-form details", "ds => ds.forEach(d => d.open = true)")
    boxes = page.eval_on_selector_all(
        ".dice-form label[for]",
        """labels => labels.map(l => {
            const f = document.getElementById(l.htmlFor);
            if (!f || f.type === 'hidden') return null;
            const a = l.getBoundingClientRect(), b = f.getBoundingClientRect();
            return {label: l.textContent.trim(), type: f.type,
                    l: [a.left, a.top, a.right, a.bottom], f: [b.left, b.top, b.right, b.bottom]};
        }).filter(Boolean)""",
    )
    assert len(boxes) >= 3
    wrong = []
    for box in boxes:
        (ll, lt, lr, lb), (fl, ft, fr, fb) = box["l"], box["f"]
        if box["type"] in ("checkbox", "radio"):
            # A box beside its words, on the same line.
            ok = ft < lb and fb > lt and (fr <= ll + 2 or fl >= lr - 2 or ll <= fl <= lr)
        else:
            # The field below its label in the same column, with no other label between (its
            # help text may be).
            between = [o for o in boxes if abs(o["l"][0] - ll) <= 4 and lb - 2 < o["l"][1] < ft]
            ok = ft >= lb - 2 and abs(fl - ll) <= 4 and not between
        if not ok:
            wrong.append(box)
    assert wrong == []
    context.close()


def test_the_pro_and_dif_fields_follow_the_scores_in_place(live_server, page: Page):
    page.goto(f"{live_server.url}/dice/omg/")
    page.evaluate("window.__sameDocument = true")
    page.get_by_label("Attacker aptitude").select_option("5")
    page.get_by_label("Defender aptitude").select_option("1")
    heading = page.locator("#dice-panel h2")
    expect(heading).not_to_have_text("80 v 25")
    page.wait_for_load_state("networkidle")
    pro, dif = heading.inner_text().split(" v ")
    expect(page.get_by_label("PRO:", exact=True)).to_have_value(pro)
    expect(page.get_by_label("DIF:", exact=True)).to_have_value(dif)
    page.get_by_role("button", name="Roll for me").click()
    expect(page.get_by_test_id("result")).to_contain_text(f"at {pro}v{dif}")
    expect(page.get_by_label("PRO:", exact=True)).to_have_value(pro)
    assert page.evaluate("window.__sameDocument") is True
