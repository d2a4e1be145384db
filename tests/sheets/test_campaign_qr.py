"""The campaign page shows its join link as a QR code, for the GM only; a scan reads the link.

The codes are read back with zxing-cpp (tests/qr_decode.py), not compared with segno's output,
so a test fails if the page ever draws a code that a phone would not read as the join link."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from sheets.models import Campaign
from tests.qr_decode import decode_svg

pytestmark = pytest.mark.django_db


def detail_url(campaign: Campaign) -> str:
    return reverse("sheets:campaign_detail", args=[campaign.pk])


def join_link(campaign: Campaign) -> str:
    return f"http://testserver{reverse('sheets:campaign_join')}?code={campaign.join_code}"


def qr_codes(html: str) -> list[str]:
    return [
        text
        for svg in re.findall(r"<svg[^>]*class=\"qr\".*?</svg>", html, re.S)
        for text in decode_svg(svg)
    ]


def test_it_shows_the_gm_a_qr_code_that_reads_as_the_join_link(table, client_for):
    page = client_for(table.gm).get(detail_url(table.campaign)).text
    assert qr_codes(page) == [join_link(table.campaign)]


def test_it_shows_players_no_qr_code(table, client_for):
    page = client_for(table.player).get(detail_url(table.campaign)).text
    assert 'class="qr"' not in page
    assert table.campaign.join_code not in page


def test_the_qr_code_follows_a_new_join_code(table, client_for):
    old = join_link(table.campaign)
    response = client_for(table.gm).post(
        reverse("sheets:campaign_regenerate_code", args=[table.campaign.pk]),
        headers={"HX-Request": "true"},
    )
    table.campaign.refresh_from_db()
    assert qr_codes(response.text) == [join_link(table.campaign)]
    assert join_link(table.campaign) != old


def test_the_qr_code_needs_no_inline_style(table, client_for):
    # The page's CSP forbids style attributes; the code is drawn with presentation attributes.
    page = client_for(table.gm).get(detail_url(table.campaign)).text
    svg = re.search(r'<svg[^>]*class="qr".*?</svg>', page, re.S).group(0)
    assert "style=" not in svg
    assert "<script" not in svg
