"""Conditions that run themselves: what each maneuver leaves, when it ends (round by round, at
the turn boundary docs/rules.md names), what the tracker refuses while it lasts, undo, and the
GM's own named conditions (page and API)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.urls import reverse

from combat import services
from combat.models import CombatLogEntry, Participant

pytestmark = pytest.mark.django_db


def _maneuver(fight: Any, action: str, roll: int = 43, *, target: str = "ysolde") -> None:
    """The thug (GM) tries ``action`` on Ysolde (or Ysolde on the thug); 43 succeeds for
    every maneuver against these two (the engine's PvDs: 65..75 against 20..25)."""
    gm = fight.table.gm
    a, t = (fight.thug, fight.ysolde) if target == "ysolde" else (fight.ysolde, fight.thug)
    zone = fight.zone(t, "chest") if action == "stun" else None  # a stun is a blow
    decl, _ = services.declare_attack(
        encounter=fight.encounter, attacker=a, target=t, action=action, zone=zone, actor=gm
    )
    if decl.needs_defense:
        services.declare_defense(declaration=decl, defense="dodge", actor=gm)
    services.resolve(declaration=decl, roll=roll, actor=gm)
    fight.refresh()


def _next(fight: Any) -> CombatLogEntry:
    entry = services.next_turn(encounter=fight.encounter, actor=fight.table.gm)
    fight.refresh()
    fight.ysolde.encounter = fight.encounter
    fight.thug.encounter = fight.encounter
    return entry


@pytest.mark.parametrize(
    ("action", "key", "info"),
    [
        ("disarm", "disarmed", {"ends": "round", "until": 2}),
        ("throw", "prone", {"ends": "turn"}),
        ("stun", "stunned", {"ends": "turn"}),
        ("grapple", "grappled", {"ends": "removed"}),
        ("shove", "shoved", {"ends": "round", "until": 1}),
        ("feint", "feinted", {"ends": "round", "until": 1}),
    ],
)
def test_it_applies_each_maneuvers_condition_with_its_duration(fight, action, key, info):
    _maneuver(fight, action)
    assert fight.ysolde.conditions == {key: {"by": fight.thug.pk, "round": 1, **info}}
    if action == "stun":
        assert fight.ysolde.stamina_due


def test_it_ends_prone_when_the_thrown_participants_next_turn_comes(fight):
    # Round 1, Ysolde's turn: the GM's thug throws her (out of turn).
    _maneuver(fight, "throw")
    entry = _next(fight)  # the thug's turn: Ysolde is still on the ground
    assert "prone" in fight.ysolde.conditions and "prone" not in entry.text
    entry = _next(fight)  # round 2: her turn comes, she stands up and acts
    assert fight.encounter.round == 2 and fight.encounter.turn_id == fight.ysolde.pk
    assert fight.ysolde.conditions == {}
    assert "Ysolde Varr is no longer prone." in entry.text


def test_it_makes_a_stunned_participant_lose_exactly_their_next_turn(fight):
    _maneuver(fight, "stun", roll=43)
    assert fight.ysolde.stopped_by == "stunned" and not fight.ysolde.can_act
    _next(fight)  # round 1, the thug's turn
    entry = _next(fight)  # round 2: Ysolde's turn is passed over, the stun ends with it
    assert fight.encounter.round == 2 and fight.encounter.turn_id == fight.thug.pk
    assert "stunned" not in fight.ysolde.conditions
    assert "Ysolde Varr is no longer stunned." in entry.text
    _next(fight)  # round 3: she acts again
    assert fight.encounter.round == 3 and fight.encounter.turn_id == fight.ysolde.pk


def test_it_keeps_a_grapple_until_the_gm_removes_it(fight):
    _maneuver(fight, "grapple")
    for _ in range(4):
        _next(fight)
    assert fight.encounter.round == 3 and "grappled" in fight.ysolde.conditions
    services.remove_condition(participant=fight.ysolde, key="grappled", actor=fight.table.gm)
    fight.refresh()
    assert fight.ysolde.conditions == {}


def test_it_ends_a_shove_with_its_round(fight):
    _maneuver(fight, "shove")
    _next(fight)
    assert "shoved" in fight.ysolde.conditions
    entry = _next(fight)
    assert fight.ysolde.conditions == {} and "no longer shoved" in entry.text


def test_it_runs_a_gm_condition_for_its_rounds(fight):
    gm = fight.table.gm
    services.add_condition(participant=fight.thug, name="Blessed", rounds=2, actor=gm)
    fight.refresh()
    assert fight.thug.conditions["gm:blessed"] == {
        "by": None,
        "round": 1,
        "ends": "round",
        "until": 2,
        "label": "Blessed",
    }
    fight.thug.encounter = fight.encounter
    assert [s.left for s in fight.thug.shown_conditions()] == ["2 rounds left"]
    _next(fight)
    _next(fight)  # round 2
    assert [s.left for s in fight.thug.shown_conditions()] == ["1 round left"]
    _next(fight)
    entry = _next(fight)  # round 3
    assert fight.encounter.round == 3 and fight.thug.conditions == {}
    assert "Salvager Thug #1 is no longer blessed." in entry.text


def test_it_keeps_an_until_removed_condition_and_replaces_one_named_again(fight):
    gm = fight.table.gm
    services.add_condition(participant=fight.thug, name="On fire", until_removed=True, actor=gm)
    services.add_condition(participant=fight.thug, name="on  FIRE", rounds=1, actor=gm)
    fight.refresh()
    assert list(fight.thug.conditions) == ["gm:on fire"]
    assert fight.thug.conditions["gm:on fire"]["until"] == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "Blessed"}, "rounds: say how many rounds"),
        ({"name": "   "}, "name: give the condition a name"),
        ({"name": "x" * 41, "rounds": 1}, "name: at most 40"),
        ({"name": "Bad\u202ename", "rounds": 1}, "name: use printable"),
        ({"name": "Blessed", "rounds": 0}, "rounds: a whole number"),
        ({"name": "Blessed", "rounds": 101}, "rounds: a whole number"),
    ],
)
def test_it_refuses_a_bad_condition_and_changes_nothing(fight, kwargs, message):
    with pytest.raises(services.CombatError, match=message):
        services.add_condition(participant=fight.thug, actor=fight.table.gm, **kwargs)
    fight.refresh()
    assert fight.thug.conditions == {}


def test_it_sets_unconscious_and_dying_as_states(fight):
    gm = fight.table.gm
    services.add_condition(participant=fight.thug, name="dying", actor=gm)
    fight.refresh()
    assert fight.thug.state == Participant.State.DOWN
    services.remove_condition(participant=fight.thug, key="dying", actor=gm)
    fight.refresh()
    assert fight.thug.state == Participant.State.ACTIVE


# --- Enforcement ------------------------------------------------------------------------------


def test_it_refuses_a_stunned_participants_declaration_for_player_and_gm(fight):
    _maneuver(fight, "stun")
    for actor in (fight.table.player, fight.table.gm):
        with pytest.raises(services.CombatError, match="cannot act while stunned"):
            services.declare_attack(
                encounter=fight.encounter,
                attacker=fight.ysolde,
                target=fight.thug,
                action="mighty",
                zone=fight.zone(fight.thug, "chest"),
                actor=actor,
            )


def test_it_refuses_the_declaration_on_the_page_and_the_api(fight, client_for, api_for):
    services.add_condition(participant=fight.ysolde, name="stunned", actor=fight.table.gm)
    body = {
        "attacker": fight.ysolde.pk,
        "target_zone": f"{fight.thug.pk}:{fight.zone(fight.thug, 'chest').pk}",
        "action": "mighty",
    }
    url = reverse("combat:attack_declare", args=[fight.encounter.pk])
    response = client_for(fight.table.player).post(url, body, HTTP_HX_REQUEST="true")
    assert response.status_code == 422
    assert "cannot act while stunned" in response.content.decode()
    api = api_for(fight.table.player)
    response = api.post(
        f"/api/encounters/{fight.encounter.pk}/attacks/",
        {
            "attacker": fight.ysolde.pk,
            "target": fight.thug.pk,
            "zone": fight.zone(fight.thug, "chest").pk,
            "action": "mighty",
        },
        format="json",
    )
    assert response.status_code == 400 and "stunned" in response.json()["detail"]
    assert not fight.encounter.declarations.exists()


def test_it_does_not_offer_the_declare_form_to_a_stunned_player(fight, client_for):
    url = reverse("combat:encounter_detail", args=[fight.encounter.pk])
    assert 'data-testid="declare-form"' in client_for(fight.table.player).get(url).content.decode()
    services.add_condition(participant=fight.ysolde, name="stunned", actor=fight.table.gm)
    page = client_for(fight.table.player).get(url).content.decode()
    assert 'data-testid="declare-form"' not in page
    assert "Ysolde Varr cannot act while stunned." in page


def test_it_refuses_an_attack_on_and_a_defense_by_the_helpless(fight):
    gm = fight.table.gm
    decl, _ = services.declare_attack(
        encounter=fight.encounter,
        attacker=fight.ysolde,
        target=fight.thug,
        action="mighty",
        zone=fight.zone(fight.thug, "chest"),
        actor=fight.table.player,
    )
    services.add_condition(participant=fight.thug, name="unconscious", actor=gm)
    with pytest.raises(services.CombatError, match="cannot defend"):
        services.declare_defense(declaration=decl, defense="dodge", actor=gm)
    services.cancel_declaration(declaration=decl, actor=fight.table.player)
    with pytest.raises(services.CombatError, match="helpless target"):
        services.declare_attack(
            encounter=fight.encounter,
            attacker=fight.ysolde,
            target=fight.thug,
            action="mighty",
            zone=fight.zone(fight.thug, "chest"),
            actor=fight.table.player,
        )


# --- Undo -------------------------------------------------------------------------------------


def test_it_undoes_an_expiry_exactly(fight):
    _maneuver(fight, "stun")
    _next(fight)
    before = dict(fight.ysolde.conditions)
    _next(fight)  # round 2: the stun ends
    assert fight.ysolde.conditions == {}
    services.undo_last(encounter=fight.encounter, actor=fight.table.gm)
    fight.refresh()
    assert fight.encounter.round == 1 and fight.encounter.turn_id == fight.thug.pk
    assert fight.ysolde.conditions == before


def test_it_undoes_a_maneuvers_condition_and_the_gms_changes(fight):
    gm = fight.table.gm
    _maneuver(fight, "grapple")
    services.add_condition(participant=fight.ysolde, name="Bleeding", rounds=3, actor=gm)
    services.remove_condition(participant=fight.ysolde, key="grappled", actor=gm)
    fight.refresh()
    assert list(fight.ysolde.conditions) == ["gm:bleeding"]
    services.undo_last(encounter=fight.encounter, actor=gm)  # the removal
    fight.refresh()
    assert set(fight.ysolde.conditions) == {"grappled", "gm:bleeding"}
    services.undo_last(encounter=fight.encounter, actor=gm)  # the GM's condition
    services.undo_last(encounter=fight.encounter, actor=gm)  # the grapple's roll
    fight.refresh()
    assert fight.ysolde.conditions == {}


# --- The page and the API ---------------------------------------------------------------------


def test_it_shows_conditions_with_rounds_left_and_escapes_the_gms_names(fight, client_for):
    gm = fight.table.gm
    services.add_condition(participant=fight.thug, name="<b>Hexed</b>", rounds=3, actor=gm)
    _maneuver(fight, "throw")
    url = reverse("combat:encounter_detail", args=[fight.encounter.pk])
    for user in (gm, fight.table.player):
        page = client_for(user).get(url).content.decode()
        assert "&lt;b&gt;Hexed&lt;/b&gt;" in page and "<b>Hexed" not in page
        assert "3 rounds left" in page
        assert f'data-testid="condition-{fight.ysolde.pk}-prone"' in page
        assert ("Remove Prone from Ysolde Varr" in page) == (user == gm)
    # The player's own character's conditions come first on their screen.
    page = client_for(fight.table.player).get(url).content.decode()
    assert f'data-testid="my-conditions-{fight.ysolde.pk}"' in page


def test_it_adds_and_removes_from_the_row_menu(fight, client_for):
    gm = client_for(fight.table.gm)
    add = reverse("combat:condition_add", args=[fight.encounter.pk, fight.thug.pk])
    response = gm.post(
        add, {"condition": "other", "label": "Blessed", "duration": "rounds", "rounds": "2"}
    )
    assert response.status_code == 302
    fight.refresh()
    assert fight.thug.conditions["gm:blessed"]["until"] == 2
    response = gm.post(add, {"condition": "other", "label": ""}, HTTP_HX_REQUEST="true")
    assert response.status_code == 422 and "type its name" in response.content.decode()
    response = gm.post(
        add, {"condition": "prone", "duration": "rounds", "rounds": "x"}, HTTP_HX_REQUEST="true"
    )
    assert (
        response.status_code == 422 and "rounds must be a whole number" in response.content.decode()
    )
    remove = reverse("combat:condition_remove", args=[fight.encounter.pk, fight.thug.pk])
    response = gm.post(remove, {"key": "gm:blessed"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    fight.refresh()
    assert fight.thug.conditions == {}
    player = client_for(fight.table.player)
    assert player.post(add, {"condition": "prone"}).status_code == 403
    assert client_for(fight.table.outsider).post(add, {"condition": "prone"}).status_code == 404


def test_it_lists_adds_and_removes_through_the_api(fight, api_for):
    url = f"/api/participants/{fight.thug.pk}/conditions/"
    gm, player = api_for(fight.table.gm), api_for(fight.table.player)
    response = gm.post(url, {"name": "Blessed", "rounds": 2}, format="json")
    assert response.status_code == 201 and response.json()["kind"] == "condition"
    _maneuver(fight, "throw", target="thug")
    listed = player.get(url).json()  # a hidden NPC's conditions are seen at the table
    assert [(c["key"], c["ends"], c["rounds_left"]) for c in listed] == [
        ("prone", "turn", None),
        ("gm:blessed", "round", 2),
    ]
    assert player.post(url, {"name": "x", "rounds": 1}, format="json").status_code == 403
    response = gm.post(url, {"name": "x", "rounds": 1, "until_removed": True}, format="json")
    assert response.status_code == 400 and "rounds" in response.json()
    response = gm.post(url, {"name": "x", "rounds": "2"}, format="json")
    assert response.status_code == 400 and "rounds" in response.json()
    response = gm.post(url + "remove/", {"key": "nothing"}, format="json")
    assert response.status_code == 400 and "no condition" in response.json()["detail"]
    assert gm.post(url + "remove/", {"key": "prone"}, format="json").status_code == 200
    assert api_for(fight.table.outsider).get(url).status_code == 404
    fight.refresh()
    assert list(fight.thug.conditions) == ["gm:blessed"]


def _declare_choices(page: str) -> tuple[str, str]:
    """The declare form's attacker and target-and-zone selects."""
    attackers = re.search(r'<select name="attacker".*?</select>', page, re.S)
    targets = re.search(r'<select name="target_zone".*?</select>', page, re.S)
    assert attackers and targets
    return attackers.group(0), targets.group(0)


def test_it_leaves_the_stopped_and_the_helpless_out_of_the_gms_declare_form(fight, client_for):
    gm = fight.table.gm
    url = reverse("combat:encounter_detail", args=[fight.encounter.pk])
    thug_attacks = f'<option value="{fight.thug.pk}"'
    attackers, _ = _declare_choices(client_for(gm).get(url).content.decode())
    assert thug_attacks in attackers
    services.add_condition(participant=fight.thug, name="stunned", actor=gm)
    attackers, _ = _declare_choices(client_for(gm).get(url).content.decode())
    assert thug_attacks not in attackers
    services.remove_condition(participant=fight.thug, key="stunned", actor=gm)
    services.add_condition(participant=fight.ysolde, name="unconscious", actor=gm)
    # Ysolde, unconscious, is neither offered as the attacker nor as the thug's target.
    attackers, targets = _declare_choices(client_for(gm).get(url).content.decode())
    assert thug_attacks in attackers and f'<option value="{fight.ysolde.pk}"' not in attackers
    assert f'value="{fight.ysolde.pk}:' not in targets
