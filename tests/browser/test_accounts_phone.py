"""A new player on a phone (390x844): scans the GM's join link, signs up, lands in the campaign
and opens a sheet. Every page on the way, errors included, is axe clean, fits the screen, and
its controls are big enough."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect

from sheets.models import Membership
from tests.browser.helpers import PHONE, check_page, collect_errors
from tests.factories import make_campaign, make_user

pytestmark = pytest.mark.django_db(transaction=True)

WIDTH = PHONE["viewport"]["width"]


def test_a_scanned_join_link_signs_up_joins_and_opens_a_sheet(live_server, browser: Browser):
    campaign = make_campaign(make_user("morgan"), name="Night Market")
    page = browser.new_context(**PHONE).new_page()
    collect_errors(page)

    page.goto(f"{live_server.url}/campaigns/join/?code={campaign.join_code}")
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
    expect(page.get_by_text("Log in, or sign up, to join the campaign.")).to_be_visible()
    check_page(page, WIDTH)

    # A forgotten password starts from here too; its pages are as clean.
    page.get_by_role("link", name="Forgot your password?").click()
    expect(page.get_by_role("heading", name="Forgotten password")).to_be_visible()
    check_page(page, WIDTH)
    page.get_by_label("Email").fill("nobody@example.org")
    page.get_by_role("button", name="Mail me a link").click()
    expect(page.get_by_role("heading", name="Check your mail")).to_be_visible()
    check_page(page, WIDTH)
    page.go_back()
    page.go_back()
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()

    page.get_by_role("link", name="Sign up", exact=True).last.click()
    expect(page.get_by_role("heading", name="Create an account")).to_be_visible()
    expect(page.get_by_text("joins the campaign as soon as it is created")).to_be_visible()
    check_page(page, WIDTH)

    # A password the validators refuse: each rule is said, and the page stays clean.
    page.get_by_label("Username").fill("robin")
    page.get_by_label("Password:", exact=True).fill("12345")
    page.get_by_label("Password confirmation:").fill("12345")
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_text("This password is too short.")).to_be_visible()
    expect(page.get_by_text("This password is entirely numeric.")).to_be_visible()
    check_page(page, WIDTH)

    page.get_by_label("Email (optional)").fill("robin@example.org")
    page.get_by_label("Password:", exact=True).fill("a-long-pass-phrase")
    page.get_by_label("Password confirmation:").fill("a-long-pass-phrase")
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_role("heading", name="Night Market")).to_be_visible()
    expect(page.get_by_text("You joined “Night Market”.")).to_be_visible()
    assert Membership.objects.filter(campaign=campaign, user__username="robin").exists()
    check_page(page, WIDTH)

    page.get_by_role("button", name="Blank sheet").click()
    page.get_by_label("Name").fill("Wren")
    page.get_by_role("button", name="Create the sheet").click()
    expect(page.get_by_role("heading", name="Wren")).to_be_visible()
    check_page(page, WIDTH)

    # The account page, reached from the menu, is as clean.
    page.goto(f"{live_server.url}/account/")
    expect(page.get_by_role("heading", name="Your account")).to_be_visible()
    expect(page.get_by_label("Also revoke my API tokens")).to_be_checked()
    check_page(page, WIDTH)
    page.goto(f"{live_server.url}/accounts/password/")
    expect(page.get_by_label("Also revoke my API tokens")).to_be_checked()
    check_page(page, WIDTH)
    page.goto(f"{live_server.url}/account/delete/")
    check_page(page, WIDTH)
