"""The tracker's rows are drawn once per set of values and reused (combat/templatetags/
tracker.py, sheets/fragments.py): a reused row is drawn again as soon as anything it shows
changes, carries each viewer's own CSRF token (none in the live feed's renders), and a row
drawn for the GM is never handed to a player."""

from __future__ import annotations

import re

import pytest

from combat import services
from combat.render import tracker_panels
from sheets import fragments

pytestmark = pytest.mark.django_db

TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([^"]*)"')


def _row(page: str, pk: int) -> str:
    start = page.index(f'data-testid="participant-{pk}"')
    return page[start : page.index("</tr>", start)]


def test_it_draws_a_reused_row_again_when_what_it_shows_changes(fight, client_for):
    url = fight.encounter.get_absolute_url()
    gm = client_for(fight.table.gm)
    before = _row(gm.get(url).content.decode(), fight.ysolde.pk)
    assert "10 / 10" in before and "on alert" in before
    character = fight.ysolde.character
    character.vitality = 7
    character.save()
    services.update_participant(participant=fight.ysolde, on_alert=True, actor=fight.table.gm)
    after = _row(gm.get(url).content.decode(), fight.ysolde.pk)
    assert "7 / 10" in after and "not on alert" in after and "(alert)" in after


def test_each_viewer_gets_their_own_token_in_reused_rows(fight, client_for):
    url = fight.encounter.get_absolute_url()
    tokens: list[str] = []
    for user in (fight.table.gm, fight.table.gm, fight.table.player):
        page = client_for(user).get(url).content.decode()
        found = set(TOKEN.findall(page))
        assert len(found) == 1, found  # every form of the page carries the page's token
        assert fragments.TOKEN_PLACEHOLDER not in page
        tokens.extend(found)
    assert len(set(tokens)) == 3 and all(t.isalnum() for t in tokens)
    # The live feed's renders carry none: one render serves many viewers.
    for user in (fight.table.gm, fight.table.player):
        html = tracker_panels(fight.encounter, user)["tracker"]
        assert "csrfmiddlewaretoken" not in html and fragments.TOKEN_PLACEHOLDER not in html


def test_a_row_drawn_for_the_gm_is_never_reused_for_a_player(fight, client_for):
    url = fight.encounter.get_absolute_url()
    thug_vit = f'data-testid="vit-{fight.thug.pk}"'
    assert thug_vit in client_for(fight.table.gm).get(url).content.decode()  # hidden thug
    page = client_for(fight.table.player).get(url).content.decode()
    row = _row(page, fight.thug.pk)
    assert thug_vit not in page and "numbers hidden by the GM" in row
    assert "row-menu" not in page and "give turn" not in page
    assert "row-menu" not in tracker_panels(fight.encounter, fight.table.player)["tracker"]
