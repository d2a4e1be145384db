"""Strikes, defenses, the damage pipeline, wear, counterattacks and maneuvers."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rules import RulesError, dice, omg
from rules.engine.errors import InvalidChoice, InvalidScore
from rules.engine.omg import Attacker, Condition, Defender, Degree

# The seed's example: Speed 3, Skill 4, Vigor 5, Swordsmanship 3, Melee Combat 2.
SPD, SKL, VGR, SWORD, MELEE = 3, 4, 5, 3, 2


@pytest.mark.parametrize(
    ("mode", "apt", "pro"), [("fast", SPD, 80), ("precise", SKL, 85), ("mighty", VGR, 90)]
)
def test_it_matches_the_seed_attacks(mode: str, apt: int, pro: int) -> None:
    assert omg.strike_pro(mode, apt, SWORD) == pro
    assert Attacker(omg.StrikeMode(mode), apt, SWORD).pro == pro


@pytest.mark.parametrize(
    ("mode", "apt", "dif"), [("dodge", SPD, 25), ("parry", SKL, 30), ("block", VGR, 35)]
)
def test_it_matches_the_seed_defenses(mode: str, apt: int, dif: int) -> None:
    assert omg.defense_dif(mode, apt, MELEE) == dif
    assert Defender(omg.DefenseMode(mode), apt, MELEE).dif == dif


def atk(mode: str, apt: int = 4, dsc: int = 3, dmg: int = 4, bonus: int = 0) -> Attacker:
    return Attacker(omg.parse_strike_mode(mode), apt, dsc, dmg, bonus)


def dfn(mode: str, apt: int = 2, dsc: int = 2, arm: int = 0, bonus: int = 0) -> Defender:
    return Defender(omg.parse_defense_mode(mode), apt, dsc, arm, bonus)


@pytest.mark.parametrize(
    ("attacker", "defender", "roll", "damages"),
    [
        # SUM 7 + DMG 4 = 11 - ARM 2 = 9
        (atk("precise", dsc=0), dfn("parry", arm=2), 43, [9]),
        # precise, disciplined: armor bypassed
        (atk("precise"), dfn("parry", arm=5), 43, [11]),
        # mighty, disciplined: (7 + 4) x 2 - 2 = 20
        (atk("mighty", apt=5), dfn("block", arm=2), 43, [20]),
        # mighty, undisciplined: no doubling
        (atk("mighty", apt=5, dsc=0), dfn("block", arm=2), 43, [9]),
        # disciplined dodge halves, rounding down: (11 - 2) // 2 = 4
        (atk("precise", dsc=0), dfn("dodge", arm=2), 43, [4]),
        # undisciplined dodge does not halve
        (atk("precise", dsc=0), dfn("dodge", dsc=0, arm=2), 43, [9]),
        # armor stronger than the blow: 0, never negative
        (atk("precise", dsc=0, dmg=0), dfn("parry", arm=5, bonus=5), 21, [0]),
        # the weapon bonus adds; improvised DMG 0
        (atk("precise", dsc=0, dmg=0, bonus=2), dfn("parry"), 43, [9]),
        # a miss deals nothing
        (atk("precise"), dfn("parry"), 95, []),
        # SwS still lands: 99 -> SUM 18 + 4
        (atk("precise"), dfn("parry"), 99, [22]),
    ],
)
def test_it_runs_the_damage_pipeline(
    attacker: Attacker, defender: Defender, roll: int, damages: list[int]
) -> None:
    assert [h.damage for h in omg.strike(attacker, defender, roll).hits] == damages


def test_it_applies_the_fast_strikes_two_hits_in_order() -> None:
    # PRO 80 v DIF 20; 43 reads 34 for the second hit. SUM 7 + DMG 4 = 11 against ARM 2.
    result = omg.strike(atk("fast", apt=SPD), dfn("block", apt=2, dsc=2, arm=2), 43)
    first, second = result.hits
    assert (first.roll, first.protection, first.damage, first.armor_wear) == (43, 2, 9, 1)
    # the first hit wore the armor, so it protects one point less against the second
    assert (second.roll, second.protection, second.damage, second.armor_wear) == (34, 1, 10, 1)
    assert second.second
    assert (result.armor_wear, result.arm_after, result.armor_destroyed) == (2, 0, True)
    assert result.damage == 19


def test_it_gives_no_second_hit_when_undisciplined() -> None:
    result = omg.strike(atk("fast", apt=SPD, dsc=0), dfn("block"), 43)
    assert len(result.hits) == 1


def test_it_gives_no_second_hit_after_a_missed_first() -> None:
    # 82 misses at 80v20 while its reverse 28 would hit.
    result = omg.strike(atk("fast", apt=SPD), dfn("block"), 82)
    assert result.hits == ()


def test_it_reads_doubles_as_dramatic_first_and_plain_second() -> None:
    result = omg.strike(atk("fast", apt=SPD), dfn("block"), 44)
    assert result.degree is Degree.DRAMATIC_SUCCESS
    assert [h.roll for h in result.hits] == [44, 44]


def test_it_wears_armor_only_when_the_blow_beats_it() -> None:
    # raw 2 + 1 = 3 against ARM 3: not exceeded, no wear
    held = omg.strike(atk("precise", dsc=0, dmg=1), dfn("parry", arm=3), 21)  # SUM 3 + 1 = 4 > 3
    assert held.armor_wear == 1
    equal = omg.strike(atk("precise", dsc=0, dmg=0), dfn("parry", arm=3), 21)  # 3 = 3
    assert equal.armor_wear == 0
    assert equal.hits[0].damage == 0


def test_it_counts_the_magic_bonus_in_the_wear_threshold() -> None:
    # raw 4 > ARM 3 but not > ARM 3 + magic 1: the armor holds and does not wear.
    result = omg.strike(atk("precise", dsc=0, dmg=1), dfn("parry", arm=3, bonus=1), 21)
    assert (result.hits[0].damage, result.armor_wear) == (0, 0)


def test_it_spares_armor_from_a_precise_strike() -> None:
    result = omg.strike(atk("precise"), dfn("parry", arm=2), 43)
    assert (result.armor_wear, result.hits[0].protection) == (0, 0)


def test_it_ignores_the_magic_bonus_of_destroyed_armor() -> None:
    result = omg.strike(atk("precise", dsc=0), dfn("parry", arm=0, bonus=3), 43)
    assert result.hits[0].damage == 11


@pytest.mark.parametrize(
    ("melee", "dmg", "wear"),
    [(2, 4, 1), (0, 4, 0), (2, 0, 0)],
)
def test_it_wears_the_weapon_on_a_dramatic_failure_into_a_block(
    melee: int, dmg: int, wear: int
) -> None:
    # DIF 35 (VGR 5 + Melee 2) or 25 (VGR alone): 33 or 11 are doubles under it.
    defender = dfn("block", apt=5, dsc=melee)
    result = omg.strike(atk("mighty", apt=5, dmg=dmg), defender, 33 if melee else 11)
    assert result.degree is Degree.DRAMATIC_FAILURE
    assert result.weapon_wear == wear
    assert result.weapon_dmg_after == dmg - wear


def test_it_destroys_a_weapon_worn_to_zero() -> None:
    result = omg.strike(atk("mighty", apt=5, dmg=1), dfn("block", apt=5), 33)
    assert (result.weapon_dmg_after, result.weapon_destroyed) == (0, True)


@pytest.mark.parametrize(
    ("mode", "dsc", "counter"), [("parry", 2, True), ("parry", 0, False), ("dodge", 2, False)]
)
def test_it_grants_a_counterattack_on_a_disciplined_parry(
    mode: str, dsc: int, counter: bool
) -> None:
    assert omg.strike(atk("precise"), dfn(mode, dsc=dsc), 43).counterattack is counter
    assert omg.strike(atk("precise"), dfn(mode, dsc=dsc), 95).counterattack is counter


def test_it_rolls_a_strike_with_an_injected_generator() -> None:
    a = omg.strike(atk("fast"), dfn("dodge"), rng=random.Random(3))
    b = omg.strike(atk("fast"), dfn("dodge"), rng=random.Random(3))
    assert a == b


def test_it_serializes_a_strike() -> None:
    data = omg.strike(atk("fast", apt=SPD), dfn("parry"), 43).as_dict()
    assert data["pro"] == 80
    assert data["counterattack"] is True
    assert [h["roll"] for h in data["hits"]] == [43, 34]  # type: ignore[attr-defined]  # a list in the JSON


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (
            lambda: Attacker("slash", 3),  # type: ignore[arg-type]  # refused in __post_init__
            InvalidChoice,
            "strike mode must be one of fast, precise, mighty",
        ),
        (
            lambda: Defender("duck", 3),  # type: ignore[arg-type]  # refused in __post_init__
            InvalidChoice,
            "defense mode must be one of dodge, parry, block",
        ),
        (lambda: atk("fast", apt=0), InvalidScore, "APT must be between 1 and 5, got 0"),
        (lambda: atk("fast", dsc=6), InvalidScore, "DSC must be between 0 and 5"),
        (lambda: atk("fast", dmg=6), InvalidScore, "weapon DMG must be between 0 and 5"),
        (lambda: atk("fast", bonus=-1), InvalidScore, "weapon bonus must be between 0 and 5"),
        (lambda: dfn("dodge", arm=9), InvalidScore, "ARM must be between 0 and 5"),
        (lambda: dfn("dodge", bonus=9), InvalidScore, "ARM bonus must be between 0 and 5"),
        (lambda: omg.strike(atk("fast"), dfn("dodge"), 0), InvalidScore, "roll must be between"),
        (lambda: omg.strike(atk("fast"), dfn("dodge")), RulesError, "give either the roll"),
        (lambda: omg.parse_maneuver("suplex"), InvalidChoice, "maneuver must be one of"),
    ],
)
def test_it_refuses_bad_strikes(make: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        make()  # type: ignore[operator]  # a lambda of the table


def test_it_accepts_mode_names_in_any_case() -> None:
    assert omg.parse_strike_mode(" Fast ") is omg.StrikeMode.FAST


# --- Maneuvers ----------------------------------------------------------------------------


def man(kind: str, roll: int, **kw: object) -> omg.ManeuverResult:
    args: dict[str, object] = {
        "apt": 4,
        "melee": 2,
        "defense": "parry",
        "defense_apt": 2,
        "defense_melee": 2,
        "roll": roll,
    }
    args.update(kw)
    return omg.maneuver(kind, **args)  # type: ignore[arg-type]  # the wrong type on purpose


@pytest.mark.parametrize(
    ("kind", "condition"),
    [
        ("feint", Condition.FEINTED),
        ("disarm", Condition.DISARMED),
        ("grapple", Condition.GRAPPLED),
    ],
)
def test_it_sets_the_condition_of_a_successful_maneuver(kind: str, condition: Condition) -> None:
    assert man(kind, 50).condition is condition
    assert man(kind, 95).condition is None


def test_it_resolves_a_feint_against_focus_and_melee() -> None:
    result = omg.maneuver("feint", apt=3, melee=2, defense_apt=4, defense_melee=3, roll=40)
    assert (result.check.pro, result.check.dif, result.success) == (75, 35, True)


def test_it_needs_a_defense_mode_for_other_maneuvers() -> None:
    with pytest.raises(InvalidChoice, match="disarm is resolved against a declared defense"):
        omg.maneuver("disarm", apt=3, melee=2, defense_apt=4, defense_melee=3, roll=40)


@pytest.mark.parametrize(
    ("attacker", "target", "thrown"), [(180, 200, True), (180, 359, True), (180, 360, False)]
)
def test_it_limits_throws_to_targets_under_twice_the_weight(
    attacker: int, target: int, thrown: bool
) -> None:
    result = man("throw", 50, attacker_weight=attacker, target_weight=target)
    assert (result.condition is Condition.PRONE) is thrown
    assert result.too_heavy is not thrown


def test_it_shoves_half_the_movement_away() -> None:
    result = man("shove", 50, attacker_weight=180, target_weight=180, attacker_mov=7)
    assert (result.condition, result.shove_yards) == (Condition.SHOVED, 3)
    heavy = man("shove", 50, attacker_weight=100, target_weight=200, attacker_mov=7)
    assert (heavy.condition, heavy.too_heavy, heavy.shove_yards) == (None, True, 0)


def test_it_needs_weights_for_throw_and_shove() -> None:
    with pytest.raises(RulesError, match="needs the attacker's and the target's weight"):
        man("throw", 50)
    with pytest.raises(RulesError, match="needs the attacker's MOV"):
        man("shove", 50, attacker_weight=1, target_weight=1)


def test_it_stuns_with_normal_damage_and_a_stamina_test() -> None:
    result = man("stun", 43, weapon_dmg=4, arm=2, defense="dodge")
    assert result.condition is Condition.STUNNED
    assert result.stamina_test
    assert result.hit is not None
    assert (result.hit.raw, result.hit.damage, result.hit.armor_wear) == (11, 4, 1)


AGAINST_DEFENSE = [k for k in omg.Maneuver if k is not omg.Maneuver.FEINT]
HEAVY = {"attacker_weight": 180, "target_weight": 180, "attacker_mov": 6}


@pytest.mark.parametrize("kind", AGAINST_DEFENSE)
@pytest.mark.parametrize(("melee", "counter"), [(1, True), (0, False)])
@pytest.mark.parametrize("roll", [50, 95])  # hit or miss: the parry itself earns it
def test_it_gives_a_disciplined_parry_its_counterattack_against_a_maneuver(
    kind: omg.Maneuver, melee: int, counter: bool, roll: int
) -> None:
    r = man(kind, roll, defense="parry", defense_apt=3, defense_melee=melee, **HEAVY)
    assert r.counterattack is counter
    assert r.weapon_wear == 0


@pytest.mark.parametrize("kind", AGAINST_DEFENSE)
@pytest.mark.parametrize(("melee", "weapon", "worn"), [(1, 4, 1), (0, 4, 0), (1, 0, 0), (1, 1, 1)])
def test_it_wears_a_weapon_a_disciplined_block_meets_on_a_dramatic_failure(
    kind: omg.Maneuver, melee: int, weapon: int, worn: int
) -> None:
    # 80 against block 15 or 20: 11 is a dramatic failure either way.
    r = man(
        kind, 11, defense="block", defense_apt=3, defense_melee=melee, weapon_dmg=weapon, **HEAVY
    )
    assert r.check.degree is Degree.DRAMATIC_FAILURE
    assert (r.weapon_wear, r.weapon_dmg_after) == (worn, weapon - worn)
    assert r.weapon_destroyed is (weapon == 1 and worn == 1)
    assert not r.counterattack


@pytest.mark.parametrize("kind", AGAINST_DEFENSE)
@pytest.mark.parametrize("roll", [50, 33, 95])  # a success, a dramatic success, a failure
def test_it_wears_no_weapon_on_a_block_without_a_dramatic_failure(
    kind: omg.Maneuver, roll: int
) -> None:
    r = man(kind, roll, defense="block", defense_apt=3, defense_melee=1, weapon_dmg=4, **HEAVY)
    assert (r.weapon_wear, r.weapon_dmg_after) == (0, 4)


@pytest.mark.parametrize(("melee", "damage"), [(1, 4), (0, 9)])
def test_it_halves_a_stun_only_against_a_disciplined_dodge(melee: int, damage: int) -> None:
    r = man("stun", 43, weapon_dmg=4, arm=2, defense="dodge", defense_apt=3, defense_melee=melee)
    assert r.hit is not None and r.hit.damage == damage
    assert not r.counterattack and r.weapon_wear == 0


def test_it_gives_a_feint_no_defense_effect() -> None:
    for roll in (11, 50, 95):
        r = omg.maneuver(
            "feint", apt=3, melee=2, defense_apt=4, defense_melee=3, roll=roll, weapon_dmg=4
        )
        assert (r.counterattack, r.weapon_wear, r.weapon_dmg_after) == (False, 0, 4)


@given(st.integers(1, 100), st.sampled_from(list(omg.Maneuver)))
def test_it_never_gives_a_condition_on_a_failure(roll: int, kind: omg.Maneuver) -> None:
    result = man(kind.value, roll, attacker_weight=150, target_weight=150, attacker_mov=6)
    if not result.success:
        assert result.condition is None


# --- Properties ---------------------------------------------------------------------------

attackers = st.builds(
    Attacker,
    st.sampled_from(list(omg.StrikeMode)),
    st.integers(1, 5),
    st.integers(0, 5),
    st.integers(0, 5),
    st.integers(0, 5),
)
defenders = st.builds(
    Defender,
    st.sampled_from(list(omg.DefenseMode)),
    st.integers(1, 5),
    st.integers(0, 5),
    st.integers(0, 5),
    st.integers(0, 5),
)
rolls = st.integers(1, 100)


@given(attackers, defenders, rolls)
def test_it_never_deals_negative_damage(a: Attacker, d: Defender, roll: int) -> None:
    result = omg.strike(a, d, roll)
    assert all(h.damage >= 0 for h in result.hits)
    assert 0 <= result.arm_after <= d.arm
    assert len(result.hits) <= (2 if a.disciplined and a.mode is omg.StrikeMode.FAST else 1)


@given(
    attackers.filter(lambda a: a.mode is omg.StrikeMode.PRECISE and a.disciplined), defenders, rolls
)
def test_it_lets_a_disciplined_precise_strike_ignore_armor(
    a: Attacker, d: Defender, roll: int
) -> None:
    armored = omg.strike(a, d, roll)
    bare = omg.strike(a, Defender(d.mode, d.apt, d.dsc), roll)
    assert [h.damage for h in armored.hits] == [h.damage for h in bare.hits]
    assert armored.armor_wear == 0


@given(attackers, defenders.filter(lambda d: d.disciplined), rolls)
def test_it_halves_damage_on_a_disciplined_dodge(a: Attacker, d: Defender, roll: int) -> None:
    dodge = Defender(omg.DefenseMode.DODGE, d.apt, d.dsc, d.arm, d.arm_bonus)
    stand = Defender(omg.DefenseMode.DODGE, d.apt, 0, d.arm, d.arm_bonus)
    r = omg.strike(a, dodge, roll)
    for hit in r.hits:
        assert hit.damage == max(0, hit.raw - hit.protection) // 2
    # same PvD (different DIF) aside, the undisciplined dodge never halves
    for hit in omg.strike(a, stand, roll).hits:
        assert hit.damage == max(0, hit.raw - hit.protection)


@given(attackers, defenders, rolls)
def test_it_doubles_only_a_disciplined_mighty_strike(a: Attacker, d: Defender, roll: int) -> None:
    total = dice.digit_sum(roll) + a.weapon_dmg + a.weapon_bonus
    doubled = a.disciplined and a.mode is omg.StrikeMode.MIGHTY
    for hit in omg.strike(a, d, roll).hits:
        assert hit.raw == total * (2 if doubled else 1)
