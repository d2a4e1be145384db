"""The checks in the campaign's roll log (the dice pages' log): who, what, against what, the
roll, the degree and its effects, as the checks log shows them to each reader, and the GM's undo."""

from __future__ import annotations

import random
import re

import pytest
from django.urls import reverse

from checks import services
from checks.models import Check
from sheets.services import create_character
from tests.factories import make_campaign

pytestmark = pytest.mark.django_db
JOHN = {"pool": 7, "penalty": 0, "difficulty": 0, "dice": "3 4 4 4 6 8 10", "action": "read"}


def client_for(client, user):
    c = client.__class__()
    c.force_login(user)
    return c


def log_url(table):
    return reverse("dice:campaign_index", args=[table.campaign.pk])


def dice_log(client, table) -> str:
    html = client.get(log_url(table)).content.decode()
    return html[html.index('id="dice-log"') :]


def rows(html: str) -> list[str]:
    return re.findall(r"<tr[ >].*?</tr>", html, flags=re.S)[1:]


def roll(table, character, roll, *, secret=False, user=None):
    target = services.parse_target(kind="aptitude", aptitude="SKL", against="Moderate")
    return services.roll_check(
        user=user or table.gm,
        character=character,
        target=target,
        rng=random.Random(1),
        roll=roll,
        secret=secret,
    )


def test_the_gm_sees_each_check_with_its_numbers_among_the_rolls(client, table):
    gm = client_for(client, table.gm)
    gm.post(f"/dice/campaigns/{table.campaign.pk}/ore/", JOHN)
    check = roll(table, table.ysolde, 70, user=table.owner)
    log = dice_log(gm, table)
    first = rows(log)[0]
    assert "Ysolde Varr" in first and check.label in first
    assert ">70: " in first and check.degree_label in first
    assert "+1 Fate" in first and "EXP" in first
    assert "dice-log-check-undo" in log
    # Newest first: the check came after the ORE roll.
    assert "<td>ORE</td>" in rows(log)[1]


def test_a_player_sees_a_secret_check_without_its_result(client, table):
    check = roll(table, table.ysolde, 70, secret=True)
    for user in (table.owner, table.gm):
        assert check.label in dice_log(client_for(client, user), table)
    owner_log = dice_log(client_for(client, table.owner), table)
    assert "Secret: sent to the GM" in owner_log
    assert check.degree_label not in owner_log and ">70:" not in owner_log
    assert "dice-log-check-undo" not in owner_log
    # Another player sees no secret check at all, as on the checks log.
    assert check.label not in dice_log(client_for(client, table.player), table)
    assert check.degree_label in dice_log(client_for(client, table.gm), table)


def test_a_hidden_npcs_checks_stay_off_the_players_log(client, table):
    npc = create_character(campaign=table.campaign, owner=table.gm, name="Spy", is_npc=True)
    roll(table, npc, 40)
    assert "Spy" not in dice_log(client_for(client, table.owner), table)
    assert "Spy" in dice_log(client_for(client, table.gm), table)


def test_another_campaigns_users_see_none_of_its_checks(client, table):
    roll(table, table.ysolde, 70)
    other = make_campaign(table.outsider, name="Elsewhere")
    c = client_for(client, table.outsider)
    assert c.get(log_url(table)).status_code == 404
    html = c.get(reverse("dice:campaign_index", args=[other.pk])).content.decode()
    assert "Ysolde" not in html and 'data-testid="dice-log-check"' not in html


def test_the_gm_undoes_the_latest_check_from_the_roll_log(client, table):
    roll(table, table.ysolde, 70, user=table.owner)
    assert table.fresh(table.ysolde).fate == 3
    gm = client_for(client, table.gm)
    log = dice_log(gm, table)
    form = re.search(
        r'<form method="post" action="([^"]+)"[^>]*>\s*<input[^>]*csrfmiddlewaretoken', log
    )
    assert form is not None
    gm.post(form.group(1))
    assert table.fresh(table.ysolde).fate == 2
    assert Check.objects.get().status == "undone"
    assert "undone by the GM" in dice_log(gm, table)
