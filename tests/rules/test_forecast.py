"""The fight forecast: the simulation against the exact duel, the policy on hand-worked
situations, and what the forecast reports."""

from __future__ import annotations

import doctest
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rules.engine import forecast, odds, omg
from rules.engine.errors import RulesError
from rules.engine.forecast import (
    Combatant,
    WeaponIn,
    ZoneIn,
    choose,
    duel,
    exact_duel,
    fight,
    simulate,
)

Z99 = 2.5758


def fighter(key: str, side: str, **kw: Any) -> Combatant:
    base: dict[str, Any] = {
        "spd": 3,
        "skl": 3,
        "vgr": 3,
        "melee": 1,
        "stm": 5,
        "bzf": 6,
        "vitality": 9,
        "zones": (ZoneIn("body"),),
        "weapons": (WeaponIn("sword", 3, 0, 1),),
        "itv_base": 8,
    }
    base.update(kw)
    return Combatant(key, key, side, **base)


def pick(a: Combatant, b: Combatant) -> forecast.Choice:
    return choose(a, [w.dmg for w in a.arsenal], b, [z.arm for z in b.zones])


def weak(**kw: Any) -> Combatant:
    return fighter("b", "foes", spd=1, skl=1, vgr=1, weapons=(WeaponIn("club", 2),), **kw)


# Each case names what it exercises, and ``expect`` checks that the policy really does it
# (the strike and defense each side picks), so a case cannot quietly test something else.
DUELS: dict[str, tuple[Combatant, Combatant, tuple[str, str, str, str]]] = {
    "fast second hits": (
        fighter("a", "party", spd=5, skl=1, vgr=1, weapons=(WeaponIn("knife", 1, 0, 3),)),
        fighter("b", "foes"),
        ("fast", "dodge", "mighty", "dodge"),
    ),
    "dodge halves": (
        fighter("a", "party", spd=5, skl=1, vgr=1, melee=3),
        fighter("b", "foes", vgr=4),
        ("fast", "dodge", "mighty", "dodge"),
    ),
    "disciplined parry counterattacks": (
        fighter("a", "party", skl=5, spd=1, vgr=1, melee=5),
        weak(),
        ("mighty", "dodge", "fast", "parry"),
    ),
    "disciplined block wears weapons": (
        fighter("a", "party", vgr=5, spd=1, skl=1, melee=5),
        weak(),
        ("mighty", "dodge", "fast", "block"),
    ),
    "undisciplined both ways": (
        fighter("a", "party", melee=0, weapons=(WeaponIn("club", 2),)),
        fighter("b", "foes", melee=0, weapons=()),
        ("fast", "dodge", "fast", "dodge"),
    ),
    "armour wears": (
        fighter("a", "party", zones=(ZoneIn("body", arm=3, arm_bonus=1), ZoneIn("head", arm=1))),
        fighter(
            "b", "foes", vgr=4, weapons=(WeaponIn("axe", 2, 0, 2),), zones=(ZoneIn("b", arm=2),)
        ),
        ("mighty", "dodge", "mighty", "dodge"),
    ),
    "precise through armour": (
        fighter("a", "party", skl=5, spd=1, vgr=1, weapons=(WeaponIn("rapier", 2, 0, 3),)),
        fighter("b", "foes", zones=(ZoneIn("body", arm=5, arm_bonus=2),)),
        ("precise", "dodge", "mighty", "dodge"),
    ),
    "two weapons, fixed initiative": (
        fighter(
            "a",
            "party",
            itv=14,
            weapons=(WeaponIn("knife", 1, 0, 2), WeaponIn("hammer", 5, 1, 0)),
        ),
        fighter("b", "foes", itv=14, bzf=4, vitality=7),
        ("mighty", "dodge", "mighty", "dodge"),
    ),
}


def within_99(exact: float, simulated: float, n: int) -> bool:
    """The exact chance lies in the simulated share's 99% (Wilson) interval; a chance of
    exactly 0 or 1 must be matched exactly."""
    if exact in (0.0, 1.0):
        return simulated == exact
    lo, hi = forecast.wilson(round(simulated * n), n, z=Z99)
    return lo <= exact <= hi


@pytest.mark.parametrize("name", list(DUELS))
def test_it_agrees_with_the_exact_duel_within_its_99_percent_interval(name: str) -> None:
    a, b, expect = DUELS[name]
    ca, cb = pick(a, b), pick(b, a)
    assert (ca.strike.value, ca.defense.value, cb.strike.value, cb.defense.value) == expect
    n = 6000
    exact = exact_duel(a, b, round_limit=6)
    sim = simulate([a, b], fights=n, seed=7, round_limit=6)
    pairs = [
        ("party standing", exact.party_standing, sim.party_standing),
        ("round limit", exact.round_limit_hit, sim.round_limit_hit),
    ]
    for e, s in zip(exact.combatants, sim.combatants, strict=True):
        pairs += [
            (f"{e.name} down", e.down, s.down),
            (f"{e.name} out", e.out, s.out),
            (f"{e.name} grievous", e.grievous, s.grievous),
        ]
    bad = [(what, e, s) for what, e, s in pairs if not within_99(e, s, n)]
    assert not bad
    assert exact.exact and exact.party_standing_interval == (exact.party_standing,) * 2


def test_it_weighs_every_branch_of_the_exact_duel_to_one() -> None:
    a, b, _ = DUELS["disciplined parry counterattacks"]
    d = exact_duel(a, b, round_limit=4)
    assert d.party_standing == pytest.approx(d.party_wins + d.round_limit_hit)
    assert sum(c.out for c in d.combatants) + d.round_limit_hit == pytest.approx(1.0)


def test_it_refuses_a_duel_too_big_to_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    a, b, _ = DUELS["armour wears"]
    monkeypatch.setattr(duel, "MAX_DUEL_STATES", 3)
    with pytest.raises(RulesError, match="too many states"):
        exact_duel(a, b)


def test_it_gives_up_a_duel_past_its_time_budget() -> None:
    a, b, _ = DUELS["disciplined block wears weapons"]
    with pytest.raises(forecast.DuelAbandoned, match="more than 0 s"):
        exact_duel(a, b, budget=0)
    # A budget it stays within changes nothing.
    assert exact_duel(a, b, budget=60) == exact_duel(a, b)


@pytest.mark.parametrize("budget", [-1.0, float("nan")])
def test_it_refuses_a_budget_that_is_no_time(budget: float) -> None:
    a, b, _ = DUELS["disciplined block wears weapons"]
    with pytest.raises(RulesError, match="time budget") as caught:
        exact_duel(a, b, budget=budget)
    assert not isinstance(caught.value, forecast.DuelAbandoned)


# -- The policy on hand-worked situations ----------------------------------------------------


def test_it_strikes_mighty_when_vigor_and_the_weapon_discipline_make_it_best() -> None:
    # VGR 5 + 3 = PRO 90, doubled damage; fast would be SPD 2 + 3 = PRO 75. The target has
    # no Melee Combat, so every defense is DIF 10 and none halves: the first one answers.
    knight = fighter("k", "party", spd=2, skl=2, vgr=5, weapons=(WeaponIn("sword", 4, 0, 3),))
    target = fighter("t", "foes", spd=2, skl=2, vgr=2, melee=0)
    c = pick(knight, target)
    assert (c.strike, c.defense, c.attacker.pro, c.defender.dif) == (
        omg.StrikeMode.MIGHTY,
        omg.DefenseMode.DODGE,
        90,
        10,
    )
    assert c.score == float(odds.strike_odds(c.attacker, c.defender).mean_damage)


def test_it_parries_when_the_parry_lets_through_less_than_a_halving_dodge() -> None:
    # PRO 55 (SPD 1, no discipline) against parry DIF 50: 10 faces hit (51..55 and the five
    # successes with sacrifice 66..100). Against dodge DIF 30: 30 faces, each halved. With a
    # club (DMG 2), 10 full blows are less than 30 halved ones.
    defender = fighter("d", "party", skl=5, spd=1, vgr=1, melee=5)
    c = pick(weak(), defender)
    assert c.defense is omg.DefenseMode.PARRY
    assert odds.strike_odds(c.attacker, c.defender).check.hits == 10
    dodge = omg.Defender(omg.DefenseMode.DODGE, 1, 5)
    assert odds.strike_odds(c.attacker, dodge).check.hits == 30
    assert c.score < float(odds.strike_odds(c.attacker, dodge).mean_damage)


def test_it_aims_at_the_least_protected_zones() -> None:
    target = fighter(
        "t", "foes", zones=(ZoneIn("head", arm=3), ZoneIn("arm"), ZoneIn("leg"), ZoneIn("x", 0, 1))
    )
    assert pick(fighter("a", "party"), target).zones == (1, 2)


def test_it_is_indifferent_to_armor_that_a_precise_strike_bypasses() -> None:
    fencer = fighter("a", "party", skl=5, spd=1, vgr=1, weapons=(WeaponIn("rapier", 2, 0, 3),))
    target = fighter(
        "t", "foes", zones=(ZoneIn("head", arm=5, arm_bonus=3), ZoneIn("arm", arm=5, arm_bonus=2))
    )
    c = pick(fencer, target)
    assert c.strike is omg.StrikeMode.PRECISE
    assert c.zones == (0, 1)


def test_it_presses_the_zone_already_hurt() -> None:
    assert fight.pick_zone((0, 1, 2), [0, 5, 5]) == 1
    assert fight.pick_zone((2,), [9, 9, 0]) == 2


def test_it_takes_the_weapon_with_the_best_expected_damage() -> None:
    a = fighter(
        "a", "party", vgr=1, weapons=(WeaponIn("knife", 1, 0, 1), WeaponIn("hammer", 5, 0, 1))
    )
    assert pick(a, fighter("t", "foes")).weapon == 1


def test_it_builds_each_face_with_the_engines_strike() -> None:
    a = omg.Attacker(omg.StrikeMode.FAST, 4, 2, weapon_dmg=3)
    d = omg.Defender(omg.DefenseMode.BLOCK, 3, 2, arm=2, arm_bonus=1)
    table = forecast.face_table(a, d)
    for roll in range(1, 101):
        r = omg.strike(a, d, roll)
        assert table[roll - 1] == (
            tuple(h.damage for h in r.hits),
            r.armor_wear,
            r.weapon_wear,
            r.counterattack,
        )
    assert sum(n for n, _ in fight.grouped_faces(a, d)) == 100


@given(
    wounds=st.integers(0, 60),
    damage=st.integers(0, 60),
    bzf=st.integers(1, 30),
    vitality=st.integers(0, 40),
)
def test_it_wounds_exactly_as_take_damage(
    wounds: int, damage: int, bzf: int, vitality: int
) -> None:
    w = omg.take_damage(omg.Zone("z", wounds=wounds), damage, bzf=bzf, vitality=vitality)
    assert forecast.wound(wounds, damage, bzf=bzf, vitality=vitality) == (
        w.zone.wounds,
        w.vitality,
    )


# -- What the forecast reports -------------------------------------------------------------------


def party_and_thugs() -> list[Combatant]:
    zones = tuple(ZoneIn(n, arm=2) for n in omg.DEFAULT_ZONES)
    party = [
        fighter(f"p{i}", "party", bzf=12, vitality=11, zones=zones, itv_base=9) for i in range(2)
    ]
    thugs = [
        fighter(f"t{i}", "foes", skl=2, bzf=11, vitality=8, zones=zones, group="thugs")
        for i in range(3)
    ]
    return party + thugs


def test_it_is_reproducible_with_a_seed() -> None:
    fs = party_and_thugs()
    one = simulate(fs, fights=300, seed=11).as_dict()
    assert simulate(fs, fights=300, seed=11).as_dict() == one
    assert simulate(fs, fights=300, seed=12).as_dict() != one


def test_it_stops_at_its_work_budget_reproducibly() -> None:
    fs = party_and_thugs()
    short = simulate(fs, fights=300, seed=11, max_work=2_000)
    assert 1 <= short.fights < 300
    assert simulate(fs, fights=300, seed=11, max_work=2_000) == short
    # The interval is the one of the fights played.
    lo, hi = short.party_standing_interval
    assert (lo, hi) == forecast.wilson(round(short.party_standing * short.fights), short.fights)
    # A budget it stays within changes nothing.
    assert simulate(fs, fights=300, seed=11, max_work=10**9) == simulate(fs, fights=300, seed=11)


def test_it_reports_every_chance_in_range() -> None:
    f = simulate(party_and_thugs(), fights=500, seed=3)
    lo, hi = f.party_standing_interval
    assert 0 <= lo <= f.party_standing <= hi <= 1
    assert f.rounds_p10 <= f.rounds_median <= f.rounds_p90 <= f.round_limit
    for c in f.combatants:
        assert 0 <= c.down <= c.out <= 1 and c.knocked_out <= c.out and 0 <= c.grievous <= 1
    (group,) = f.groups
    assert (group.group, group.count) == ("thugs", 3)
    assert group.beaten == pytest.approx(f.party_wins)
    assert f.most_dangerous == "t0"
    assert f.verdict and f.level in {"deadly", "dangerous", "risky", "easy"}


def test_it_stops_at_the_round_limit_and_says_how_often() -> None:
    # Nobody's wounds can ever pass a BZF of 10 000 in three rounds: every fight hits the limit.
    a = fighter("a", "party", bzf=10_000)
    b = fighter("b", "foes", bzf=10_000)
    f = simulate([a, b], fights=50, seed=1, round_limit=3)
    assert (f.round_limit_hit, f.party_standing, f.party_wins, f.rounds_median) == (1, 1, 0, 3)
    assert exact_duel(a, b, round_limit=3).round_limit_hit == pytest.approx(1.0)


def test_it_counts_a_fighter_already_out_of_a_running_fight() -> None:
    fs = party_and_thugs()
    fs[0] = fighter("p0", "party", vitality=0)
    fs[1] = fighter("p1", "party", able=False)
    f = simulate(fs, fights=20, seed=1)
    assert f.party_standing == 0 and f.rounds_median == 0
    assert (f.combatants[0].down, f.combatants[1].knocked_out) == (1, 1)


@pytest.mark.parametrize(
    ("standing", "out", "level"),
    [
        (0.4, 0.9, "deadly"),
        (0.9, 0.5, "deadly"),
        (0.9, 0.25, "dangerous"),
        (0.9, 0.1, "risky"),
        (1.0, 0.09, "easy"),
    ],
)
def test_it_reads_the_verdict_at_the_documented_thresholds(
    standing: float, out: float, level: str
) -> None:
    assert forecast.verdict(standing, [("Ysolde", out)])[0] == level


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"fights": 0}, "fights"),
        ({"round_limit": 0}, "round limit"),
        ({"stamina_difficulty": 60}, "Stamina difficulty"),
    ],
)
def test_it_refuses_bad_settings(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(RulesError, match=message):
        simulate(party_and_thugs(), **kwargs)


def test_it_refuses_bad_fighters() -> None:
    with pytest.raises(RulesError, match="own key"):
        simulate([fighter("a", "party"), fighter("a", "foes")])
    with pytest.raises(RulesError, match="no body zone"):
        fighter("a", "party", zones=())
    with pytest.raises(RulesError, match="side"):
        fighter("a", "neutral")


def test_it_keeps_the_docstring_examples_true() -> None:
    # The package's own example, and the functions' (in the module that holds them).
    for module in (forecast, fight):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0 and result.attempted > 0
