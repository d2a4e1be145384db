"""The record of a fight: Markdown and JSON downloads (page and API) built as the viewer sees
the fight, and the campaign page's past fights with their outcome."""

from __future__ import annotations

import json
import re

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.urls import reverse

from combat import services
from combat.record import md
from sheets.models import Character
from tests.fight_steps import strike

pytestmark = pytest.mark.django_db


def _finished(fight):
    """Ysolde's mighty strike at the hidden thug's chest (43 hits, and the doubled blow takes
    his 7 Vitality: down and dying), then the GM ends the fight."""
    gm = fight.table.gm
    roll = strike(
        fight.encounter,
        fight.ysolde,
        fight.thug,
        actor=fight.table.player,
        defender=gm,
        defense="block",
        roll=43,
    )
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
    # The d100 of a roll against the hidden thug bounds his DIF: the GM's only.
    assert player_roll["roll"] is None and player_roll["round"] == 1
    assert gm_roll["roll"] == 43
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


def _outputs(fight, client_for, api_for, user):
    """The record of the fight as ``user`` receives it: JSON and Markdown downloads, the API's
    JSON and Markdown, the encounter page and the campaign page."""
    enc = fight.encounter.pk
    api = f"/api/encounters/{enc}/record/"
    return {
        "json": json.loads(client_for(user).get(reverse("combat:record_json", args=[enc])).content),
        "md": client_for(user).get(reverse("combat:record_markdown", args=[enc])).content.decode(),
        "api": api_for(user).get(api).json(),
        "api_md": api_for(user).get(api + "markdown/").content.decode(),
        "page": client_for(user).get(fight.encounter.get_absolute_url()).content.decode(),
        # The campaign page's past fights (its character list shows the sheets as they are).
        "campaign": client_for(user)
        .get(fight.table.campaign.get_absolute_url())
        .content.decode()
        .split('data-testid="past-fights"')[1],
    }


def _later_fight(fight):
    """Ysolde renamed, then hurt in the campaign's next fight (her Vitality drops)."""
    gm = fight.table.gm
    Character.objects.filter(pk=fight.ysolde.character_id).update(name="Ysolde the Bold")
    later, _ = services.create_encounter(campaign=fight.table.campaign, name="Later", actor=gm)
    services.add_participants(encounter=later, characters=[fight.ysolde.character], actor=gm)
    services.start_encounter(encounter=later, actor=gm)
    services.adjust_zone(
        encounter=later, zone=fight.zone(fight.ysolde, "chest"), amount=30, actor=gm
    )
    return Character.objects.get(pk=fight.ysolde.character_id)


def test_it_keeps_a_finished_fights_record_as_it_was_when_it_ended(fight, client_for, api_for):
    _finished(fight)
    ysolde = fight.ysolde
    before = {
        who: _outputs(fight, client_for, api_for, user)
        for who, user in (("gm", fight.table.gm), ("player", fight.table.player))
    }
    vit = ysolde.character.vitality
    assert {p["name"]: p["vitality"] for p in before["gm"]["json"]["participants"]}[
        "Ysolde Varr"
    ] == vit
    assert f"{vit} / {vit}" in before["player"]["page"]

    changed = _later_fight(fight)
    assert changed.vitality < vit and changed.name == "Ysolde the Bold"

    for who, user in (("gm", fight.table.gm), ("player", fight.table.player)):
        after = _outputs(fight, client_for, api_for, user)
        for name in ("json", "api"):
            assert after[name]["participants"] == before[who][name]["participants"], (who, name)
            assert after[name]["outcome"] == before[who][name]["outcome"], (who, name)
        assert after["md"] == before[who]["md"] and after["api_md"] == before[who]["api_md"]
        for name in ("page", "campaign"):
            assert "Ysolde the Bold" not in after[name], (who, name)
        assert "Ysolde Varr" in after["page"] and f"{vit} / {vit}" in after["page"]
        assert f'data-testid="vit-{ysolde.pk}">{changed.vitality} /' not in after["page"]
        assert "Left standing: Ysolde Varr" in after["campaign"]


def test_it_keeps_hidden_numbers_out_of_the_snapshot_for_players(fight, client_for, api_for):
    _finished(fight)
    Character.objects.filter(pk=fight.thug.character_id).update(name="Renamed Thug")
    player = _outputs(fight, client_for, api_for, fight.table.player)
    gm = _outputs(fight, client_for, api_for, fight.table.gm)
    for out in (player["json"], player["api"]):
        thug = {p["id"]: p for p in out["participants"]}[fight.thug.pk]
        assert thug["name"] == "Salvager Thug #1" and "vitality" not in thug
    assert "vitality" in {p["id"]: p for p in gm["json"]["participants"]}[fight.thug.pk]
    assert f'data-testid="vit-{fight.thug.pk}"' not in player["page"]
    assert f'data-testid="vit-{fight.thug.pk}"' in gm["page"]


def test_it_drops_the_snapshot_when_the_end_is_undone_and_takes_it_again(fight, api_for):
    _finished(fight)
    assert fight.encounter.record is not None
    services.undo_last(encounter=fight.encounter, actor=fight.table.gm)
    fight.refresh()
    assert fight.encounter.status == "running" and fight.encounter.record is None
    Character.objects.filter(pk=fight.ysolde.character_id).update(name="Ysolde the Bold")
    api = f"/api/encounters/{fight.encounter.pk}/record/"
    names = [p["name"] for p in api_for(fight.table.gm).get(api).json()["participants"]]
    assert "Ysolde the Bold" in names  # a running fight's record is read live
    services.finish_encounter(encounter=fight.encounter, actor=fight.table.gm)
    Character.objects.filter(pk=fight.ysolde.character_id).update(name="Ysolde Again")
    names = [p["name"] for p in api_for(fight.table.gm).get(api).json()["participants"]]
    assert "Ysolde the Bold" in names and "Ysolde Again" not in names


@pytest.mark.django_db(transaction=True)
def test_it_freezes_fights_finished_before_snapshots_existed(fight):
    """The migration that adds Encounter.record gives every finished fight one, from the
    sheets as they stand when it runs (historical models: fields only)."""
    _finished(fight)
    taken = fight.encounter.record
    executor = MigrationExecutor(connection)
    executor.migrate([("combat", "0004_log_condition_kind")])
    executor.loader.build_graph()
    executor.migrate([("combat", "0005_encounter_record")])
    # On to the latest migrations again: the models (and the tests after this one) need them.
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes("combat"))
    fight.refresh()
    assert fight.encounter.record == taken
    assert {p["name"] for p in taken["participants"]} == {"Ysolde Varr", "Salvager Thug #1"}


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
