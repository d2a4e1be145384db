"""The record of a fight: Markdown and JSON downloads (page and API) built as the viewer sees
the fight, and the campaign page's past fights with their outcome."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from combat import services
from combat.record import md

pytestmark = pytest.mark.django_db


def _finished(fight):
    """Ysolde's mighty strike at the hidden thug's chest (43 hits, and the doubled blow takes
    his 7 Vitality: down and dying), then the GM ends the fight."""
    gm = fight.table.gm
    decl, _ = services.declare_attack(
        encounter=fight.encounter,
        attacker=fight.ysolde,
        target=fight.thug,
        action="mighty",
        zone=fight.zone(fight.thug, "chest"),
        weapon=fight.weapon(fight.ysolde),
        actor=fight.table.player,
    )
    services.declare_defense(declaration=decl, defense="block", actor=gm)
    roll = services.resolve(declaration=decl, roll=43, actor=fight.table.player)
    services.finish_encounter(encounter=fight.encounter, actor=gm)
    fight.refresh()
    return roll


def test_it_gives_the_gm_everything_and_the_player_the_public_record(fight, client_for):
    roll = _finished(fight)
    url = reverse("combat:record_json", args=[fight.encounter.pk])
    gm = json.loads(client_for(fight.table.gm).get(url).content)
    response = client_for(fight.table.player).get(url)
    assert response["Content-Type"] == "application/json; charset=utf-8"
    assert response["Content-Disposition"].startswith('attachment; filename="fight-')
    player = json.loads(response.content)

    gm_roll = next(e for e in gm["log"] if e["seq"] == roll.seq)
    player_roll = next(e for e in player["log"] if e["seq"] == roll.seq)
    assert gm_roll["text"] == roll.text and gm_roll["result"] and gm_roll["changes"]
    assert player_roll["text"] == roll.payload["public_text"]
    assert "result" not in player_roll and "changes" not in player_roll
    assert player_roll["roll"] == 43 and player_roll["round"] == 1
    thug = {p["name"]: p for p in player["participants"]}["Salvager Thug #1"]
    assert "vitality" not in thug and thug["state"] == "down"
    assert "vitality" in {p["name"]: p for p in gm["participants"]}["Salvager Thug #1"]
    assert (
        player["outcome"]
        == gm["outcome"]
        == {
            "standing": ["Ysolde Varr"],
            "fallen": [{"name": "Salvager Thug #1", "state": "down and dying"}],
        }
    )
    assert player["encounter"]["rounds"] == 1 and player["encounter"]["ended_at"]
    # Nothing of the GM's text about the hidden thug reaches the player.
    assert roll.text not in json.dumps(player)


def test_it_writes_markdown_by_round_with_names_made_inert(fight, client_for):
    services.add_condition(
        participant=fight.thug, name="[x](http://evil) <img>", rounds=2, actor=fight.table.gm
    )
    _finished(fight)
    url = reverse("combat:record_markdown", args=[fight.encounter.pk])
    response = client_for(fight.table.player).get(url)
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    text = response.content.decode()
    assert text.startswith("# Ambush\n")
    assert "## Before the fight" in text and "## Round 1" in text
    assert "**Left standing:** Ysolde Varr" in text
    assert "\\[x\\](http://evil) \\<img>" in text and re.search(r"(?<!\\)<img", text) is None
    gm_text = client_for(fight.table.gm).get(url).content.decode()
    assert "PvD" in gm_text or "vs block" in gm_text


def test_it_serves_the_record_to_members_only(fight, client_for, api_for):
    _finished(fight)
    for name in ("record_json", "record_markdown"):
        url = reverse(f"combat:{name}", args=[fight.encounter.pk])
        assert client_for(fight.table.outsider).get(url).status_code == 404
        assert client_for(fight.table.other_gm).get(url).status_code == 404
        assert client_for(None).get(url).status_code == 302
    api = f"/api/encounters/{fight.encounter.pk}/record/"
    assert api_for(fight.table.outsider).get(api).status_code == 404
    body = api_for(fight.table.player).get(api).json()
    assert body["for_gm"] is False and body["outcome"]["standing"] == ["Ysolde Varr"]
    md = api_for(fight.table.player).get(api + "markdown/")
    assert md.status_code == 200 and md.content.decode().startswith("# Ambush")


def test_it_lists_past_fights_on_the_campaign_page(fight, client_for):
    url = fight.table.campaign.get_absolute_url()
    page = client_for(fight.table.player).get(url).content.decode()
    assert "No fight has ended yet." in page
    _finished(fight)
    page = client_for(fight.table.player).get(url).content.decode()
    assert f'data-testid="past-fight-{fight.encounter.pk}"' in page
    assert "1 round" in page and "Left standing: Ysolde Varr" in page
    assert "Salvager Thug #1 (down and dying)" in page
    link = reverse("combat:record_markdown", args=[fight.encounter.pk])
    assert link in page


def test_it_links_the_record_from_the_encounter_page(fight, client_for):
    _finished(fight)
    page = client_for(fight.table.player).get(fight.encounter.get_absolute_url()).content.decode()
    assert reverse("combat:record_json", args=[fight.encounter.pk]) in page


@pytest.mark.parametrize(
    ("name", "written"),
    [
        # Read as typed: nothing here changes meaning in Discord, Slack or GitHub.
        ("Salvager Thug #2", "Salvager Thug #2"),
        ("Bang! Ted_the_Bold & co.", "Bang! Ted_the_Bold & co."),
        ("Tom's 1. pick | 50%", "Tom's 1. pick | 50%"),
        ("C:\\ork", "C:\\ork"),
        # Still inert: no links, images, headings, lists, HTML, emphasis, spoilers, entities.
        ("[x](http://evil)", "\\[x\\](http://evil)"),
        ("![img](http://evil/p.png)", "!\\[img\\](http://evil/p.png)"),
        ("# Boss", "\\# Boss"),
        ("> quoted", "\\> quoted"),
        ("- item", "\\- item"),
        ("1. first", "1\\. first"),
        ("<b>x</b>", "\\<b>x\\</b>"),
        ("*bold* _it_ ~~gone~~ `code`", "\\*bold\\* \\_it\\_ \\~\\~gone\\~\\~ \\`code\\`"),
        ("||spoiler||", "\\|\\|spoiler\\|\\|"),
        ("&amp; &#35;", "\\&amp; \\&#35;"),
        ("end\\", "end\\\\"),
        ("a\\*b", "a\\\\\\*b"),
    ],
)
def test_it_escapes_only_what_changes_meaning_in_markdown(name, written):
    assert md(name) == written


def test_it_writes_names_with_marks_cleanly_in_the_record(fight, client_for):
    services.add_condition(
        participant=fight.ysolde, name="Hex! #3 & co", rounds=2, actor=fight.table.gm
    )
    _finished(fight)
    url = reverse("combat:record_markdown", args=[fight.encounter.pk])
    text = client_for(fight.table.gm).get(url).content.decode()
    assert "Hex! #3 & co" in text
    assert "\\!" not in text and "\\#" not in text and "\\&" not in text
