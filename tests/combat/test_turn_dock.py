"""The player's turn on the phone: a "Your turn" dock with the strike choices and their PRO
when the turn comes to their character, "You're next" one turn before, their row marked; the
dock declares like the full form."""

from __future__ import annotations

import html
import json
import re

import pytest

from combat import services
from combat.models import Declaration, Participant
from combat.render import LiveTracker
from rules.engine import odds

pytestmark = pytest.mark.django_db


def _page(client, fight) -> str:
    return client.get(fight.encounter.get_absolute_url()).text


def test_it_docks_the_players_turn_with_each_strikes_pro(fight, client_for):
    page = _page(client_for(fight.table.player), fight)
    assert 'data-testid="turn-dock"' in page
    assert "Your turn: Ysolde Varr" in page
    # Ysolde: SPD 3, SKL 4, VGR 5 with Swordsmanship 3: PRO 80, 85, 90.
    for mode, pro in (("fast", 80), ("precise", 85), ("mighty", 90)):
        assert f'data-testid="dock-{mode}"' in page
        assert f"PRO {pro}</small>" in page
    assert f'data-participant="{fight.ysolde.pk}"' in page
    assert "mine-row" in page and 'tag-you">you</small>' in page
    gm_page = _page(client_for(fight.table.gm), fight)
    assert 'data-testid="turn-dock"' not in gm_page and "mine-row" not in gm_page


def test_it_says_youre_next_one_turn_before(fight, client_for):
    services.next_turn(encounter=fight.encounter, actor=fight.table.gm)  # the thug's turn
    page = _page(client_for(fight.table.player), fight)
    assert 'data-testid="turn-dock"' not in page
    assert 'data-testid="youre-next"' in page and "You're next: Ysolde Varr" in page.replace(
        "&#x27;", "'"
    )


def test_the_dock_declares_and_then_gives_way_to_the_attack(fight, client_for):
    client = client_for(fight.table.player)
    response = client.post(
        f"/encounters/{fight.encounter.pk}/attacks/",
        {
            "attacker": fight.ysolde.pk,
            "weapon": fight.weapon(fight.ysolde).pk,
            "target_zone": f"{fight.thug.pk}:{fight.zone(fight.thug, 'chest').pk}",
            "action": "mighty",
        },
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    decl = Declaration.objects.get(encounter=fight.encounter)
    assert decl.action == "mighty" and decl.attacker_id == fight.ysolde.pk
    assert 'data-testid="turn-dock"' not in response.text


def test_the_shared_render_docks_the_turn_for_its_player_only(fight):
    player = fight.table.player
    html = LiveTracker(fight.encounter).panels(player)["tracker"]
    assert (
        f'data-testid="turn-dock" data-turn="1-{fight.ysolde.pk}" data-owner="{player.pk}" hidden'
        in html
    )
    assert f'data-owned-by="{player.pk}"' in html


def test_the_dock_gives_each_strikes_chance_but_none_against_a_hidden_npc(fight, client_for):
    services.add_npc_copies(
        encounter=fight.encounter, npc=fight.npc, count=1, actor=fight.table.gm, hidden=False
    )
    visible = Participant.objects.get(encounter=fight.encounter, character__name="Salvager Thug #2")
    page = _page(client_for(fight.table.player), fight)
    match = re.search(r'data-chances="([^"]*)"', page)
    assert match
    chances = json.loads(html.unescape(match.group(1)))
    assert str(fight.thug.pk) not in chances  # the hidden thug's DIFs are its numbers
    # The thug's best defense is its block, DIF 5 x (VGR 4 + Melee Combat 1) = 25.
    assert chances[str(visible.pk)] == {
        mode: odds.check_odds(pro, 25).hits
        for mode, pro in (("fast", 80), ("precise", 85), ("mighty", 90))
    }
    # The first target offered is the hidden thug: its chances read "hidden".
    assert 'data-chance="fast">hidden</strong>' in page
