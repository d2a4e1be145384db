"""OK RPG engine: rank scale, damage table, conditions, recovery, Tide, action points."""

from __future__ import annotations

import doctest
import json
import random
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rules import okrpg
from rules.engine.errors import DiceError, InvalidChoice, InvalidScore, RulesError

ranks = st.integers(-12, 20)


# --- rank scale ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "half", "number"),
    [
        ("Pth", -4, Fraction(1, 5)),
        ("Pth+", -3, Fraction(3, 10)),
        ("Def", -2, Fraction(1, 2)),
        ("Def+", -1, Fraction(7, 10)),
        ("Avg", 0, Fraction(1)),
        ("Avg+", 1, Fraction(3, 2)),
        ("Gd", 2, Fraction(2)),
        ("Gd+", 3, Fraction(3)),
        ("Grt", 4, Fraction(5)),
        ("Grt+", 5, Fraction(7)),
        ("Ext", 6, Fraction(10)),
        ("Ext+", 7, Fraction(15)),
        ("Her", 8, Fraction(20)),
        ("Her+", 9, Fraction(30)),
        ("Leg", 10, Fraction(50)),
        ("Leg+", 11, Fraction(70)),
        ("Mth", 12, Fraction(100)),
        ("Mth+", 13, Fraction(150)),
    ],
)
def test_it_reads_the_rank_scale(name: str, half: int, number: Fraction) -> None:
    rank = okrpg.parse_rank(name)
    assert (rank.half, rank.number, rank.name) == (half, number, name)


@pytest.mark.parametrize(
    ("text", "half"), [("great", 4), ("Gt+", 5), (" avg ", 0), ("MTH", 12), ("Good+", 3)]
)
def test_it_reads_rank_aliases(text: str, half: int) -> None:
    assert okrpg.parse_rank(text).half == half


def test_it_extends_the_scale_below_pathetic() -> None:
    assert okrpg.scale_number(-5) == Fraction(3, 20)
    assert okrpg.scale_number(-6) == Fraction(1, 10)


# Seed table: attribute, DR, recovery per round, healing per week (0.3 and 0.7 as the scale has
# them: docs/rules.md, "The scale").
@pytest.mark.parametrize(
    ("attribute", "dr", "recovery", "healing"),
    [
        ("Def", "Def+", Fraction(3, 10), Fraction(1, 2)),
        ("Avg", "Avg", Fraction(1, 2), Fraction(7, 10)),
        ("Gd", "Avg+", Fraction(7, 10), Fraction(1)),
        ("Grt", "Gd", Fraction(1), Fraction(3, 2)),
        ("Ext", "Gd+", Fraction(3, 2), Fraction(2)),
        ("Her", "Grt", Fraction(2), Fraction(3)),
        ("Leg", "Grt+", Fraction(3), Fraction(5)),
        ("Mth", "Ext", Fraction(5), Fraction(7)),
    ],
)
def test_it_follows_the_toughness_table(
    attribute: str, dr: str, recovery: Fraction, healing: Fraction
) -> None:
    assert okrpg.damage_resistance(attribute).name == dr
    assert okrpg.recovery_rate(attribute) == recovery
    assert okrpg.healing_rate(attribute) == healing


# --- damage ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("net", "points", "rounded_up"),
    [
        (-4, 0, False),
        (-3, 0, False),
        (-2, 1, True),  # -1 rank: 1*
        (-1, 1, True),
        (0, 1, False),  # even
        (1, 2, True),  # +1 HR: 2*
        (2, 2, False),  # +1 rank
        (3, 3, False),  # +3 HR
        (4, 5, False),  # +2 ranks: Impaired
        (5, 7, False),  # +5 HR: Down
        (6, 10, False),  # +3 ranks: Out
        (7, 15, False),  # +7 HR: Way Out
        (8, 20, False),
    ],
)
def test_it_follows_the_seed_damage_table(net: int, points: int, rounded_up: bool) -> None:
    for dr in ("Avg", "Gd", "Def+"):
        got = okrpg.damage_points(okrpg.parse_rank(dr).half + net, dr)
        assert (got.net, got.points, got.rounded_up) == (net, points, rounded_up)


@pytest.mark.parametrize(
    ("damage_rank", "dr", "lethality", "points", "rounded_up", "lethal", "nonlethal"),
    [
        ("Grt", "Avg+", "cutting", 3, False, 2, 1),
        ("Avg", "Gd", "deep_puncturing", 1, True, 0, 1),  # the asterisk keeps a point nonlethal
        ("Avg+", "Avg", "deep_puncturing", 2, True, 1, 1),
        ("Gd", "Avg", "deep_puncturing", 2, False, 2, 0),
        ("Ext", "Avg", "cutting", 10, False, 7, 3),
        ("Ext", "Avg", "vicious_bashing", 10, False, 5, 5),
        ("Ext", "Avg", "less_vicious_bashing", 10, False, 3, 7),
        ("Ext", "Avg", "regular_bashing", 10, False, 2, 8),
        ("Ext", "Avg", "allegedly_nonlethal", 10, False, 1, 9),
        ("Ext", "Avg", "really_nonlethal", 10, False, 1, 9),
        ("Grt", "Avg", "vicious_bashing", 5, False, 3, 2),
        ("Def", "Gd", "cutting", 0, False, 0, 0),
    ],
)
def test_it_splits_damage_by_lethality(
    damage_rank: str,
    dr: str,
    lethality: str,
    points: int,
    rounded_up: bool,
    lethal: int,
    nonlethal: int,
) -> None:
    r = okrpg.damage(damage_rank, dr, lethality)
    assert (r.points, r.rounded_up, r.lethal, r.nonlethal) == (
        points,
        rounded_up,
        lethal,
        nonlethal,
    )


@given(damage_rank=ranks, dr=ranks, kind=st.sampled_from(list(okrpg.LETHALITY)))
def test_it_never_deals_negative_damage(damage_rank: int, dr: int, kind: str) -> None:
    r = okrpg.damage(damage_rank, dr, kind)
    assert r.lethal >= 0 and r.nonlethal >= 0
    assert r.lethal + r.nonlethal == r.points
    if r.rounded_up:
        assert r.nonlethal >= 1


@given(dr=ranks, low=ranks, high=ranks)
def test_it_deals_more_points_for_harder_hits(dr: int, low: int, high: int) -> None:
    low, high = min(low, high), max(low, high)
    assert okrpg.damage_points(low, dr).points <= okrpg.damage_points(high, dr).points


@pytest.mark.parametrize(
    ("kind", "successes", "expected"),
    [
        ("regular_bashing", 1, "vicious_bashing"),
        ("vicious_bashing", 1, "deep_puncturing"),
        ("cutting", 1, "deep_puncturing"),
        ("deep_puncturing", -1, "vicious_bashing"),
        ("regular_bashing", -1, "really_nonlethal"),
        ("really_nonlethal", -2, "really_nonlethal"),
    ],
)
def test_it_shifts_lethality_a_rank_per_success(kind: str, successes: int, expected: str) -> None:
    assert okrpg.shift_lethality(kind, successes) == expected


# --- conditions and recovery ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("lethal", "nonlethal", "status", "penalty", "dying"),
    [
        (0, 4, "fine", 0, False),
        (2, 3, "impaired", 1, False),
        (0, 7, "down", 1, False),
        (5, 5, "out", 1, False),
        (10, 0, "out", 1, True),
    ],
)
def test_it_reads_conditions(
    lethal: int, nonlethal: int, status: str, penalty: int, dying: bool
) -> None:
    h = okrpg.Health(lethal, nonlethal)
    assert (h.status, h.penalty_ranks, h.dying) == (status, penalty, dying)


@pytest.mark.parametrize(
    ("lethal", "seconds"),
    [
        (9, None),
        (10, Fraction(5400)),  # an hour and a half
        (11, Fraction(1200)),
        (12, Fraction(300)),
        (13, Fraction(60)),
        (14, Fraction(10)),  # two rounds
        (15, Fraction(5, 2)),  # half a round
        (16, Fraction(1, 2)),
    ],
)
def test_it_times_a_dying_character(lethal: int, seconds: Fraction | None) -> None:
    assert okrpg.Health(lethal=lethal).time_left == seconds


def test_it_accumulates_hits() -> None:
    h = okrpg.Health()
    for _ in range(3):
        h = okrpg.take_damage(h, okrpg.damage("Gd+", "Avg", "cutting"))
    assert (h.lethal, h.nonlethal, h.status) == (6, 3, "down")


@pytest.mark.parametrize(
    ("rate", "tide", "rounds", "nonlethal"),
    [
        (Fraction(1), None, 1, 4),
        (Fraction(1), 6, 1, 3),
        (Fraction(1), 1, 1, 5),
        (Fraction(3, 10), None, 3, 5),
        (Fraction(3, 10), None, 4, 4),
        (Fraction(5), None, 1, 0),
        (Fraction(7, 10), 6, 1, 4),
    ],
)
def test_it_recovers_nonlethal_damage(
    rate: Fraction, tide: int | None, rounds: int, nonlethal: int
) -> None:
    h = okrpg.Health(lethal=2, nonlethal=5)
    for _ in range(rounds):
        h = okrpg.recover(h, rate, tide)
    assert (h.lethal, h.nonlethal) == (2, nonlethal)


@given(
    lethal=st.integers(0, 20),
    nonlethal=st.integers(0, 20),
    num=st.integers(0, 20),
    tide=st.sampled_from([None, 1, 2, 6]),
)
def test_it_never_recovers_lethal_or_below_zero(
    lethal: int, nonlethal: int, num: int, tide: int | None
) -> None:
    h = okrpg.recover(okrpg.Health(lethal, nonlethal), Fraction(num, 10), tide)
    assert h.lethal == lethal and 0 <= h.nonlethal <= nonlethal and 0 <= h.recovered < 1


# --- Tide of Battle --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "dice", "value", "recoveries", "edge", "setback"),
    [
        ("normal", [6], 6, 2, True, False),
        ("normal", [1], 1, 0, False, True),
        ("normal", [3], 3, 1, False, False),
        ("worse", [6, 1], 1, 0, False, True),
        ("better", [6, 1], 6, 2, True, False),
    ],
)
def test_it_reads_the_tide(
    mode: okrpg.TideMode, dice: list[int], value: int, recoveries: int, edge: bool, setback: bool
) -> None:
    r = okrpg.roll_tide(mode, dice=dice)
    assert (r.value, r.recoveries, r.edge, r.setback) == (value, recoveries, edge, setback)


def test_it_gives_the_seed_tide_odds() -> None:
    normal, worse = okrpg.tide_odds("normal"), okrpg.tide_odds("worse")
    assert normal.setback == normal.edge == Fraction(1, 6)  # the seed's 17%
    assert worse.setback == Fraction(11, 36)  # 31%
    assert worse.edge == Fraction(1, 36)  # under 3%
    for mode in ("normal", "worse", "better"):
        assert sum(okrpg.tide_odds(mode).values.values()) == 1


def test_it_rolls_the_tide_with_a_seeded_random() -> None:
    a = okrpg.roll_tide("worse", rng=random.Random(11))
    b = okrpg.roll_tide("worse", rng=random.Random(11))
    assert a == b and a.value == min(a.dice)


# --- action points ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("combatants", "order", "carry"),
    [
        (
            [okrpg.Combatant("A", 7), okrpg.Combatant("B", 4, 2), okrpg.Combatant("C", 2)],
            ("A", "B", "A", "B"),
            {"A": 1, "B": 0, "C": 2},
        ),
        # Ties go in the order listed.
        ([okrpg.Combatant("A", 3), okrpg.Combatant("B", 3)], ("A", "B"), {"A": 0, "B": 0}),
        # A bystander with 2 carries them, then acts next round.
        ([okrpg.Combatant("X", 2)], (), {"X": 2}),
        ([okrpg.Combatant("X", 2, 2)], ("X",), {"X": 1}),
        # Last round's debt comes off, never below zero.
        ([okrpg.Combatant("X", 2, -3)], (), {"X": 0}),
        ([okrpg.Combatant("X", 9, 0, down=True)], (), {"X": 0}),
        ([okrpg.Combatant("X", 11)], ("X", "X", "X"), {"X": 2}),
    ],
)
def test_it_sequences_a_round(
    combatants: list[okrpg.Combatant], order: tuple[str, ...], carry: dict[str, int]
) -> None:
    plan = okrpg.run_round(combatants)
    assert plan.order == order
    assert dict(plan.carry) == carry


def test_it_lets_holds_and_defenses_change_the_sequence() -> None:
    state = okrpg.begin_round([okrpg.Combatant("A", 6), okrpg.Combatant("B", 5)])
    assert okrpg.next_up(state) == ("A",)
    state = okrpg.act(state, "A", hold=True)  # 5 - B and A now tie
    assert okrpg.next_up(state) == ("A", "B")
    state = okrpg.act(state, "B")
    state = okrpg.defend(state, "B")  # attacked out of turn: 2 - 3 = -1
    assert state.points_of("B") == -1
    state = okrpg.act(state, "A")
    assert okrpg.next_up(state) == ()
    assert dict(okrpg.end_round(state)) == {"A": 2, "B": -1}
    assert [what for _, what in state.log] == ["hold", "act", "defend", "act"]


def test_it_caps_the_carry_when_everyone_stops_early() -> None:
    state = okrpg.begin_round([okrpg.Combatant("A", 8)])
    assert dict(okrpg.end_round(state)) == {"A": 3}


@given(st.lists(st.tuples(st.integers(0, 15), st.integers(-5, 3)), min_size=1, max_size=6))
def test_it_ends_every_round_with_small_carries(rows: list[tuple[int, int]]) -> None:
    combatants = [okrpg.Combatant(f"c{i}", s, c) for i, (s, c) in enumerate(rows)]
    plan = okrpg.run_round(combatants)
    assert all(0 <= v <= 2 for v in plan.carry.values())
    for c in combatants:
        assert c.points - 3 * plan.order.count(c.name) == plan.carry[c.name]


def test_it_refuses_an_action_out_of_turn() -> None:
    state = okrpg.begin_round([okrpg.Combatant("A", 6), okrpg.Combatant("B", 4)])
    with pytest.raises(RulesError, match="A has the most"):
        okrpg.act(state, "B")
    with pytest.raises(InvalidChoice):
        okrpg.act(state, "Z")


# --- active defense and mooks ---------------------------------------------------------------


def test_it_never_stacks_active_defenses() -> None:
    defenses = [
        okrpg.ActiveDefense("all"),
        okrpg.ActiveDefense("group", frozenset({"biker", "leader"})),
        okrpg.ActiveDefense("one", frozenset({"leader"})),
    ]
    assert okrpg.defense_bonus(defenses, "leader") == 3
    assert okrpg.defense_bonus(defenses, "biker") == 2
    assert okrpg.defense_bonus(defenses, "ninja") == 1
    assert okrpg.defense_bonus([], "ninja") == 0


def test_it_tracks_mooks() -> None:
    mook = okrpg.mook_hit(okrpg.Mook(), "Gd+", "Avg")  # 3
    assert mook.status == "fine"
    mook = okrpg.mook_hit(mook, "Gd", "Avg")  # 5: Down
    assert mook.status == "down"
    assert okrpg.mook_rally(mook).points == 3
    mook = okrpg.mook_hit(mook, "Gd", "Avg")  # 7: Out, no rally
    assert mook.status == "out" and okrpg.mook_rally(mook) == mook


def test_it_writes_the_mook_table() -> None:
    table = [(r.name, p) for r, p in okrpg.mook_table("Gd")]
    assert table == [("Avg", 1), ("Gd+", 2), ("Grt+", 3), ("Ext", 5), ("Ext+", 7)]


# --- bad input -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: okrpg.parse_rank("Awesome"), InvalidChoice),
        (lambda: okrpg.parse_rank(2.5), InvalidChoice),  # type: ignore[arg-type]  # the wrong type on purpose
        (lambda: okrpg.damage("Grt", "Avg", "stabby"), InvalidChoice),
        (lambda: okrpg.Health(lethal=-1), InvalidScore),
        (lambda: okrpg.recover(okrpg.Health(), Fraction(-1)), InvalidScore),
        (lambda: okrpg.recover(okrpg.Health(), 1, tide=7), DiceError),
        (lambda: okrpg.roll_tide(dice=[6, 6]), DiceError),
        (lambda: okrpg.roll_tide(), DiceError),
        (lambda: okrpg.roll_tide("sideways", dice=[3]), InvalidChoice),  # type: ignore[arg-type]  # the wrong type on purpose
        (lambda: okrpg.Combatant("", 3), InvalidChoice),
        (lambda: okrpg.Combatant("A", -1), InvalidScore),
        (lambda: okrpg.Combatant("A", 3, carry=4), InvalidScore),
        (lambda: okrpg.begin_round([okrpg.Combatant("A", 3)] * 2), InvalidChoice),
        (lambda: okrpg.ActiveDefense("one"), InvalidChoice),
        (lambda: okrpg.ActiveDefense("all", frozenset({"x"})), InvalidChoice),
        (lambda: okrpg.ActiveDefense("sideways"), InvalidChoice),  # type: ignore[arg-type]  # the wrong type on purpose
    ],
)
def test_it_rejects_bad_input(call: object, error: type[RulesError]) -> None:
    with pytest.raises(error) as info:
        call()  # type: ignore[operator]  # a lambda of the table
    assert str(info.value)


def test_it_keeps_its_docstring_examples_true() -> None:
    assert doctest.testmod(okrpg).failed == 0


def test_it_serialises_results_and_odds_for_json() -> None:
    hit = okrpg.damage("Grt", "Avg+", "cutting").as_dict()
    assert (hit["points"], hit["rounded_up"], hit["lethal"], hit["nonlethal"]) == (3, False, 2, 1)
    plan = okrpg.run_round([okrpg.Combatant("A", 7), okrpg.Combatant("B", 4)]).as_dict()
    # A acts at 7, then ties B at 4 and goes first as listed.
    assert plan["order"] == ["A", "A", "B"] and plan["carry"] == {"A": 1, "B": 1}
    tide = okrpg.tide_odds("worse").as_dict(exact=True)
    assert tide["setback"] == "11/36"
    health = okrpg.Health(lethal=11).as_dict()
    assert health["time_left_seconds"] == 1200.0 and health["status"] == "out"
    json.dumps([hit, plan, tide, health, okrpg.roll_tide(dice=[6]).as_dict()])
