"""The encounter pages: roles, htmx and plain forms, hidden NPC numbers, double submits and
a query count that does not grow with the number of participants."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from combat import services
from combat.models import CombatLogEntry, Encounter
from tests.fight_steps import strike

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}


def _url(name, *args):
    return reverse(f"combat:{name}", args=args)


def test_it_lists_and_creates_encounters_for_the_gm_only(table, client_for):
    url = _url("encounter_list", table.campaign.pk)
    assert client_for(None).get(url).status_code == 302
    assert client_for(table.outsider).get(url).status_code == 404
    assert client_for(table.other_gm).get(url).status_code == 404
    assert client_for(table.player).get(url).status_code == 200
    assert client_for(table.player).post(url, {"name": "Mine"}).status_code == 403
    response = client_for(table.gm).post(url, {"name": "Ambush"})
    encounter = Encounter.objects.get(name="Ambush")
    assert response.status_code == 302 and response.url == encounter.get_absolute_url()
    assert "Ambush" in client_for(table.player).get(url).content.decode()


@pytest.mark.parametrize(
    ("who", "status"), [(None, 302), ("outsider", 404), ("player", 200), ("gm", 200)]
)
def test_it_shows_the_encounter_to_members_only(fight, client_for, who, status):
    user = getattr(fight.table, who) if who else None
    response = client_for(user).get(fight.encounter.get_absolute_url())
    assert response.status_code == status


@pytest.mark.parametrize(
    ("who", "status"), [(None, 302), ("outsider", 404), ("player", 403), ("gm", 302)]
)
def test_it_lets_only_the_gm_undo(fight, client_for, who, status):
    services.next_turn(encounter=fight.encounter, actor=fight.table.gm)
    user = getattr(fight.table, who) if who else None
    response = client_for(user).post(_url("encounter_undo", fight.encounter.pk))
    assert response.status_code == status
    fight.refresh()
    expected_turn = fight.ysolde.pk if who == "gm" else fight.thug.pk
    assert fight.encounter.turn_id == expected_turn


def test_it_answers_htmx_with_the_tracker_and_plain_posts_with_a_redirect(fight, client_for):
    gm = client_for(fight.table.gm)
    url = _url("encounter_next_turn", fight.encounter.pk)
    plain = gm.post(url)
    assert plain.status_code == 302 and plain.url == fight.encounter.get_absolute_url()
    htmx = gm.post(url, **HX)
    assert htmx.status_code == 200
    body = htmx.content.decode()
    assert body.lstrip().startswith('<div id="tracker"') and "<html" not in body
    assert 'data-testid="round">2<' in body


def test_it_lets_a_player_fight_only_for_their_own_character(fight, client_for):
    player = client_for(fight.table.player)
    chest = fight.zone(fight.thug, "chest")
    declare = _url("attack_declare", fight.encounter.pk)
    data = {
        "attacker": fight.ysolde.pk,
        "target_zone": f"{fight.thug.pk}:{chest.pk}",
        "weapon": fight.weapon(fight.ysolde).pk,
        "action": "mighty",
    }
    assert player.post(declare, data, **HX).status_code == 200
    decl = fight.encounter.declarations.get()
    # The thug is the GM's: the player may neither defend for it nor attack with it.
    defense = _url("attack_defense", decl.pk)
    assert player.post(defense, {"defense": "parry"}, **HX).status_code == 403
    assert client_for(fight.table.gm).post(defense, {"defense": "parry"}, **HX).status_code == 200
    other = {**data, "attacker": fight.thug.pk, "target_zone": f"{fight.ysolde.pk}:1"}
    assert player.post(declare, other, **HX).status_code == 403
    assert client_for(fight.table.outsider).post(defense, {"defense": "dodge"}).status_code == 404
    # Rolled twice (a double click): applied once, the second answer says why.
    roll = _url("attack_roll", decl.pk)
    first = player.post(roll, {"roll": "43"}, **HX)
    second = player.post(roll, {"roll": "43"}, **HX)
    assert (first.status_code, second.status_code) == (200, 409)
    assert "already been rolled" in second.content.decode()
    assert CombatLogEntry.objects.filter(kind="roll").count() == 1
    assert fight.zone(fight.thug, "chest").wounds == 20


def test_it_refuses_bad_input_with_422_and_the_reason(fight, client_for):
    player = client_for(fight.table.player)
    declare = _url("attack_declare", fight.encounter.pk)
    response = player.post(declare, {"attacker": fight.ysolde.pk, "target_zone": "x"}, **HX)
    assert response.status_code == 422
    assert "Choose a target" in response.content.decode()
    plain = player.post(declare, {"attacker": fight.ysolde.pk, "target_zone": "x"}, follow=True)
    assert "Choose a target" in plain.content.decode()


def test_it_never_shows_hidden_npc_numbers_to_players(fight, client_for):
    gm, player = fight.table.gm, fight.table.player
    services.declare_attack(
        encounter=fight.encounter,
        attacker=fight.ysolde,
        target=fight.thug,
        action="mighty",
        zone=fight.zone(fight.thug, "chest"),
        weapon=fight.weapon(fight.ysolde),
        actor=player,
    )
    decl = fight.encounter.declarations.get()
    services.declare_defense(declaration=decl, defense="parry", actor=gm)
    services.resolve(declaration=decl, roll=43, actor=player)
    url = fight.encounter.get_absolute_url()
    thug_vit = f'data-testid="vit-{fight.thug.pk}"'
    gm_page = client_for(gm).get(url).content.decode()
    assert thug_vit in gm_page and "20 damage" in gm_page
    page = client_for(player).get(url).content.decode()
    assert thug_vit not in page
    assert f'data-testid="zone-{fight.zone(fight.thug, "chest").pk}"' not in page
    assert "numbers hidden by the GM" in page
    assert "20 damage" not in page and "90v20" not in page
    assert "Ysolde Varr mighty strike at Salvager Thug #1" in page and "chest: hit." in page
    # Shown again, the numbers appear.
    services.update_participant(participant=fight.thug, hidden=False, actor=gm)
    assert thug_vit in client_for(player).get(url).content.decode()


def test_it_shows_the_odds_before_the_roll(fight, client_for):
    services.declare_attack(
        encounter=fight.encounter,
        attacker=fight.ysolde,
        target=fight.thug,
        action="fast",
        zone=fight.zone(fight.thug, "chest"),
        weapon=fight.weapon(fight.ysolde),
        actor=fight.table.player,
    )
    page = client_for(fight.table.gm).get(fight.encounter.get_absolute_url()).content.decode()
    assert "80v15" in page and "80v20" in page and "80v25" in page


def test_it_offers_fate_to_the_owner_of_a_character_in_the_fight(fight, client_for):
    entry = strike(
        fight.encounter,
        fight.ysolde,
        fight.thug,
        actor=fight.table.player,
        defender=fight.table.gm,
        roll=43,
    )
    player = client_for(fight.table.player)
    assert (
        'data-testid="fate-reroll"'
        in player.get(fight.encounter.get_absolute_url()).content.decode()
    )
    url = _url("roll_fate", entry.pk)
    response = player.post(url, {"spender": fight.ysolde.pk, "action": "revoke"}, **HX)
    assert response.status_code == 200
    assert fight.zone(fight.thug, "chest").wounds == 0
    fight.refresh()
    assert fight.ysolde.character.fate == 0
    again = player.post(url, {"spender": fight.ysolde.pk, "action": "revoke"}, **HX)
    assert again.status_code == 409


def test_it_needs_the_csrf_token(fight):
    client = Client(enforce_csrf_checks=True)
    client.force_login(fight.table.gm)
    assert client.post(_url("encounter_next_turn", fight.encounter.pk)).status_code == 403


def test_it_adds_npc_copies_from_the_page(fight, client_for):
    response = client_for(fight.table.gm).post(
        _url("npc_copies_add", fight.encounter.pk),
        {"npc": fight.npc.pk, "count": "3", "hidden": "1"},
        **HX,
    )
    assert response.status_code == 200
    names = sorted(fight.encounter.participants.values_list("character__name", flat=True))
    assert names[:4] == [f"Salvager Thug #{n}" for n in (1, 2, 3, 4)]
    copies = fight.encounter.participants.filter(character__name__startswith="Salvager")
    assert len({p.character_id for p in copies}) == 4
    assert all(p.character.zones.count() == 7 for p in copies)
    assert all(p.character.weapons.get().dmg == 4 for p in copies)


def _page_queries(client, encounter):
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(encounter.get_absolute_url()).status_code == 200
    return len(ctx)


@pytest.mark.parametrize("who", ["gm", "player"])
def test_it_renders_the_page_in_a_constant_number_of_queries(fight, client_for, who):
    client = client_for(getattr(fight.table, who))
    small = _page_queries(client, fight.encounter)
    services.add_npc_copies(encounter=fight.encounter, npc=fight.npc, count=6, actor=fight.table.gm)
    services.declare_attack(
        encounter=fight.encounter,
        attacker=fight.ysolde,
        target=fight.thug,
        action="fast",
        zone=fight.zone(fight.thug, "chest"),
        weapon=fight.weapon(fight.ysolde),
        actor=fight.table.player,
    )
    assert _page_queries(client, fight.encounter) == small


def test_it_renders_the_tracker_panel_per_viewer_for_the_live_feed(fight):
    from combat.render import tracker_panels

    thug_vit = f'data-testid="vit-{fight.thug.pk}"'
    assert thug_vit in tracker_panels(fight.encounter, fight.table.gm)["tracker"]
    player_html = tracker_panels(fight.encounter, fight.table.player)["tracker"]
    assert thug_vit not in player_html and f'data-testid="vit-{fight.ysolde.pk}"' in player_html


def _hidden_inputs(html, form_testid):
    form = re.search(rf'<form[^>]*data-testid="{form_testid}".*?</form>', html, re.S).group(0)
    return dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form))


def test_it_sends_the_turn_the_page_shows_with_next_turn(fight, client_for):
    page = client_for(fight.table.gm).get(fight.encounter.get_absolute_url()).content.decode()
    seen = _hidden_inputs(page, "next-turn-form")
    seen.pop("csrfmiddlewaretoken")
    assert seen == {"round": "1", "turn": str(fight.ysolde.pk), "countering": "0"}


@pytest.mark.parametrize("htmx", [True, False])
def test_it_refuses_a_second_next_turn_from_a_page_that_is_behind(fight, client_for, htmx):
    """Two tabs (or a double click) send the same turn: the first passes it, the second is
    told the fight moved on, and nothing else changes."""
    gm = client_for(fight.table.gm)
    url = _url("encounter_next_turn", fight.encounter.pk)
    seen = {"round": "1", "turn": str(fight.ysolde.pk), "countering": "0"}
    extra = HX if htmx else {}
    first = gm.post(url, seen, **extra)
    second = gm.post(url, seen, follow=not htmx, **extra)
    if htmx:
        assert (first.status_code, second.status_code) == (200, 409)
    else:
        assert first.status_code == 302 and second.status_code == 200
    assert "The turn has already moved on" in second.content.decode()
    fight.refresh()
    assert (fight.encounter.round, fight.encounter.turn_id) == (1, fight.thug.pk)
    assert CombatLogEntry.objects.filter(encounter=fight.encounter, kind="turn").count() == 1


def test_it_refuses_a_stamina_test_from_the_page_when_none_is_due(fight, client_for):
    url = _url("participant_stamina", fight.encounter.pk, fight.ysolde.pk)
    player = client_for(fight.table.player)
    response = player.post(url, {"roll": "50"}, **HX)
    assert response.status_code == 409
    assert "No Stamina test is due for Ysolde Varr" in response.content.decode()
    plain = player.post(url, {"roll": "50"}, follow=True)
    assert "No Stamina test is due" in plain.content.decode()
    assert not CombatLogEntry.objects.filter(kind="stamina").exists()


def _declare_form(html):
    form = re.search(r'<form[^>]*data-testid="declare-form".*?</form>', html, re.S).group(0)

    def select(name):
        body = re.search(rf'<select name="{name}".*?</select>', form, re.S).group(0)
        options = re.findall(r'<option value="([^"]*)"', body)
        chosen = re.findall(r'<option value="([^"]*)" selected', body)
        return options, chosen

    return form, select


def test_it_defaults_the_declare_form_to_the_acting_attacker(fight, client_for):
    page = client_for(fight.table.gm).get(fight.encounter.get_absolute_url()).content.decode()
    form, select = _declare_form(page)
    attackers, chosen = select("attacker")
    assert set(attackers) == {str(fight.ysolde.pk), str(fight.thug.pk)}
    assert chosen == [str(fight.ysolde.pk)]  # her turn
    targets, _ = select("target_zone")
    assert targets and all(t.startswith(f"{fight.thug.pk}:") for t in targets)
    weapons, chosen = select("weapon")
    assert weapons == [str(fight.weapon(fight.ysolde).pk), ""]
    assert chosen == [str(fight.weapon(fight.ysolde).pk)]
    counter = re.search(r'<input type="checkbox" name="counterattack"[^>]*>', form).group(0)
    assert "checked" not in counter


@pytest.mark.parametrize("htmx", [True, False])
def test_it_gives_the_declare_form_of_another_attacker(fight, client_for, htmx):
    url = fight.encounter.get_absolute_url()
    gm = client_for(fight.table.gm)
    if htmx:
        query = {"panel": "declare", "attacker": fight.thug.pk, "shown": fight.ysolde.pk}
        response = gm.get(url, query, **HX)
        assert response.content.decode().lstrip().startswith("<form")
        # The attacker the form already shows: nothing to swap (a late swap would reset the
        # target just picked).
        same = gm.get(url, {**query, "shown": fight.thug.pk}, **HX)
        assert same.status_code == 204
    else:
        response = gm.get(url, {"attacker": fight.thug.pk})
    _, select = _declare_form(response.content.decode())
    assert select("attacker")[1] == [str(fight.thug.pk)]
    assert all(t.startswith(f"{fight.ysolde.pk}:") for t in select("target_zone")[0])
    assert select("weapon") == (
        [str(fight.weapon(fight.thug).pk), ""],
        [str(fight.weapon(fight.thug).pk)],
    )


def test_it_offers_a_player_only_their_own_attacker_and_others_as_targets(fight, client_for):
    player = client_for(fight.table.player)
    # Asking for the GM's thug changes nothing: not the player's to attack with.
    page = player.get(fight.encounter.get_absolute_url(), {"attacker": fight.thug.pk})
    _, select = _declare_form(page.content.decode())
    assert select("attacker") == ([str(fight.ysolde.pk)], [str(fight.ysolde.pk)])
    assert all(t.startswith(f"{fight.thug.pk}:") for t in select("target_zone")[0])
    assert select("weapon")[1] == [str(fight.weapon(fight.ysolde).pk)]


def test_it_keeps_the_chosen_attacker_when_a_declaration_is_refused(fight, client_for):
    declare = _url("attack_declare", fight.encounter.pk)
    response = client_for(fight.table.gm).post(
        declare, {"attacker": fight.thug.pk, "target_zone": "x"}, **HX
    )
    assert response.status_code == 422
    _, select = _declare_form(response.content.decode())
    assert select("attacker")[1] == [str(fight.thug.pk)]
    assert select("weapon")[1] == [str(fight.weapon(fight.thug).pk)]


def test_it_offers_a_player_the_declare_form_on_their_turn_only(fight, client_for):
    url = fight.encounter.get_absolute_url()
    assert 'data-testid="declare-form"' in client_for(fight.table.player).get(url).text
    services.set_turn(encounter=fight.encounter, participant=fight.thug, actor=fight.table.gm)
    assert 'data-testid="declare-form"' not in client_for(fight.table.player).get(url).text
    assert 'data-testid="declare-form"' in client_for(fight.table.gm).get(url).text


def test_it_refuses_stamina_and_fate_once_the_fight_is_over(fight, client_for):
    gm, player = fight.table.gm, fight.table.player
    entry = strike(fight.encounter, fight.ysolde, fight.thug, actor=player, defender=gm, roll=43)
    head = fight.zone(fight.ysolde, "head")
    services.adjust_zone(encounter=fight.encounter, zone=head, amount=14, actor=gm)
    services.finish_encounter(encounter=fight.encounter, actor=gm)
    page = client_for(player).get(fight.encounter.get_absolute_url()).content.decode()
    assert "Roll Stamina" not in page and 'data-testid="fate-reroll"' not in page
    client = client_for(player)
    stamina = _url("participant_stamina", fight.encounter.pk, fight.ysolde.pk)
    response = client.post(stamina, {"roll": "95"}, **HX)
    assert response.status_code == 422
    assert "The fight is over" in response.content.decode()
    fate = client.post(
        _url("roll_fate", entry.pk), {"spender": fight.ysolde.pk, "action": "revoke"}, **HX
    )
    assert fate.status_code == 422
    assert "The fight is over" in fate.content.decode()
    fight.refresh()
    assert fight.ysolde.state == "active" and fight.ysolde.character.fate == 1
    assert fight.zone(fight.thug, "chest").wounds > 0
    assert not CombatLogEntry.objects.filter(kind__in=["stamina", "fate"]).exists()


def test_it_asks_before_ending_the_fight_with_or_without_javascript(fight, client_for):
    page = client_for(fight.table.gm).get(fight.encounter.get_absolute_url()).content.decode()
    finish = _url("encounter_finish", fight.encounter.pk)
    # The real button sits inside a closed <details>: a first press opens it and asks.
    details = re.search(r"<details[^>]*data-testid=\"end-fight\".*?</details>", page, re.S)
    assert details is not None
    assert "<summary" in details.group(0) and f'action="{finish}"' in details.group(0)
    assert page.count(f'action="{finish}"') == 1
    assert "Yes, end the fight" in details.group(0)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("Ambush\x00", "Null characters are not allowed."),
        ("A" * 121, "at most 120 characters"),
        ("  ", "Give the encounter a name."),
    ],
)
def test_a_bad_encounter_name_creates_nothing(table, client_for, name, message):
    """PostgreSQL cannot store a NUL character: it was a server error there (SQLite stored
    it); a name past 120 characters was cut short in silence."""
    response = client_for(table.gm).post(
        _url("encounter_list", table.campaign.pk), {"name": name}, follow=True
    )
    assert response.status_code == 200
    assert message in response.content.decode()
    assert not Encounter.objects.exists()


def test_it_links_the_gm_to_a_call_for_checks_with_the_fights_player_characters(fight, client_for):
    html = client_for(fight.table.gm).get(fight.encounter.get_absolute_url()).content.decode()
    link = re.search(r'<a href="([^"]+)"[^>]*data-testid="call-for-a-check"', html)
    assert link is not None
    url = link.group(1).replace("&amp;", "&")
    checks_url = reverse("checks:campaign_checks", args=[fight.table.campaign.pk])
    ysolde = fight.ysolde.character
    assert url == f"{checks_url}?characters={ysolde.pk}#call-panel"
    form = client_for(fight.table.gm).get(url).content.decode()
    assert f'name="characters" value="{ysolde.pk}" checked' in form
    player = client_for(fight.table.player).get(fight.encounter.get_absolute_url())
    assert b"call-for-a-check" not in player.content
