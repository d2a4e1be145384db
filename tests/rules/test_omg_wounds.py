"""Body zones, wounds against BZF, Vitality, grievous wounds, healing."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rules import omg
from rules.engine.errors import InvalidChoice, InvalidScore
from rules.engine.omg import Attacker, Defender, Zone


def test_it_lists_the_default_humanoid_zones_in_order() -> None:
    assert [z.name for z in omg.default_zones(arm=2)] == [
        "head",
        "chest",
        "abdomen",
        "left arm",
        "right arm",
        "left leg",
        "right leg",
    ]
    assert {z.arm for z in omg.default_zones(arm=2)} == {2}


@pytest.mark.parametrize(
    ("old", "damage", "loss", "grievous"),
    [
        (0, 10, 0, False),  # up to BZF: inconsequential
        (0, 11, 1, True),  # first overflow
        (8, 5, 3, True),
        (12, 4, 4, False),  # already past BZF and already grievous
    ],
)
def test_it_takes_vitality_only_beyond_bzf(
    old: int, damage: int, loss: int, grievous: bool
) -> None:
    zone = Zone("chest", wounds=old, grievous=old > 10)
    result = omg.take_damage(zone, damage, bzf=10, vitality=12)
    assert result.zone.wounds == old + damage
    assert result.vit_loss == loss
    assert result.vitality == 12 - loss
    assert result.grievous is grievous
    assert result.stamina_test is grievous
    assert result.zone.grievous is (old + damage > 10)


def test_it_calls_a_stamina_test_only_the_first_time() -> None:
    zone = Zone("head")
    first = omg.take_damage(zone, 12, bzf=10, vitality=12)
    healed = omg.heal(first.zone, 12, bzf=10, vitality=first.vitality, max_vitality=12)
    again = omg.take_damage(healed.zone, 12, bzf=10, vitality=healed.vitality)
    assert (first.stamina_test, again.stamina_test) == (True, False)
    assert again.zone.grievous


def test_it_stops_vitality_at_zero_and_reports_down() -> None:
    result = omg.take_damage(Zone("head", wounds=10, grievous=True), 9, bzf=10, vitality=4)
    assert (result.vit_loss, result.vitality, result.down) == (4, 0, True)


def test_it_heals_never_below_zero_and_gives_back_the_overflow() -> None:
    zone = Zone("left leg", wounds=13, grievous=True)
    result = omg.heal(zone, 20, bzf=10, vitality=5, max_vitality=12)
    assert (result.zone.wounds, result.healed, result.vit_gain, result.vitality) == (0, 13, 3, 8)
    capped = omg.heal(zone, 20, bzf=10, vitality=11, max_vitality=12)
    assert (capped.vit_gain, capped.vitality) == (1, 12)


def test_it_applies_both_fast_hits_to_the_zone_in_order() -> None:
    # PRO 80 (SPD 3 + Sword 3) v DIF 20, long sword (4), chest in leather (ARM 2), BZF 10.
    result = omg.strike(
        Attacker(omg.StrikeMode.FAST, 3, 3, 4), Defender(omg.DefenseMode.BLOCK, 2, 2, 2), 43
    )
    zone = Zone("chest", wounds=0, arm=2)
    out = omg.apply_strike(zone, result, bzf=10, vitality=12)
    assert [w.damage for w in out.wounds] == [9, 10]
    assert [w.zone.wounds for w in out.wounds] == [9, 19]
    assert (out.zone.wounds, out.zone.arm, out.vitality, out.stamina_test) == (19, 0, 3, True)


def test_it_runs_the_stamina_test_from_stm() -> None:
    assert omg.stamina_test(8, roll=90).success  # PRO 90 v 20
    assert not omg.stamina_test(8, roll=91).success
    assert omg.stamina_test(8, 40, roll=40).abbr == "EpF"


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: Zone(""), InvalidChoice, "a body zone needs a name"),
        (lambda: Zone("head", wounds=-1), InvalidScore, "wounds must be between 0"),
        (lambda: Zone("head", arm=6), InvalidScore, "ARM must be between 0 and 5"),
        (lambda: omg.take_damage(Zone("head"), -1, bzf=10, vitality=5), InvalidScore, "damage"),
        (lambda: omg.take_damage(Zone("head"), 1, bzf=0, vitality=5), InvalidScore, "BZF"),
        (
            lambda: omg.heal(Zone("head"), 1, bzf=10, vitality=5, max_vitality=4),
            InvalidScore,
            "maximum Vitality",
        ),
        (lambda: omg.stamina_test(1, roll=5), InvalidScore, "STM must be between 2 and 10"),
    ],
)
def test_it_refuses_bad_wounds(call: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        call()  # type: ignore[operator]  # a lambda of the table


@given(st.integers(0, 60), st.integers(0, 40), st.integers(1, 20), st.integers(0, 15))
def test_it_only_grows_wounds_on_a_hit(old: int, damage: int, bzf: int, vitality: int) -> None:
    result = omg.take_damage(Zone("chest", wounds=old), damage, bzf=bzf, vitality=vitality)
    assert result.zone.wounds == old + damage
    assert 0 <= result.vit_loss <= damage
    assert result.vitality == vitality - result.vit_loss >= 0


@given(st.integers(0, 60), st.integers(0, 40), st.integers(1, 20))
def test_it_undoes_a_hit_by_healing_it(old: int, damage: int, bzf: int) -> None:
    vit = 50
    hit = omg.take_damage(Zone("chest", wounds=old), damage, bzf=bzf, vitality=vit)
    healed = omg.heal(hit.zone, damage, bzf=bzf, vitality=hit.vitality, max_vitality=vit)
    assert (healed.zone.wounds, healed.vitality) == (old, vit)
