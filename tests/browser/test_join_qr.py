"""The campaign page's QR code, read from a screenshot as a phone camera would, is the join link,
and following it from a phone ends in the campaign."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests.factories import PASSWORD, make_campaign, make_user
from tests.qr_decode import decode_png

pytestmark = pytest.mark.django_db(transaction=True)

SHOTS = Path(tempfile.gettempdir()) / "omg-shots"  # looked at by hand, not compared


@pytest.mark.parametrize(
    "viewport", [{"width": 390, "height": 844}, {"width": 1280, "height": 800}], ids=str
)
def test_the_qr_code_reads_as_the_join_link_and_leads_into_the_campaign(
    live_server, browser: Browser, viewport
):
    gm, phone_user = make_user("gm"), make_user("robin")
    campaign = make_campaign(gm, name="Night Market")
    base = live_server.url
    console_errors: list[str] = []

    gm_page = browser.new_context(viewport=viewport).new_page()
    gm_page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
    gm_page.goto(f"{base}/accounts/login/?next=/campaigns/{campaign.pk}/")
    gm_page.get_by_label("Username").fill("gm")
    gm_page.get_by_label("Password").fill(PASSWORD)
    gm_page.get_by_role("button", name="Log in").click()
    qr = gm_page.get_by_test_id("join-qr").locator("svg")
    expect(qr).to_be_visible()
    box = qr.bounding_box()
    assert box is not None and box["width"] >= 150  # scannable across a table
    assert box["x"] + box["width"] <= viewport["width"]  # never off the phone's screen
    link = decode_png(qr.screenshot())
    assert link == [f"{base}/campaigns/join/?code={campaign.join_code}"]

    # The table display's link has its QR code too, and neither pushes the page sideways.
    gm_page.get_by_role("button", name="Make a display link").click()
    display_url = gm_page.get_by_test_id("display-url").inner_text().strip()
    display_qr = gm_page.get_by_test_id("display-qr").locator("svg")
    assert decode_png(display_qr.screenshot()) == [display_url]
    assert gm_page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    SHOTS.mkdir(exist_ok=True)
    gm_page.screenshot(path=SHOTS / f"campaign-qr-{viewport['width']}.png", full_page=True)

    phone = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
    phone.goto(link[0])
    phone.get_by_label("Username").fill("robin")
    phone.get_by_label("Password").fill(PASSWORD)
    phone.get_by_role("button", name="Log in").click()
    expect(phone.get_by_label("Join code")).to_have_value(campaign.join_code)
    phone.get_by_role("button", name="Join").click()
    expect(phone.get_by_role("heading", name="Night Market")).to_be_visible()
    assert campaign.memberships.get().user == phone_user
    assert not console_errors, console_errors  # includes any CSP violation
