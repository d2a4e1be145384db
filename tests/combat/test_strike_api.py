"""A whole strike in one request (POST /api/encounters/{id}/strike/): the same results, log
entries, rules and refusals as declare + defend + roll, in one transaction."""

from __future__ import annotations

import random

import pytest
from django.db import transaction

from combat import services
from combat.models import CombatLogEntry, Declaration
from sheets.models import BodyZone, Character, Weapon
from tests.fight_steps import declare_and_defend

pytestmark = pytest.mark.django_db


@pytest.fixture
def api_for(api_for):
    def make(user):
        client = api_for(user)
        client.default_format = "json"
        return client

    return make


def _url(fight):
    return f"/api/encounters/{fight.encounter.pk}/strike/"


def _body(fight, attacker, target, action="fast", **extra):
    body = {"attacker": attacker.pk, "target": target.pk, "action": action}
    if action != "feint":
        body["zone"] = fight.zone(target, "chest").pk
    body.update(extra)
    return body


def _state(fight):
    """Everything a strike can change, and the log it wrote (ids left out)."""
    log = [
        {
            "seq": e.seq,
            "kind": e.kind,
            "actor": e.actor_id,
            "participant": e.participant_id,
            "roll": e.roll,
            "physical": e.physical,
            "payload": {
                **e.payload,
                "changes": [
                    {k: v for k, v in c.items() if not (c["model"] == "declaration" and k == "pk")}
                    for c in e.payload["changes"]
                ],
            },
        }
        for e in CombatLogEntry.objects.filter(encounter=fight.encounter).order_by("seq")
    ]
    ids = [fight.ysolde.character_id, fight.thug.character_id]
    rows = [
        list(Character.objects.filter(pk__in=ids).order_by("pk").values()),
        list(BodyZone.objects.filter(character_id__in=ids).order_by("pk").values()),
        list(Weapon.objects.filter(character_id__in=ids).order_by("pk").values()),
        list(fight.encounter.participants.order_by("pk").values()),
        list(
            Declaration.objects.filter(encounter=fight.encounter)
            .order_by("pk")
            .values("round", "attacker", "target", "zone", "weapon", "action", "defense", "status")
        ),
    ]
    return log, rows


def _three_steps(client, fight, body, defense, roll):
    declared = client.post(
        f"/api/encounters/{fight.encounter.pk}/attacks/",
        {k: v for k, v in body.items() if k not in ("defense", "roll")},
    )
    assert declared.status_code == 201, declared.json()
    attack = declared.json()["id"]
    if defense:
        assert (
            client.post(f"/api/attacks/{attack}/defense/", {"defense": defense}).status_code == 200
        )
    rolled = client.post(f"/api/attacks/{attack}/roll/", {"roll": roll})
    assert rolled.status_code == 200, rolled.json()


def _compare(fight, run_three, run_one):
    """The state after the three steps and after the one call, each from the same start."""
    out = []
    for run in (run_three, run_one):
        with transaction.atomic():
            run()
            out.append(_state(fight))
            transaction.set_rollback(True)
    return out


@pytest.mark.parametrize(
    ("attacker", "action", "defense"),
    [
        ("thug", "fast", "parry"),
        ("thug", "mighty", "dodge"),
        ("thug", "precise", "block"),
        ("ysolde", "fast", "parry"),
        ("ysolde", "grapple", "dodge"),
        ("ysolde", "feint", None),
    ],
)
def test_one_call_writes_what_the_three_steps_write(fight, api_for, attacker, action, defense):
    gm = api_for(fight.table.gm)
    a, t = (fight.thug, fight.ysolde) if attacker == "thug" else (fight.ysolde, fight.thug)
    extra = {"weapon": fight.weapon(a).pk} if action in ("fast", "mighty", "precise") else {}
    for roll in (1, 2, 5, 17, 43, 71, 96, 99, 100):
        body = _body(fight, a, t, action, **extra)
        one = {**body, "roll": roll, **({"defense": defense} if defense else {})}

        def three(body=body, roll=roll):
            _three_steps(gm, fight, body, defense, roll)

        def single(one=one):
            r = gm.post(_url(fight), one)
            assert r.status_code == 201, r.json()
            kinds = [e["kind"] for e in r.json()["entries"]]
            assert kinds == (["declare", "defend", "roll"] if defense else ["declare", "roll"])
            assert r.json()["attack"]["status"] == "resolved"

        before = _state(fight)
        after_three, after_one = _compare(fight, three, single)
        assert after_three == after_one, roll
        assert after_one != before
        assert _state(fight) == before  # each run was rolled back


def test_server_dice_give_what_the_three_steps_give_for_the_same_seed(fight):
    gm = fight.table.gm
    zone = fight.zone(fight.ysolde, "chest")
    weapon = fight.weapon(fight.thug)
    for seed in range(12):

        def three(seed=seed):
            decl = declare_and_defend(
                fight.encounter,
                fight.thug,
                fight.ysolde,
                zone=zone,
                weapon=weapon,
                actor=gm,
                defender=gm,
                defense="dodge",
            )
            services.resolve(declaration=decl, actor=gm, rng=random.Random(seed))

        def one(seed=seed):
            _, entries = services.strike(
                encounter=fight.encounter,
                attacker=fight.thug,
                target=fight.ysolde,
                action="mighty",
                zone=zone,
                weapon=weapon,
                defense="dodge",
                actor=gm,
                rng=random.Random(seed),
            )
            assert not entries[-1].physical

        a, b = _compare(fight, three, one)
        assert a == b


def test_server_dice_when_no_roll_is_given(fight, api_for):
    r = api_for(fight.table.gm).post(
        _url(fight), _body(fight, fight.thug, fight.ysolde, defense="parry")
    )
    assert r.status_code == 201, r.json()
    rolled = r.json()["entries"][-1]
    assert rolled["kind"] == "roll" and not rolled["physical"] and 1 <= rolled["roll"] <= 100


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"defense": None}, "defense"),
        ({"defense": "duck"}, "defense"),
        ({"action": "feint", "zone": None}, "defense"),
        ({"roll": 0}, "roll"),
        ({"roll": 101}, "roll"),
        ({"roll": "x"}, "roll"),
        ({"attacker": 999_999}, "attacker"),
        ({"zone": 999_999}, "zone"),
        ({"weapon": 999_999}, "weapon"),
        ({"action": "punch"}, "action"),
    ],
)
def test_bad_input_is_a_400_naming_the_field_and_writes_nothing(fight, api_for, change, field):
    body = {**_body(fight, fight.thug, fight.ysolde, defense="parry", roll=43), **change}
    before = _state(fight)
    r = api_for(fight.table.gm).post(_url(fight), body)
    assert r.status_code == 400 and field in r.json(), r.json()
    assert _state(fight) == before


def test_it_refuses_what_the_fight_does_not_allow_and_writes_nothing(fight, api_for):
    gm = api_for(fight.table.gm)
    body = _body(fight, fight.thug, fight.ysolde, defense="parry", roll=43)
    services.declare_attack(
        encounter=fight.encounter,
        attacker=fight.thug,
        target=fight.ysolde,
        action="feint",
        actor=fight.table.gm,
    )
    before = _state(fight)
    waiting = gm.post(_url(fight), body)
    assert (
        waiting.status_code == 409 and "already has an attack waiting" in waiting.json()["detail"]
    )
    no_counter = gm.post(_url(fight), {**body, "counterattack": True})
    assert no_counter.status_code == 400 and "no counterattack" in no_counter.json()["detail"]
    itself = gm.post(_url(fight), {**body, "target": fight.thug.pk, "zone": None})
    assert itself.status_code == 400
    assert _state(fight) == before
    services.finish_encounter(encounter=fight.encounter, actor=fight.table.gm)
    over = gm.post(_url(fight), _body(fight, fight.ysolde, fight.thug, defense="parry"))
    assert over.status_code == 400 and "not running" in over.json()["detail"]


def test_only_who_controls_both_sides_strikes_in_one_call(fight, api_for, table):
    """The player plays Ysolde, not the thug's defense: the three steps need the GM for the
    defense, so one call needs both sides to be the caller's."""
    before = _state(fight)
    mine = _body(fight, fight.ysolde, fight.thug, defense="dodge", roll=43)
    player = api_for(table.player).post(_url(fight), mine)
    assert player.status_code == 403
    theirs = api_for(table.player).post(
        _url(fight), _body(fight, fight.thug, fight.ysolde, defense="dodge", roll=43)
    )
    assert theirs.status_code == 403
    assert api_for(table.outsider).post(_url(fight), mine).status_code == 404
    assert api_for(table.other_gm).post(_url(fight), mine).status_code == 404
    assert api_for(None).post(_url(fight), mine).status_code in (401, 403)
    assert _state(fight) == before
    assert api_for(table.gm).post(_url(fight), mine).status_code == 201


def test_a_player_hides_nothing_from_themself_but_sees_no_hidden_numbers(fight, api_for, table):
    """The GM's strike answer as the player would read it later: the log through the API
    keeps the hidden thug's numbers from the player."""
    r = api_for(table.gm).post(
        _url(fight), _body(fight, fight.thug, fight.ysolde, defense="parry", roll=43)
    )
    assert r.status_code == 201
    assert r.json()["entries"][-1]["details"] is not None  # the GM sees everything
    log = api_for(table.player).get(f"/api/encounters/{fight.encounter.pk}/events/")
    assert log.status_code == 200
    rolled = [e for e in log.json() if e["kind"] == "roll"]
    assert rolled and all(e["details"] is None for e in rolled)


def test_it_strikes_in_one_call_in_a_pinned_number_of_queries(
    fight, api_for, django_assert_num_queries
):
    """The encounter (locked, in the user's campaigns), the two participants, then both
    characters by pk, the zone, the weapon and the disciplines, locked in that order; three
    entries, each numbered by its own INSERT, the sheet's version stepped with its Vitality
    (the three requests: tests/combat/test_encounter_api.py)."""
    gm = api_for(fight.table.gm)
    body = _body(
        fight, fight.ysolde, fight.thug, weapon=fight.weapon(fight.ysolde).pk, defense="parry"
    )
    with django_assert_num_queries(STRIKE_QUERIES):
        r = gm.post(_url(fight), {**body, "roll": 43})
    assert r.status_code == 201


STRIKE_QUERIES = 17
