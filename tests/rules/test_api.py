"""The public rules API: seed examples through HTTP, bad input, throttling, schema."""

from __future__ import annotations

import random
from typing import Any

import pytest
from django.core.cache import cache
from django.core.management import call_command
from rest_framework.test import APIClient

from rules import ore
from rules.api import base as rules_api
from rules.models import DiceRoll
from sheets import randomness
from sheets.models import ApiToken

pytestmark = pytest.mark.django_db

STRIKE = {
    "strike": "fast",
    "attack_apt": 3,
    "attack_dsc": 3,
    "weapon_dmg": 4,
    "defense": "dodge",
    "defense_apt": 3,
    "defense_dsc": 2,
    "arm": 2,
}


@pytest.fixture(autouse=True)
def fresh_throttle() -> Any:
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def api() -> APIClient:
    return APIClient()


@pytest.fixture
def seeded(monkeypatch: pytest.MonkeyPatch) -> random.Random:
    rng = random.Random(7)
    monkeypatch.setattr(randomness, "RNG", rng)
    return rng


def post(api: APIClient, url: str, body: object) -> Any:
    return api.post(f"/api/rules/{url}", body, format="json")


# ------------------------------------------------------------------------------------------
# OMG


@pytest.mark.parametrize(
    ("roll", "degree", "abbr", "success", "exp", "fate", "total"),
    [
        (43, "success", None, True, 0, 0, 7),
        (70, "epic_success", "EpS", True, 1, 1, 17),
        (20, "epic_failure", "EpF", False, 1, -1, 12),
        (11, "dramatic_failure", "DrF", False, 0, 0, 2),
        (44, "dramatic_success", "DrS", True, 0, 0, 8),
        (88, "success_with_sacrifice", "SwS", True, 0, 0, 16),
        (100, "success_with_sacrifice", "SwS", True, 0, 0, 20),
        (82, "failure", None, False, 0, 0, 10),
    ],
)
def test_it_reads_a_70v20_check(api, roll, degree, abbr, success, exp, fate, total):
    response = post(api, "omg/check/", {"pro": 70, "dif": 20, "roll": roll})
    assert response.status_code == 200, response.json()
    assert response.json() == {
        "roll": roll,
        "pro": 70,
        "dif": 20,
        "degree": degree,
        "abbr": abbr,
        "success": success,
        "exp": exp,
        "fate": fate,
        "sum": total,
    }


@pytest.mark.parametrize(
    ("roll", "second"), [(43, {"roll": 34, "hit": True}), (82, {"roll": 28, "hit": False})]
)
def test_it_reads_the_fast_strikes_reversed_roll(api, roll, second):
    response = post(api, "omg/check/", {"pro": 70, "dif": 20, "roll": roll, "fast": True})
    assert response.json()["second"] == second


def test_it_leaves_second_out_of_a_plain_check(api):
    assert "second" not in post(api, "omg/check/", {"pro": 70, "dif": 20, "roll": 43}).json()


def test_it_rolls_with_the_server_dice_when_no_roll_is_given(api, seeded):
    expected = random.Random(7).randint(1, 100)
    response = post(api, "omg/check/", {"pro": 70, "dif": 20})
    assert response.status_code == 200
    assert response.json()["roll"] == expected


def test_it_counts_the_70v20_faces(api):
    body = api.get("/api/rules/omg/odds/", {"pro": 70, "dif": 20}).json()
    assert body["counts"] == {
        "success": 44,
        "failure": 44,
        "dramatic_success": 5,
        "dramatic_failure": 1,
        "epic_success": 1,
        "epic_failure": 1,
        "success_with_sacrifice": 4,
    }
    assert body["second_hit"] == 25
    assert body["faces"] == 100
    assert sum(body["counts"].values()) == 100


@pytest.mark.parametrize(
    ("strike", "apt", "pro"), [("fast", 3, 80), ("precise", 4, 85), ("mighty", 5, 90)]
)
@pytest.mark.parametrize(
    ("defense", "dapt", "dif"), [("dodge", 3, 25), ("parry", 4, 30), ("block", 5, 35)]
)
def test_it_derives_pro_and_dif_from_the_seed_fighter(api, strike, apt, pro, defense, dapt, dif):
    body = {
        **STRIKE,
        "strike": strike,
        "attack_apt": apt,
        "defense": defense,
        "defense_apt": dapt,
        "roll": 50,
    }
    response = post(api, "omg/strike/", body)
    assert response.status_code == 200, response.json()
    assert (response.json()["pro"], response.json()["dif"]) == (pro, dif)


def test_it_lands_both_hits_of_a_fast_strike(api):
    body = post(api, "omg/strike/", {**STRIKE, "roll": 43}).json()
    assert [(h["roll"], h["damage"]) for h in body["hits"]] == [(43, 4), (34, 5)]
    assert body["armor_wear"] == 2
    assert body["weapon_wear"] == 0
    assert body["counterattack"] is False


def test_it_grants_a_parry_its_counterattack(api):
    body = {**STRIKE, "strike": "mighty", "attack_apt": 5, "defense": "parry", "defense_apt": 4}
    result = post(api, "omg/strike/", {**body, "roll": 43}).json()
    assert result["hits"][0]["damage"] == 20
    assert result["counterattack"] is True


def test_it_gives_the_exact_damage_distribution(api):
    query = {k: str(v) for k, v in STRIKE.items()}
    body = api.get("/api/rules/omg/strike/odds/", query).json()
    assert (body["pro"], body["dif"]) == (80, 25)
    assert sum(body["total"].values()) == 100
    assert sum(body["first"].values()) == 100
    assert body["check"]["second_hit"] == body["faces"] - body["second_miss"]
    numerator, denominator = map(int, body["mean_damage_exact"].split("/"))
    assert numerator / denominator == pytest.approx(body["mean_damage"])


# ------------------------------------------------------------------------------------------
# The sibling systems


def test_it_breaks_michaels_tie_by_die_sizes(api):
    body = post(
        api,
        "ogs/opposed/",
        {
            "a": {"dice": ["d4", "d8", "d8"], "values": [1, 4, 6]},
            "b": {"dice": ["d6", "d6", "d6"], "values": [1, 4, 6]},
            "odds": True,
        },
    ).json()
    assert (body["winner"], body["decided_by"]) == ("a", "sizes")
    odds = body["odds"]
    assert odds["a"] + odds["b"] == pytest.approx(1)
    assert odds["exact"]["a"] == "33371/55296"


@pytest.mark.parametrize(
    ("dice", "values", "difficulty", "total", "success", "stages"),
    [
        (["d4", "d8", "d8"], [1, 4, 6], 8, 11, True, 1),
        (["d6", "d8", "d10"], [4, 5, 7], 8, 16, True, 4),
        (["d6", "d6"], [1, 2], 8, 3, False, 0),
    ],
)
def test_it_totals_an_ogs_check(api, dice, values, difficulty, total, success, stages):
    body = post(
        api, "ogs/check/", {"dice": dice, "values": values, "flat": 0, "difficulty": difficulty}
    ).json()
    assert (body["total"], body["success"], body["stages"]) == (total, success, stages)


def test_it_gives_ogs_check_odds_as_floats_and_fractions(api):
    body = api.get("/api/rules/ogs/odds/?dice=d4,d8,d8&difficulty=8").json()
    assert body["exact"]["success"] == "111/128"
    assert body["success"] == 111 / 128
    assert sum(body["totals"].values()) == pytest.approx(1)


@pytest.mark.parametrize(
    ("body", "dice"),
    [
        ({"dice": ["d12"], "stages": 2, "open": False}, ["d8", "d8"]),
        ({"dice": ["d6"] * 10, "stages": 2, "open": True}, ["d10"] * 10),
        ({"dice": ["d4", "d8", "d12"], "stages": 1}, ["d4", "d8", "d8", "d6"]),
    ],
)
def test_it_increases_ogs_dice(api, body, dice):
    assert post(api, "ogs/increase/", body).json() == {"dice": dice}


@pytest.mark.parametrize(
    ("body", "made"),
    [
        ({"dice": ["d12"] * 11, "stages": 1, "open": True}, 22),
        ({"dice": ["d12"] * 20, "stages": 100, "open": True}, 520),
        ({"dice": ["d12"], "stages": 100}, 26),
    ],
)
def test_it_caps_every_ogs_die_increase_at_twenty_dice(api, body, made):
    response = post(api, "ogs/increase/", body)
    assert response.status_code == 400, response.json()
    assert response.json() == {
        "non_field_errors": [f"at most 20 dice in one roll: this increase makes {made} dice"]
    }


def test_it_totals_an_open_roll(api):
    body = post(api, "ogs/open/", {"dice": ["d6"] * 3, "values": [1, 5, 6], "flat": 2}).json()
    assert body["total"] == 14


def test_it_reads_john_does_pool(api):
    body = post(
        api,
        "ore/roll/",
        {
            "pool": 7,
            "penalty": 0,
            "expert": None,
            "master": False,
            "difficulty": 0,
            "dice": [3, 4, 4, 4, 6, 8, 10],
        },
    ).json()
    assert body["rolled"] == 7
    assert body["sets"] == [{"width": 3, "height": 4}]
    assert body["best"] == {"width": 3, "height": 4}
    assert body["loose"] == [3, 6, 8, 10]
    assert (body["success"], body["location"]) == (True, "left arm")


@pytest.mark.parametrize(
    ("body", "rolled"),
    [
        ({"dice": [3, 4, 4, 4, 6, 8, 10]}, 7),
        ({"dice": [2, 5, 9], "expert": 5}, 4),
        ({"dice": [2, 5, 9], "master": True}, 4),
    ],
)
def test_it_counts_the_dice_of_a_roll_sent_without_a_pool(api, body, rolled):
    assert post(api, "ore/roll/", body).json()["rolled"] == rolled
    assert post(api, "ore/gobble/", body).json()["before"]["rolled"] == rolled
    multiple = post(api, "ore/multiple/", {**body, "actions": 1}).json()
    assert multiple["roll"]["rolled"] == rolled
    timed = {"timed": True, "members": [body, {"dice": [1, 2]}]}
    assert post(api, "ore/cooperate/", timed).json()["rolls"][0]["rolled"] == rolled


def test_it_puts_john_before_the_mugger(api):
    body = post(
        api, "ore/contest/", {"a": {"dice": [3, 4, 4, 4, 6, 8, 10]}, "b": {"dice": [1, 5, 7, 7, 8]}}
    ).json()
    assert body["first"] == "a"
    assert body["b"]["best"] == {"width": 2, "height": 7}


def test_it_caps_master_lis_pool_at_ten(api, seeded):
    body = post(api, "ore/roll/", {"pool": 12, "penalty": 2}).json()
    assert body["rolled"] == 10
    assert len(body["dice"]) == 10


def test_it_reports_the_master_dies_chosen_face(api):
    body = post(api, "ore/roll/", {"pool": 4, "master": True, "dice": [2, 5, 9]}).json()
    assert body["master_value"] == 9
    assert body["best"] == {"width": 2, "height": 9}


def test_it_gives_ore_odds(api):
    body = api.get("/api/rules/ore/odds/", {"pool": 2}).json()
    assert body["exact"]["success"] == "1/10"
    contest = api.get("/api/rules/ore/contest/odds/", {"a_pool": 7, "b_pool": 5}).json()
    total = sum(contest[k] for k in ("a_first", "b_first", "simultaneous", "neither"))
    assert total == pytest.approx(1)


@pytest.mark.parametrize(
    ("extra", "effective"),
    [
        ({"mod": 2, "self_buff": 2}, 14),  # +2 and +2 stack to +3
        ({"mod": 2, "self_buff": 3}, 16),  # +2 and +3 stack to +4
        ({"mod": 1}, 10),
        ({"penalty": 3}, 4),  # never below a d4
    ],
)
def test_it_stacks_simple_die_bonuses(api, extra, effective):
    body = post(api, "sds/check/", {"skill": 8, **extra, "skill_rolls": [1], "flag_rolls": [5]})
    assert body.status_code == 200, body.json()
    assert body.json()["effective_skill"] == effective


def test_it_follows_the_heroic_chain(api):
    body = post(
        api,
        "sds/check/",
        {
            "skill": 8,
            "mod": 0,
            "self_buff": 0,
            "party_buff": 0,
            "focus": 0,
            "penalty": 0,
            "unskilled": False,
            "difficulty": {"die": 10},
            "skill_rolls": [5],
            "flag_rolls": [10, 20, 3],
            "gm_roll": 7,
            "odds": True,
        },
    ).json()
    assert body["die"] == "d8"
    assert (body["skill_result"], body["multiplier"], body["result"]) == (5, 100, 500)
    assert (body["flags"], body["gm_result"], body["winner"]) == (["heroic"], 7, "player")
    assert body["odds"]["player"] + body["odds"]["gm"] == pytest.approx(1)


def test_it_wins_a_hard_8_with_skill_4_only_by_a_heroic_flag(api):
    body = api.get("/api/rules/sds/odds/", {"skill": 4, "hard": 8}).json()
    assert body["exact"]["player"] == "1/10"


@pytest.mark.parametrize(
    ("damage", "dr", "lethality", "points", "rounded_up", "lethal", "nonlethal"),
    [
        ("Grt", "Avg+", "cutting", 3, False, 2, 1),
        ("Avg", "Gd", "deep_puncturing", 1, True, 0, 1),
        ("Ext+", "Avg", "cutting", 15, False, 10, 5),
        ("Def", "Avg", "cutting", 1, True, 0, 1),
        ("Pth+", "Avg", "cutting", 0, False, 0, 0),
    ],
)
def test_it_reads_the_ok_rpg_damage_table(
    api, damage, dr, lethality, points, rounded_up, lethal, nonlethal
):
    body = post(api, "okrpg/damage/", {"damage": damage, "dr": dr, "lethality": lethality}).json()
    assert (body["points"], body["rounded_up"]) == (points, rounded_up)
    assert (body["lethal"], body["nonlethal"]) == (lethal, nonlethal)


def test_it_plays_out_an_action_point_round(api):
    combatants = [
        {"name": "A", "successes": 7, "carry": 0},
        {"name": "B", "successes": 4, "carry": 2},
        {"name": "C", "successes": 2},
    ]
    body = post(api, "okrpg/round/", {"combatants": combatants}).json()
    assert body["order"] == ["A", "B", "A", "B"]
    assert body["carry"] == {"A": 1, "B": 0, "C": 2}


def test_it_gives_the_tide_odds(api):
    body = api.get("/api/rules/okrpg/odds/", {"tide": "worse"}).json()
    assert (body["exact"]["setback"], body["exact"]["edge"]) == ("11/36", "1/36")
    rolled = post(api, "okrpg/tide/", {"tide": "worse", "dice": [6, 2]}).json()
    assert (rolled["value"], rolled["recoveries"]) == (2, 1)


# ------------------------------------------------------------------------------------------
# Bad input: always a 400 naming the problem, never a 500


@pytest.mark.parametrize(
    ("url", "body", "field"),
    [
        ("omg/check/", {"pro": "70", "dif": 20}, "pro"),
        ("omg/check/", {"pro": 70, "dif": True}, "dif"),
        ("omg/check/", {"pro": 70, "dif": 20, "roll": 4.5}, "roll"),
        ("omg/check/", {"pro": 101, "dif": 20}, "pro"),
        ("omg/check/", {"pro": 70, "dif": 20, "roll": 0}, "roll"),
        ("omg/check/", {"pro": 70, "dif": 20, "roll": 10**40}, "roll"),
        ("omg/check/", {"pro": 70}, "dif"),
        ("omg/check/", {"pro": 70, "dif": 20, "fast": "yes"}, "fast"),
        ("omg/check/", {"pro": 70, "dif": 20, "fast": 1}, "fast"),
        ("omg/check/", [70, 20], "non_field_errors"),
        ("omg/check/", "70v20", "non_field_errors"),
        ("omg/strike/", {**STRIKE, "strike": "stab"}, "strike"),
        ("omg/strike/", {**STRIKE, "arm": 6}, "arm"),
        ("omg/strike/", {**STRIKE, "attack_apt": None}, "attack_apt"),
        ("ogs/check/", {"dice": ["d7", "d8"]}, "dice"),
        ("ogs/check/", {"dice": "d4 d8"}, "dice"),
        ("ogs/check/", {"dice": ["d4"]}, "dice"),
        ("ogs/check/", {"dice": ["d4", "d8"], "values": [5, 1]}, "non_field_errors"),
        ("ogs/check/", {"dice": ["d4", "d8"], "values": [1]}, "non_field_errors"),
        ("ogs/check/", {"dice": ["d4"] * 21}, "dice"),
        ("ogs/opposed/", {"a": {"dice": ["d4", "d8"]}, "b": 5}, "b"),
        (
            "ogs/opposed/",
            {"a": {"dice": ["d4"] * 9}, "b": {"dice": ["d4"] * 9}, "odds": True},
            "non_field_errors",
        ),
        (
            "ogs/increase/",
            {"dice": ["d12"], "stages": 2, "open": True, "target": 0},
            "non_field_errors",
        ),
        ("ore/roll/", {"pool": 7, "dice": [1, 2, 3]}, "non_field_errors"),
        ("ore/roll/", {"pool": 7, "dice": [0, 2, 3, 4, 5, 6, 7]}, "dice"),
        ("ore/roll/", {"penalty": 1}, "dice"),
        ("ore/roll/", {"pool": 5, "expert": 3, "master": True}, "non_field_errors"),
        ("ore/contest/", {"a": {"dice": [1, 1]}}, "b"),
        ("sds/check/", {"skill": 7}, "non_field_errors"),
        ("sds/check/", {"skill": 8, "difficulty": {"die": 10, "hard": 8}}, "difficulty"),
        ("sds/check/", {"skill": 8, "flag_rolls": [10]}, "non_field_errors"),
        ("sds/check/", {"skill": 8, "difficulty": {"hard": 8}, "gm_roll": 3}, "non_field_errors"),
        ("okrpg/damage/", {"damage": "Huge", "dr": "Avg"}, "damage"),
        ("okrpg/damage/", {"damage": 5, "dr": "Avg"}, "damage"),
        ("okrpg/damage/", {"damage": "Grt", "dr": "Avg", "lethality": "sharp"}, "lethality"),
        ("okrpg/round/", {"combatants": [{"name": "A", "successes": 3}] * 2}, "non_field_errors"),
        ("okrpg/round/", {"combatants": []}, "combatants"),
        ("okrpg/tide/", {"tide": "worse", "dice": [6]}, "non_field_errors"),
        ("ore/gobble/", {"dice": [1, 1], "hits": 11}, "hits"),
        ("ore/gobble/", {"hits": 1}, "dice"),
        ("ore/multiple/", {"dice": [1, 1], "actions": 0}, "actions"),
        ("ore/multiple/", {"dice": [1, 1]}, "actions"),
        ("ore/multiple/", {"dice": [1, 1], "actions": 2, "charge": True}, "non_field_errors"),
        ("ore/multiple/", {"dice": [1, 1], "actions": 2, "odds": True}, "non_field_errors"),
        ("ore/cooperate/", {"members": [{"pool": 3}]}, "members"),
        ("ore/cooperate/", {"members": [{"pool": 3}, {"pool": -1}]}, "members"),
        ("ore/cooperate/", {"members": [{"pool": 3}, {"dice": [2, 2]}]}, "non_field_errors"),
        (
            "ore/cooperate/",
            {"members": [{"pool": 3}, {"pool": 4}], "dice": [1, 2]},
            "non_field_errors",
        ),
        (
            "ore/cooperate/",
            {"timed": True, "members": [{"dice": [1]}, {"dice": [2]}], "odds": True},
            "non_field_errors",
        ),
    ],
)
def test_it_answers_bad_input_with_a_400_per_field(api, url, body, field):
    response = post(api, url, body)
    assert response.status_code == 400, response.content
    assert field in response.json(), response.json()


_TYPED_OGS = {"dice": ["d4", "d6", "d8"], "values": [2, 4, 1], "reroll_ones": True}
_TYPED_SDS = {"skill": 8, "difficulty": {"die": 10}, "skill_rolls": [5], "flag_rolls": [3]}
_TIED_OGS = {"dice": ["d6", "d6"], "values": [3, 4]}


@pytest.mark.parametrize(
    ("url", "body", "field"),
    [
        ("ogs/check/", _TYPED_OGS, "rerolls"),
        (
            "ogs/opposed/",
            {"a": _TYPED_OGS, "b": {"dice": ["d6", "d6"], "values": [2, 3]}},
            "rerolls",
        ),
        ("ogs/opposed/", {"a": _TIED_OGS, "b": _TIED_OGS}, "rolloffs"),
        ("ogs/opposed/", {"a": _TIED_OGS, "b": _TIED_OGS, "rolloffs": [[5, 5]]}, "rolloffs"),
        (
            "ogs/check/",
            {"dice": ["d4", "d6", "d8"], "reroll_ones": True, "rerolls": [3]},
            "rerolls",
        ),
        ("sds/check/", _TYPED_SDS, "gm_roll"),
        ("sds/check/", {"skill": 8, "skill_rolls": [5]}, "flag_rolls"),
        ("sds/check/", {"skill": 8, "flag_rolls": [3]}, "skill_rolls"),
    ],
)
def test_it_never_tops_up_typed_in_dice_with_server_dice(api, seeded, url, body, field):
    response = post(api, url, body)
    assert response.status_code == 400, response.json()
    assert response.json()["non_field_errors"][0].startswith(f"{field}: "), response.json()


def test_it_reads_typed_in_rolloffs_until_a_pair_differs(api, seeded):
    body = {"a": _TIED_OGS, "b": _TIED_OGS, "rolloffs": [[5, 5], [2, 9]]}
    result = post(api, "ogs/opposed/", body).json()
    assert (result["winner"], result["decided_by"]) == ("b", "rolloff")
    assert result["rolloffs"] == [[5, 5], [2, 9]]
    # Rolled whole by the server, the roll-offs are the server's too.
    rolled = post(api, "ogs/opposed/", {"a": {"dice": ["d6", "d6"]}, "b": {"dice": ["d6", "d6"]}})
    assert rolled.status_code == 200, rolled.json()


_MIXED = "the rest of the roll is typed in, and typed-in dice are never mixed with server dice."


def _side(field: str) -> list[str]:
    return [f"Type this side's {field} too: {_MIXED}"]


@pytest.mark.parametrize(
    ("url", "body", "errors"),
    [
        (
            "ogs/opposed/",
            {"a": _TIED_OGS, "b": {"dice": ["d6", "d6"]}},
            {"b": {"values": _side("values")}},
        ),
        (
            "ogs/opposed/",
            {"a": {"dice": ["d6", "d6"]}, "b": {"dice": ["d6", "d6"]}, "rolloffs": [[1, 2]]},
            {"a": {"values": _side("values")}, "b": {"values": _side("values")}},
        ),
        (
            "ore/contest/",
            {"a": {"dice": [3, 4, 4, 4, 6, 8, 10]}, "b": {"pool": 5}},
            {"b": {"dice": _side("dice")}},
        ),
        (
            "ore/cooperate/",
            {"timed": True, "members": [{"dice": [3, 3, 8]}, {"pool": 3}, {"dice": [8, 1]}]},
            {
                "members": [
                    {},
                    {
                        "dice": [
                            "Type this member's dice too: the others' are typed in, and "
                            "typed-in dice are never mixed with server dice."
                        ]
                    },
                    {},
                ]
            },
        ),
    ],
)
def test_it_wants_every_side_of_a_roll_typed_in_or_none(api, seeded, url, body, errors):
    response = post(api, url, body)
    assert response.status_code == 400, response.json()
    assert response.json() == errors


def test_it_logs_nothing_when_typed_in_dice_are_missing_one(table, api, api_for, seeded):
    for url, body in [("ogs/check/", _TYPED_OGS), ("sds/check/", _TYPED_SDS)]:
        body = {**body, "campaign": table.campaign.pk}
        assert post(api_for(table.player), url, body).status_code == 400
    assert not DiceRoll.objects.exists()
    # Every die typed in reads as before; none typed in, the server rolls them all.
    assert post(api, "ogs/check/", {**_TYPED_OGS, "rerolls": [6]}).json()["total"] == 12
    rolled = post(api, "sds/check/", {"skill": 8, "difficulty": {"die": 10}}).json()
    assert rolled["gm_roll"] is not None


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("omg/odds/?pro=70&dif=abc", "dif"),
        ("omg/odds/?pro=70.0&dif=20", "pro"),
        ("omg/odds/?pro=99999999999999999999&dif=20", "pro"),
        ("omg/odds/?dif=20", "pro"),
        ("omg/strike/odds/?strike=fast", "attack_apt"),
        ("ogs/odds/?dice=d4,d9", "dice"),
        ("ogs/odds/?dice=d6&open=true&difficulty=4", "non_field_errors"),
        ("ogs/opposed/odds/?a=" + ",".join(["d12"] * 9) + "&b=d4,d4", "a"),
        ("ore/odds/?pool=5&master=maybe", "master"),
        ("sds/odds/?skill=8&die=10&hard=8", "non_field_errors"),
        ("okrpg/odds/?tide=awful", "tide"),
    ],
)
def test_it_answers_bad_queries_with_a_400_per_field(api, query, field):
    response = api.get(f"/api/rules/{query}")
    assert response.status_code == 400, response.content
    assert field in response.json(), response.json()


@pytest.mark.parametrize(
    "query",
    [
        "omg/odds/?pro=7\u00b2&dif=20",  # superscript two: isdigit() but not int()
        "omg/odds/?pro=\u0667\u0660&dif=20",  # Arabic-Indic 70: int() reads it
        "omg/odds/?pro=\uff17\uff10&dif=20",  # full-width 70
        "omg/odds/?pro=--70&dif=20",
        "ore/odds/?pool=\u09ed",  # Bengali 7
        "sds/odds/?skill=\u0668",  # Arabic-Indic 8
    ],
)
def test_it_answers_digits_of_other_scripts_with_a_400(api, query):
    response = api.get(f"/api/rules/{query}")
    assert response.status_code == 400, response.content
    assert list(response.json().values()) == [["Must be a whole number, such as 7."]]


@pytest.mark.parametrize("die", ["d\u00b2", "d\u0668", "d\uff18"])
def test_it_answers_a_die_with_other_digits_with_a_400(api, die):
    for response in (
        api.get("/api/rules/ogs/odds/", {"dice": f"d4,{die}"}),
        post(api, "ogs/check/", {"dice": ["d4", die]}),
    ):
        assert response.status_code == 400, response.content
        assert response.json() == {"dice": {"1": [f"a die is written like 'd8', got '{die}'"]}}


def test_it_names_the_dice_limit_of_exact_opposed_odds(api):
    eight, nine = ",".join(["d12"] * 8), ",".join(["d12"] * 9)
    assert api.get(f"/api/rules/ogs/opposed/odds/?a={eight}&b={eight}").status_code == 200
    response = api.get(f"/api/rules/ogs/opposed/odds/?a=d4,d4&b={nine}")
    assert response.status_code == 400
    assert response.json() == {
        "b": [
            "Exact opposed odds are offered for up to 8 dice a side (they track every sorted "
            "set of faces, which grows fast)."
        ]
    }
    body = {"a": {"dice": ["d4"] * 9}, "b": {"dice": ["d4", "d4"]}, "odds": True}
    assert post(api, "ogs/opposed/", body).json() == {
        "non_field_errors": ["exact opposed odds are offered for up to 8 dice a side, got 9"]
    }


def test_it_documents_the_dice_limit_of_exact_opposed_odds(api):
    schema = api.get("/api/schema/", {"format": "json"}).json()
    params = schema["paths"]["/api/rules/ogs/opposed/odds/"]["get"]["parameters"]
    side_a = next(p for p in params if p["name"] == "a")
    assert "At most 8 dice a side." in side_a["description"]
    assert side_a["schema"]["maxItems"] == 8
    opposed = schema["components"]["schemas"]["OgsOpposedRequestRequest"]
    assert "up to 8 dice a side" in opposed["properties"]["odds"]["description"]


def test_it_answers_malformed_json_with_a_400(api):
    response = api.post("/api/rules/omg/check/", b'{"pro": 70,', content_type="application/json")
    assert response.status_code == 400


def test_it_needs_no_login(api):
    assert post(api, "omg/check/", {"pro": 70, "dif": 20, "roll": 43}).status_code == 200


def test_it_serves_logged_in_users_too(api_for, django_user_model):
    user = django_user_model.objects.create_user("reader", password="a-long-pass-phrase")
    response = api_for(user).post(
        "/api/rules/omg/check/", {"pro": 70, "dif": 20, "roll": 43}, format="json"
    )
    assert response.status_code == 200


# ------------------------------------------------------------------------------------------
# Throttling and the schema


def test_it_throttles_anonymous_callers_with_a_clear_message(api, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "rules_anon": "2/min",
        },
    }
    body = {"pro": 70, "dif": 20, "roll": 43}
    assert [post(api, "omg/check/", body).status_code for _ in range(2)] == [200, 200]
    response = post(api, "omg/check/", body)
    assert response.status_code == 429
    assert "slow down" in response.json()["detail"]
    assert "Retry-After" in response


def test_it_throttles_users_by_their_own_rate(api_for, settings, django_user_model):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "rules_anon": "1/min",
            "rules_user": "3/min",
        },
    }
    client = api_for(django_user_model.objects.create_user("busy", password="a-long-pass-phrase"))
    codes = [
        client.get("/api/rules/omg/odds/", {"pro": 70, "dif": 20}).status_code for _ in range(4)
    ]
    assert codes == [200, 200, 200, 429]


def test_it_documents_every_rules_endpoint(tmp_path):
    # Whether the whole schema is valid OpenAPI is test_platform's to check, once.
    out = tmp_path / "schema.yml"
    call_command("spectacular", "--fail-on-warn", "--file", str(out))
    schema = out.read_text()
    from rules.api.urls import urlpatterns

    for pattern in urlpatterns:
        assert f"/api/rules/{pattern.pattern}" in schema, pattern.pattern
    assert "OgsCheckOddsExact" in schema
    assert "70 v 20, a fast strike rolling 43" in schema
    assert "Master Li's three actions" in schema
    assert "Each rolls alone against the clock" in schema


# ------------------------------------------------------------------------------------------
# ORE: gobble, multiple actions, cooperation

MUGGER = [1, 5, 7, 7, 8]
LI = [1, 1, 3, 5, 5, 5, 7, 9, 9, 10]


def test_it_gobbles_the_muggers_set(api):
    body = post(api, "ore/gobble/", {"dice": MUGGER}).json()
    assert body["before"]["best"] == {"width": 2, "height": 7}
    after = body["after"]
    assert (after["best"], after["success"], after["gobbled"]) == (None, False, [7])
    assert after["loose"] == [1, 5, 7, 8]


def test_it_gobbles_one_die_per_hit_from_the_tallest_set(api):
    body = post(api, "ore/gobble/", {"dice": [2, 2, 2, 9, 9, 9], "hits": 3}).json()
    assert body["after"]["gobbled"] == [9, 9, 2]
    assert body["after"]["sets"] == [{"width": 2, "height": 2}]
    untouched = post(api, "ore/gobble/", {"dice": MUGGER, "hits": 0}).json()
    assert untouched["after"] == untouched["before"]


def test_it_gobbles_a_server_roll(api, seeded):
    body = post(api, "ore/gobble/", {"pool": 10, "hits": 2, "difficulty": 3}).json()
    assert body["before"]["rolled"] == body["after"]["rolled"] == 10
    gone = len(body["after"]["gobbled"])
    assert len(body["after"]["faces"]) == 10 - gone


def test_it_gives_master_li_a_set_for_each_of_his_three_actions(api):
    body = post(
        api,
        "ore/multiple/",
        {"pool": 12, "actions": 3, "charge": True, "dice": LI, "odds": True},
    ).json()
    assert (body["penalty"], body["roll"]["rolled"]) == (2, 10)
    assert body["assigned"] == [
        {"width": 3, "height": 5},
        {"width": 2, "height": 9},
        {"width": 2, "height": 1},
    ]
    assert body["every_action"] is True
    odds = body["odds"]
    expected = ore.sets_odds(ore.OrePool(10)).all_actions(3)
    assert odds["exact"]["all_actions"] == f"{expected.numerator}/{expected.denominator}"
    assert odds["all_actions"] == pytest.approx(float(expected))
    assert sum(odds["sets"].values()) == pytest.approx(1)


def test_it_leaves_an_action_without_a_set_empty(api):
    body = post(api, "ore/multiple/", {"actions": 2, "dice": [4, 4, 6], "difficulty": 3}).json()
    assert body["assigned"] == [{"width": 2, "height": 4}, None]
    assert (body["every_action"], body["penalty"]) == (False, 0)
    odds = post(api, "ore/multiple/", {"pool": 2, "actions": 2, "odds": True}).json()["odds"]
    assert (odds["all_actions"], odds["exact"]["sets"]) == (0, {"0": "9/10", "1": "1/10"})


def test_it_rolls_cooperating_pools_as_one(api, seeded):
    members = [{"pool": 4, "expert": 10}, {"pool": 5, "master": True}]
    body = post(api, "ore/cooperate/", {"members": members, "odds": True}).json()
    assert body["pool"] == {"pool": 9, "penalty": 0, "expert": None, "master": True}
    assert len(body["roll"]["dice"]) == 8 and body["roll"]["master_value"] is not None
    assert (body["timed"], body["rolls"], body["success"]) == (False, [], True)
    assert body["odds"]["exact"]["success"] == "1/1"  # 8 dice and a master die always pair


def test_it_caps_cooperating_pools_at_ten(api):
    members = [{"pool": 6}, {"pool": 7, "penalty": 1}]
    body = post(api, "ore/cooperate/", {"members": members, "dice": LI}).json()
    assert (body["pool"]["pool"], body["roll"]["rolled"]) == (13, 10)
    assert body["best"] == {"width": 3, "height": 5}


@pytest.mark.parametrize(
    ("rolls", "best"),
    [
        ([[3, 3, 8], [8, 8, 1]], {"width": 3, "height": 8}),
        ([[3, 8], [8, 1]], None),  # nobody rolled a set alone
    ],
)
def test_it_reads_timed_cooperation_together(api, rolls, best):
    members = [{"dice": r} for r in rolls]
    body = post(api, "ore/cooperate/", {"timed": True, "members": members}).json()
    assert (body["best"], body["success"]) == (best, best is not None)
    assert (body["pool"], body["roll"]) == (None, None)
    assert [r["faces"] for r in body["rolls"]] == [sorted(r) for r in rolls]


# ------------------------------------------------------------------------------------------
# Logging API rolls in a campaign


LOGGED: list[tuple[str, dict[str, Any], str, bool]] = [
    ("omg/check/", {"pro": 70, "dif": 20, "roll": 43}, "omg", True),
    ("omg/strike/", {**STRIKE, "roll": 43}, "omg", True),
    ("ogs/check/", {"dice": ["d4", "d8"]}, "ogs", False),
    ("ogs/open/", {"dice": ["d6"], "values": [3]}, "ogs", True),
    ("ore/roll/", {"pool": 7}, "ore", False),
    ("ore/multiple/", {"dice": [4, 4, 6], "actions": 2}, "ore", True),
    ("sds/check/", {"skill": 8, "skill_rolls": [5], "flag_rolls": [3]}, "sds", True),
    ("okrpg/tide/", {"tide": "normal"}, "okrpg", False),
]


@pytest.mark.parametrize(("url", "body", "system", "physical"), LOGGED)
@pytest.mark.parametrize("who", ["gm", "player"])
def test_it_logs_a_members_roll_in_the_campaign(
    table, api_for, seeded, url, body, system, physical, who
):
    user = getattr(table, who)
    campaign = table.campaign.pk
    response = api_for(user).post(
        f"/api/rules/{url}", {**body, "campaign": campaign, "note": "Sneak"}, format="json"
    )
    assert response.status_code == 200, response.json()
    roll = DiceRoll.objects.get()
    assert (roll.campaign_id, roll.roller, roll.system) == (campaign, user, system)
    assert (roll.source, roll.physical, roll.note) == ("api", physical, "Sneak")


def test_it_logs_nothing_without_a_campaign(table, api_for):
    response = api_for(table.player).post(
        "/api/rules/omg/check/", {"pro": 70, "dif": 20}, format="json"
    )
    assert response.status_code == 200
    assert not DiceRoll.objects.exists()


@pytest.mark.parametrize("who", ["anonymous", "outsider", "other_gm"])
def test_it_answers_404_to_a_roll_logged_in_someone_elses_campaign(table, api_for, who):
    user = None if who == "anonymous" else getattr(table, who)
    for url, body, _, _ in LOGGED:
        response = api_for(user).post(
            f"/api/rules/{url}", {**body, "campaign": table.campaign.pk}, format="json"
        )
        assert response.status_code == 404, url
        assert "campaigns" in response.json()["detail"]
    assert not DiceRoll.objects.exists()


def test_it_shows_api_rolls_in_the_campaigns_dice_log(table, api_for, client_for):
    body = {"dice": [3, 4, 4, 4, 6, 8, 10], "campaign": table.campaign.pk, "note": "<b>Hit</b>"}
    assert post(api_for(table.player), "ore/roll/", body).status_code == 200
    html = client_for(table.gm).get(f"/dice/campaigns/{table.campaign.pk}/").text
    assert "3x4 to the left arm" in html and "via the API" in html
    assert "&lt;b&gt;Hit&lt;/b&gt;" in html and "<b>Hit</b>" not in html


def test_it_logs_a_retried_roll_once(table):
    _, key = ApiToken.objects.create_token(user=table.player, name="table app")
    client = APIClient()
    headers = {"Authorization": f"Token {key}", "Idempotency-Key": "roll-1"}
    body = {"pro": 70, "dif": 20, "campaign": table.campaign.pk}
    first = client.post("/api/rules/omg/check/", body, format="json", headers=headers)
    again = client.post("/api/rules/omg/check/", body, format="json", headers=headers)
    assert first.status_code == again.status_code == 200
    assert again.json() == first.json()
    assert DiceRoll.objects.count() == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"campaign": "1"}, "campaign"),
        ({"campaign": 0}, "campaign"),
        ({"campaign": 2**63}, "campaign"),
        ({"campaign": 1, "note": "x" * 81}, "note"),
    ],
)
def test_it_checks_the_campaign_field(table, api_for, body, field):
    response = post(api_for(table.gm), "omg/check/", {"pro": 70, "dif": 20, **body})
    assert response.status_code == 400
    assert field in response.json()


def test_it_rolls_the_servers_dice_from_the_one_generator(monkeypatch):
    """The rules API's and the dice pages' dice are the services' (sheets.randomness)."""
    monkeypatch.setattr(randomness, "RNG", random.Random(7))
    assert rules_api.server_rng() is randomness.RNG
