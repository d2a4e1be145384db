"""A running fight is one tap away: the dashboard and the campaign page show it (round, whose
turn) with a button into it, to the GM and to players whose characters are in it."""

from __future__ import annotations

import pytest

from combat import services
from sheets.models import Membership
from tests.factories import make_user

pytestmark = pytest.mark.django_db


def _fight_box(client, url: str, fight) -> str | None:
    page = client.get(url).text
    marker = f'data-testid="running-fight-{fight.encounter.pk}"'
    if marker not in page:
        return None
    return page[page.index(marker) : page.index("</article>", page.index(marker))]


@pytest.mark.parametrize("where", ["dashboard", "campaign"])
def test_it_shows_the_running_fight_to_its_gm_and_players(fight, client_for, where):
    url = "/dashboard/" if where == "dashboard" else fight.table.campaign.get_absolute_url()
    gm_box = _fight_box(client_for(fight.table.gm), url, fight)
    assert gm_box is not None
    assert "Round 1 · Ysolde Varr's turn" in gm_box and "Run the fight" in gm_box
    assert f'href="{fight.encounter.get_absolute_url()}"' in gm_box
    player_box = _fight_box(client_for(fight.table.player), url, fight)
    assert player_box is not None and "Join the fight" in player_box


def test_it_shows_no_fight_to_a_player_not_in_it_nor_to_outsiders(fight, client_for):
    onlooker = make_user("onlooker")
    Membership.objects.create(campaign=fight.table.campaign, user=onlooker)
    assert _fight_box(client_for(onlooker), "/dashboard/", fight) is None
    assert _fight_box(client_for(fight.table.outsider), "/dashboard/", fight) is None


def test_it_shows_only_running_fights(fight, client_for):
    services.finish_encounter(encounter=fight.encounter, actor=fight.table.gm)
    assert _fight_box(client_for(fight.table.gm), "/dashboard/", fight) is None
