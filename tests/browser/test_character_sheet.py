"""A player creates a character and edits it; the numbers follow without a reload."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from playwright.sync_api import Browser, expect

from rules.engine.omg_data import MELEE_COMBAT
from sheets.models import Character
from tests.factories import PASSWORD, make_campaign, make_user, make_ysolde

pytestmark = pytest.mark.django_db(transaction=True)


def log_in(page, base, username):
    page.goto(f"{base}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()


def test_a_player_creates_a_character_and_sees_pro_change_live(live_server, browser: Browser):
    gm, player = make_user("gm"), make_user("pat")
    campaign = make_campaign(gm, players=(player,), name="Night Market")
    errors: list[str] = []
    page = browser.new_context().new_page()
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    log_in(page, live_server.url, "pat")
    page.goto(f"{live_server.url}{campaign.get_absolute_url()}")
    page.get_by_role("button", name="New character").click()
    page.get_by_label("Name").fill("Ysolde")
    page.get_by_label("Type the aptitudes in").check()
    for field, value in {
        "Focus": "2",
        "Speed": "3",
        "Skill": "4",
        "Vigor": "5",
        "Nerve": "2",
        "Charm": "2",
        "Savvy": "2",
    }.items():
        page.get_by_label(field).fill(value)
    page.get_by_label("Archetype").select_option("warrior")
    expect(page.get_by_test_id("wizard-errors")).to_contain_text("weapon category")
    page.get_by_label("Weapon category").select_option("III")
    # The wizard re-checks the build on each change (htmx): the archetype's ranks appear.
    expect(page.get_by_label("Melee Combat")).to_be_visible()
    page.get_by_label("Melee Combat").fill("2")
    page.get_by_label("Melee Combat").dispatch_event("change")
    expect(page.get_by_test_id("wizard-summary")).to_contain_text("1 of 7 points spent")
    page.get_by_label("Weapon Mastery III (dual edged sword)").fill("3")
    page.get_by_label("Weapon Mastery III (dual edged sword)").dispatch_event("change")
    expect(page.get_by_test_id("wizard-summary")).to_contain_text("3 of 7 points spent")
    # 4 of the 7 points are left: the wizard asks, and the player creates her as she is.
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Create", exact=True).click()
    expect(page.get_by_role("heading", name="Ysolde")).to_be_visible()
    character = Character.objects.get(name="Ysolde")
    assert character.disciplines.get(name=MELEE_COMBAT).level == 2
    expect(page.get_by_test_id("dif-dodge")).to_have_text("25")

    # Change Speed: the dodge DIF and the aptitude's PRO follow, with no page load.
    page.evaluate("window.__sameDocument = true")
    # The sheet reads first: aptitudes are edited in their own panel, opened on purpose.
    page.get_by_text("Aptitudes and composites").click()
    speed = page.locator("#f-character-0-spd-value")
    speed.fill("4")
    speed.dispatch_event("change")
    expect(page.get_by_test_id("dif-dodge")).to_have_text("30")
    expect(page.locator("#apt-SPD-pro")).to_have_text("70")
    assert page.evaluate("window.__sameDocument") is True

    # A bad value shows an error inline and keeps the stored value.
    speed = page.locator("#f-character-0-spd-value")
    speed.fill("9")
    speed.dispatch_event("change")
    expect(page.locator("#f-character-0-spd-msg")).to_contain_text("last good value")
    character.refresh_from_db()
    assert character.spd == 4

    # Tapping the chest on the body diagram leads to its buttons; "+" adds a wound, which
    # shows on the diagram and in the Vitality summary's zone list.
    page.locator('a[data-zone="chest"]').click()
    expect(page.locator(".zone-control:target")).to_contain_text(re.compile("chest", re.I))
    page.get_by_role("button", name="Add a wound to chest").click()
    expect(page.get_by_test_id("wounds-chest")).to_have_text("1")
    expect(page.locator('a[data-zone="chest"] text')).to_have_text("1")
    # Expected noise: the 422 of the bad value, and htmx reporting the wizard's superseded
    # checks (hx-sync="this:replace" aborts them) as errors.
    unexpected = [e for e in errors if "422" not in e and not e.startswith("htmx:")]
    assert not unexpected, errors


@pytest.mark.parametrize("width", [390, 1280])
def test_the_sheet_never_scrolls_sideways_as_a_whole(live_server, browser: Browser, width: int):
    # Wide tables scroll inside their own box; the page itself stays as wide as the screen.
    gm, player = make_user("gm"), make_user("pat")
    character = make_ysolde(make_campaign(gm, players=(player,)), player)
    page = browser.new_context(viewport={"width": width, "height": 900}).new_page()
    log_in(page, live_server.url, "pat")
    page.goto(f"{live_server.url}{character.get_absolute_url()}")
    expect(page.get_by_role("heading", name="Armor zones and wounds")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    # Every panel open, every table drawn: still no sideways scrolling.
    page.evaluate(
        "document.querySelectorAll('details:not(.dropdown)').forEach(d => { d.open = true; })"
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= width


def test_the_print_view_fits_on_one_a4_page(live_server, browser: Browser):
    gm, player = make_user("gm"), make_user("pat")
    character = make_ysolde(make_campaign(gm, players=(player,)), player)
    page = browser.new_context().new_page()
    log_in(page, live_server.url, "pat")
    page.goto(f"{live_server.url}{reverse('sheets:character_print', args=[character.pk])}")
    expect(page.get_by_role("heading", name="Armor zones and wounds")).to_be_visible()
    page.emulate_media(media="print")
    pdf = page.pdf(format="A4")
    assert len(re.findall(rb"/Type\s*/Page[^s]", pdf)) == 1


def test_the_wizard_rolls_first_and_asks_before_leaving_points_unspent(live_server, browser):
    gm, player = make_user("gm"), make_user("pat")
    campaign = make_campaign(gm, players=(player,), name="Night Market")
    page = browser.new_context().new_page()
    log_in(page, live_server.url, "pat")
    page.goto(f"{live_server.url}{reverse('sheets:character_wizard', args=[campaign.pk])}")
    # "Roll for me" before anything else: the aptitudes show beside the dice, and nobody is
    # told off for a name or an archetype not reached yet.
    page.get_by_role("button", name="Roll for me").click()
    expect(page.get_by_test_id("wizard-rolled")).to_contain_text("Your aptitudes: FOC")
    expect(page.locator("#wizard")).not_to_contain_text("This field is required")
    # Garbage in the 7d6 dice is named as such.
    page.get_by_label("Roll 7d6 and place them yourself").check()
    page.locator("#id_dice").fill("1 2 x")
    page.locator("#id_dice").dispatch_event("change")
    expect(page.get_by_test_id("wizard-errors")).to_contain_text("whole numbers from 1 to 6")
    # Back to the rolled 2d6, a name and an archetype: 7 points to spend, none spent.
    page.get_by_label("Roll 2d6 per aptitude, keep the higher").check()
    page.wait_for_load_state("networkidle")
    page.get_by_role("button", name="Roll for me").click()
    # The roll redraws the whole form, its fields disabled until the answer lands: the name is
    # typed into the new form (fill waits for it), never lost to the redraw.
    expect(page.get_by_test_id("wizard-rolled")).to_be_visible()
    page.wait_for_load_state("networkidle")
    page.get_by_label("Name").fill("Quill")
    page.get_by_label("Archetype").select_option("rogue")
    page.get_by_label("Archetype").dispatch_event("change")
    expect(page.get_by_test_id("wizard-unspent")).to_contain_text("7 points not spent")


def test_it_saves_once_and_shows_no_conflict_when_enter_ends_an_edit_on_a_phone(
    live_server, browser: Browser
):
    gm, player = make_user("gm"), make_user("pat")
    character = make_ysolde(make_campaign(gm, players=(player,)), player)
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True)
    page = context.new_page()
    log_in(page, live_server.url, "pat")
    page.goto(f"{live_server.url}{character.get_absolute_url()}")
    saves: list[str] = []
    edit_url = reverse("sheets:character_edit_field", args=[character.pk])
    page.on("request", lambda r: saves.append(r.method) if r.url.endswith(edit_url) else None)
    page.evaluate("window.__sameDocument = true")
    page.get_by_text("Aptitudes and composites").click()
    speed = page.locator("#f-character-0-spd-value")
    speed.tap()
    speed.fill("4")
    # The phone's Go key is Enter: it ends the edit (change) and submits the form.
    speed.press("Enter")
    expect(page.get_by_test_id("dif-dodge")).to_have_text("30")
    page.wait_for_load_state("networkidle")
    assert saves == ["POST"]
    assert page.evaluate("window.__sameDocument") is True
    expect(page.get_by_text("changed elsewhere", exact=False)).to_have_count(0)
    expect(page.locator("#f-character-0-spd-value")).to_have_value("4")
    character.refresh_from_db()
    assert character.spd == 4


def _luminance(rgb: str) -> float:
    channels = [int(c) / 255 for c in re.findall(r"\d+", rgb)[:3]]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _contrast(a: str, b: str) -> float:
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_it_draws_every_zone_number_on_the_body_diagram_legibly(
    live_server, browser: Browser, scheme: str
):
    gm, player = make_user("gm"), make_user("pat")
    character = make_ysolde(make_campaign(gm, players=(player,)), player)
    # One zone of each severity next to the unhurt ones (BZF 12).
    for name, wounds in {"chest": 3, "abdomen": 7, "left arm": 12, "right leg": 15}.items():
        character.zones.filter(name=name).update(wounds=wounds)
    page = browser.new_context(color_scheme=scheme).new_page()  # type: ignore[arg-type]  # a parametrized Literal
    log_in(page, live_server.url, "pat")
    page.goto(f"{live_server.url}{character.get_absolute_url()}")
    pairs = page.eval_on_selector_all(
        "#body-diagram a.zone",
        """zones => zones.map(z => [
            z.getAttribute('class'),
            getComputedStyle(z.querySelector('text')).fill,
            getComputedStyle(z.querySelector('rect, circle')).fill,
        ])""",
    )
    assert len(pairs) == 7 and any("sev-unhurt" in css for css, *_ in pairs)
    # WCAG's 4.5:1 for text this small.
    low = [(css, round(_contrast(t, s), 2)) for css, t, s in pairs if _contrast(t, s) < 4.5]
    assert low == []
