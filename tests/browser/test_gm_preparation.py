"""The GM prepares a fight before the session, on a laptop and on a phone: the starter set in
the library, an NPC from the one-screen form, a prepared encounter with NPC groups and the
expected characters, its matchup table, and the one press that starts it and opens the
tracker. Every page passes axe-core, with nothing wider than the screen and no control under
24 px (the checks of tests/browser/helpers.py). Then the prepared fight at the table: the GM's thug
throws Ysolde, her player's phone shows her prone, and it ends, live, as her next turn
begins. Screenshots go to $PREP_SHOTS when it is set."""

from __future__ import annotations

import os

import pytest
from playwright.sync_api import Page, expect

from combat.models import Declaration, Encounter, Participant
from prep import services as prep
from prep.models import LibraryNpc, PreparedEncounter
from tests.browser.helpers import LAPTOP, PHONE, a_hitting_roll, check_page, open_as
from tests.security.pages import DemoTable

pytestmark = pytest.mark.django_db(transaction=True)

SHOTS = os.environ.get("PREP_SHOTS", "")


def shot(page: Page, name: str) -> None:
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, f"{name}.png"), full_page=True)


@pytest.fixture
def demo_table(demo_table: DemoTable) -> DemoTable:
    """The demo table, with the GM's preparation started from nothing (the page walks' own
    library and prepared encounter are not this story's)."""
    demo = demo_table
    PreparedEncounter.objects.all().delete()
    LibraryNpc.objects.all().delete()
    return demo


@pytest.mark.parametrize(("device", "label"), [(LAPTOP, "laptop"), (PHONE, "phone")])
def test_the_gm_builds_reads_and_starts_a_fight(asgi_server, browser, demo_table, device, label):
    width = device["viewport"]["width"]
    page = open_as(browser, asgi_server.url, "gm", device)
    base = asgi_server.url

    # The dashboard leads to the library; an empty library offers the starter set.
    page.get_by_role("button", name="NPC library").click()
    expect(page.get_by_role("heading", name="NPC library")).to_be_visible()
    check_page(page, width)
    page.get_by_role("button", name="Add the starter set").click()
    library = page.get_by_test_id("library")
    for name in ("Town Guard", "Thug", "Veteran", "Wolf"):
        expect(library.get_by_role("link", name=name, exact=True)).to_be_visible()
    check_page(page, width)
    shot(page, f"library-{label}")

    # One NPC from the form, which fits one screen.
    page.get_by_role("button", name="New NPC").click()
    check_page(page, width)
    shot(page, f"npc-form-{label}")
    form_bottom = page.get_by_role("button", name="Save").bounding_box()
    assert form_bottom is not None
    if label == "laptop":
        assert form_bottom["y"] + form_bottom["height"] <= device["viewport"]["height"]
    page.get_by_label("Name").fill("Bandit")
    page.get_by_label("Weapons").fill("Hatchet\nLaser")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_test_id("npc-errors")).to_contain_text("“Laser” is not a melee weapon")
    page.errors.clear()  # type: ignore[attr-defined]  # the browser logs the expected 422
    check_page(page, width)
    page.get_by_label("Weapons").fill("Hatchet")
    page.get_by_role("button", name="Save").click()
    bandit = page.get_by_test_id("library").get_by_role("link", name="Bandit", exact=True)
    expect(bandit).to_be_visible()
    assert LibraryNpc.objects.filter(name="Bandit", sheet__weapons__0__name="Hatchet").exists()

    # A prepared encounter, from the campaign page.
    page.goto(f"{base}{demo_table.campaign.get_absolute_url()}")
    page.get_by_role("button", name="Prepared encounters").click()
    check_page(page, width)
    page.get_by_label("Name of the prepared encounter").fill("Wolves at the ford")
    page.get_by_role("button", name="Prepare").click()
    expect(page.get_by_role("heading", name="Wolves at the ford")).to_be_visible()
    form = page.get_by_test_id("group-form")
    form.get_by_label("NPC").select_option(label="Wolf")
    form.get_by_label("How many").fill("3")
    form.get_by_label("on alert").check()
    form.get_by_role("button", name="Add NPCs").click()
    form = page.get_by_test_id("group-form")
    form.get_by_label("NPC").select_option(label="Thug")
    form.get_by_label("How many").fill("1")
    form.get_by_label("hide their numbers").check()
    form.get_by_role("button", name="Add NPCs").click()
    page.get_by_label("Ysolde Varr").check()
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_test_id("groups")).to_contain_text("3 × Wolf")
    check_page(page, width)
    shot(page, f"prepared-{label}")

    # The matchup table, both ways.
    page.get_by_test_id("matchups-link").click()
    expect(page.get_by_role("heading", name="Matchup table")).to_be_visible()
    expect(page.get_by_test_id("npc-attacks").first).to_contain_text("Wolf")
    expect(page.get_by_test_id("character-attacks").first).to_contain_text("Ysolde Varr")
    # At a glance: a number per pair, leading to that pair's full card.
    glance = page.get_by_test_id("npc-attacks-glance")
    expect(glance).to_contain_text("Wolf")
    glance.get_by_role("link").first.click()
    expect(page.locator("#npc-attacks-1")).to_be_in_viewport()
    check_page(page, width)
    shot(page, f"matchups-{label}")

    # One press: the encounter with everyone, and the tracker opens.
    page.locator("hgroup a").first.click()  # back to the prepared encounter
    page.get_by_test_id("start-prepared").click()
    # Visible text only: the undo's question names the latest entry too, hidden until asked.
    expect(page.locator("text=Wolf #3 >> visible=true").first).to_be_visible()
    prepared = PreparedEncounter.objects.get(name="Wolves at the ford")
    encounter = Encounter.objects.filter(name=prepared.name).get()
    assert page.url.endswith(encounter.get_absolute_url())
    names = sorted(p.character.name for p in encounter.participants.all())
    assert names == ["Thug #1", "Wolf #1", "Wolf #2", "Wolf #3", "Ysolde Varr"]
    shot(page, f"tracker-{label}")

    # Library NPCs into that fight in one step.
    page.goto(f"{base}/encounters/{encounter.pk}/library/")
    check_page(page, width)
    page.get_by_label("Veteran").fill("2")
    page.get_by_role("button", name="Add to the fight").click()
    expect(page.get_by_text("Veteran #2").first).to_be_visible()


def test_players_never_reach_the_library(asgi_server, browser, demo_table):
    page = open_as(browser, asgi_server.url, "alice", PHONE)
    assert page.get_by_role("button", name="NPC library").count() == 1  # their own, empty
    page.get_by_role("button", name="NPC library").click()
    expect(page.get_by_text("Your library is empty")).to_be_visible()
    page.goto(f"{asgi_server.url}{demo_table.campaign.get_absolute_url()}")
    expect(page.get_by_test_id("prep-section")).to_have_count(0)
    response = page.goto(f"{asgi_server.url}/campaigns/{demo_table.campaign.pk}/prepared/")
    assert response is not None and response.status == 404


def test_a_prepared_fight_runs_its_conditions_on_the_players_phone(
    asgi_server, browser, demo_table
):
    """Prepared ahead (the thug from the starter set against Ysolde), started with one press,
    then a throw: "Prone" shows on Alice's phone and ends as Ysolde's next turn begins."""
    base = asgi_server.url
    prep.add_starter_set(owner=demo_table.gm)
    prepared = PreparedEncounter.objects.create(
        campaign=demo_table.campaign, name="Thug at the gate"
    )
    prepared.expected.set([demo_table.character])
    prepared.groups.create(npc=LibraryNpc.objects.get(owner=demo_table.gm, starter="thug"), count=1)

    gm = open_as(browser, base, "gm", LAPTOP)
    gm.goto(f"{base}/prepared/{prepared.pk}/")
    gm.get_by_test_id("matchups-link").click()
    thug_rows = gm.get_by_test_id("npc-attacks").first
    expect(thug_rows).to_contain_text("Thug")
    expect(thug_rows).to_contain_text("Ysolde Varr")
    gm.go_back()
    gm.get_by_test_id("start-prepared").click()
    encounter = Encounter.objects.get(name="Thug at the gate")
    gm.get_by_role("button", name="Start: roll initiative").click()
    expect(gm.get_by_test_id("next-turn")).to_be_visible()
    ysolde = Participant.objects.get(encounter=encounter, character=demo_table.character)
    thug = Participant.objects.exclude(pk=ysolde.pk).get(encounter=encounter)

    phone = open_as(browser, base, "alice", PHONE)
    phone.goto(f"{base}{encounter.get_absolute_url()}")
    expect(phone.get_by_test_id("live-status")).to_contain_text("Live")

    # The GM's thug throws Ysolde (out of turn, as the GM may); Alice dodges on her phone.
    form = gm.get_by_test_id("declare-form")
    form.locator("select[name=attacker]").select_option(str(thug.pk))
    expect(gm.get_by_test_id("declare-form").locator("select[name=attacker]")).to_have_value(
        str(thug.pk)
    )
    form = gm.get_by_test_id("declare-form")
    target = form.locator(f'select[name=target_zone] option[value^="{ysolde.pk}:"]').first
    form.locator("select[name=target_zone]").select_option(target.get_attribute("value"))
    form.locator("select[name=action]").select_option("throw")
    form.get_by_test_id("declare").click()
    phone.locator(".declaration.incoming").get_by_test_id("defend-dodge").click()
    declaration = Declaration.objects.get(encounter=encounter, action="throw")
    expect(gm.get_by_test_id(f"declaration-{declaration.pk}")).to_contain_text("will dodge")
    declaration.refresh_from_db()
    gm.get_by_test_id("roll-value").fill(str(a_hitting_roll(declaration)))
    gm.get_by_test_id("roll").click()

    # Prone, on the phone, with what is left of it; the page stays clean.
    mine = phone.locator(f'[data-testid="my-conditions-{ysolde.pk}"]')
    expect(mine).to_contain_text("Prone")
    row = phone.get_by_test_id(f"participant-{ysolde.pk}")
    expect(row.get_by_test_id(f"condition-{ysolde.pk}-prone")).to_contain_text("Prone")
    check_page(phone, PHONE["viewport"]["width"])
    shot(phone, "prone-phone")
    shot(gm, "prone-laptop")

    # The GM passes turns; it ends exactly when Ysolde's next turn comes, not before.
    for _ in range(4):
        assert "prone" in Participant.objects.get(pk=ysolde.pk).conditions
        turn = gm.get_by_test_id("turn").inner_text()
        gm.get_by_test_id("next-turn").click()
        expect(gm.get_by_test_id("turn")).not_to_have_text(turn)
        encounter.refresh_from_db()
        if encounter.turn_id == ysolde.pk:
            break
    encounter.refresh_from_db()
    assert encounter.turn_id == ysolde.pk
    assert "prone" not in Participant.objects.get(pk=ysolde.pk).conditions
    expect(mine).to_have_count(0)
    expect(row.get_by_test_id(f"condition-{ysolde.pk}-prone")).to_have_count(0)
    expect(phone.get_by_test_id("log")).to_contain_text("Ysolde Varr is no longer prone")
    expect(phone.get_by_test_id("turn")).to_have_text("Ysolde Varr")
