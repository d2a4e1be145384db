"""Aptitudes, composites, derived attributes, initiative, creation and advancement."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rules import omg
from rules.engine.errors import CreationError, FateError, InvalidChoice, InvalidScore, RulesError
from rules.engine.omg import Aptitudes, DisciplineState, RestState

APTS = Aptitudes(foc=2, spd=3, skl=4, vgr=5, nrv=3, chr=2, svy=3)


def test_it_computes_the_composites() -> None:
    assert omg.composites(APTS).as_dict() == {
        "AGL": 7,
        "STR": 9,
        "STM": 8,
        "SPR": 5,
        "INS": 5,
        "WIT": 6,
    }


def test_it_computes_the_derived_attributes() -> None:
    d = omg.derived(APTS, bzf=12, itv_d10=6, yards_per_height=3)
    assert (d.vit, d.mna, d.chi) == (10, 10, 14)
    assert (d.bzf, d.weight, d.enc, d.carry, d.lift) == (12, 168, 108, 216, 432)
    assert (d.mov, d.itv) == (9, 14)
    assert omg.derived(APTS, bzf=12).itv is None


def test_it_reads_aptitudes_by_abbreviation() -> None:
    assert APTS["spd"] == 3
    assert Aptitudes.from_mapping(APTS.as_dict()) == APTS
    with pytest.raises(InvalidChoice, match="aptitude must be one of"):
        APTS["LCK"]


@pytest.mark.parametrize(
    ("weight", "bzf"), [(112, 8), (168, 12), (181, 12), (182, 13), (280, 20), (14, 1)]
)
def test_it_derives_bzf_from_weight(weight: int, bzf: int) -> None:
    assert omg.bzf_from_weight(weight) == bzf


def test_it_rolls_bzf_as_six_plus_2d6() -> None:
    assert omg.roll_bzf(dice_values=(6, 6)) == omg.BzfRoll((6, 6), 18, 252)
    rolled = {omg.roll_bzf(rng=random.Random(s)).bzf for s in range(200)}
    assert rolled <= set(range(8, 19))
    assert min(rolled) < 11 < max(rolled)


def test_it_rolls_itv_and_doubles_it_on_alert() -> None:
    assert omg.roll_itv(APTS, d10=10) == 18
    assert 9 <= omg.roll_itv(APTS, rng=random.Random(5)) <= 18
    assert omg.on_alert(14) == 28


def test_it_orders_initiative_by_itv_then_spd_then_foc_then_gm() -> None:
    e = omg.InitiativeEntry
    entries = [
        e("a", 12, 3, 2, 1),
        e("b", 12, 3, 2, 0),
        e("c", 12, 3, 4),
        e("d", 12, 4, 1),
        e("z", 20, 1, 1),
    ]
    assert [x.key for x in omg.initiative_order(entries)] == ["z", "d", "c", "b", "a"]


# --- Creation -----------------------------------------------------------------------------


def test_it_turns_a_six_into_a_five_and_a_fate_with_2d6() -> None:
    pairs = [(6, 1), (6, 6), (2, 3), (1, 1), (5, 4), (3, 3), (2, 6)]
    roll = omg.aptitudes_from_2d6(pairs)
    assert roll.aptitudes.as_dict() == {
        "FOC": 5,
        "SPD": 5,
        "SKL": 3,
        "VGR": 1,
        "NRV": 5,
        "CHR": 3,
        "SVY": 5,
    }
    assert roll.fate == 3
    assert roll.method is omg.AptitudeMethod.ROLL_2D6


def test_it_rolls_2d6_aptitudes_with_a_seeded_generator() -> None:
    a = omg.roll_aptitudes_2d6(random.Random(11))
    b = omg.roll_aptitudes_2d6(random.Random(11))
    assert a == b
    assert len(a.dice) == 14
    assert a.fate == sum(1 for i in range(0, 14, 2) if max(a.dice[i : i + 2]) == 6)


def test_it_assigns_7d6_as_the_player_chooses() -> None:
    rolled = omg.roll_aptitudes_7d6(random.Random(2))
    assignment = dict(zip(omg.APTITUDE_ABBRS, sorted(rolled), strict=True))
    result = omg.aptitudes_from_7d6(rolled, assignment)
    assert result.fate == rolled.count(6)
    assert max(result.aptitudes.as_dict().values()) <= 5


def test_it_refuses_a_7d6_assignment_that_is_not_the_rolled_dice() -> None:
    with pytest.raises(CreationError, match="are not the rolled dice"):
        omg.aptitudes_from_7d6([1, 2, 3, 4, 5, 6, 6], dict.fromkeys(omg.APTITUDE_ABBRS, 6))


def test_it_accepts_manual_aptitudes_without_fate() -> None:
    result = omg.manual_aptitudes(APTS.as_dict())
    assert (result.aptitudes, result.fate) == (APTS, 0)
    with pytest.raises(InvalidScore, match="SVY must be between 1 and 5, got 6"):
        omg.manual_aptitudes({**APTS.as_dict(), "SVY": 6})
    with pytest.raises(InvalidScore, match="missing aptitude"):
        omg.manual_aptitudes({"FOC": 3})


def test_it_gives_rank_one_in_the_seven_archetype_disciplines() -> None:
    summary = omg.validate_creation("bard", {})
    assert summary.ranks == dict.fromkeys(omg.ARCHETYPES_BY_KEY["bard"].disciplines, 1)
    assert (summary.spent, summary.remaining, summary.complete) == (0, 7, False)


def test_it_gives_a_warrior_the_chosen_weapon_mastery() -> None:
    summary = omg.validate_creation("warrior", {"Melee Combat": 3}, weapon_category="II")
    assert summary.ranks["Weapon Mastery II (single edged sword)"] == 1
    assert summary.spent == 2
    with pytest.raises(CreationError, match="chooses the weapon category"):
        omg.validate_creation("warrior", {})
    with pytest.raises(InvalidChoice, match="weapon category must be one of"):
        omg.validate_creation("warrior", {}, weapon_category="X")


@pytest.mark.parametrize(
    ("archetype", "ranks", "spent"),
    [
        ("ranger", {"Archery": 3, "Scouting/Recon": 2}, 3),  # own list: 1 a rank
        ("ranger", {"Cartography": 2, "Wrestling": 1}, 3),  # secondary lists: 1 a rank
        ("ranger", {"Melee Combat": 2}, 4),  # another archetype: 2 a rank
        ("ranger", {"Lock-picking": 3, "Archery": 2}, 7),
        ("monk", {"Melee Combat": 3, "Lock-picking": 2, "Archery": 2}, 7),  # Monk: always 1
        ("wizard", {"Accounting & Mathematics": 3}, 2),
        ("wizard", {"Spellcraft": 2}, 2),  # the archetype's signature art is its own list
        (
            "warrior",
            {"Weapon Mastery I (knife or dagger)": 2},
            2,
        ),  # other weapon skills: Warrior list
        ("rogue", {"Weapon Mastery I (knife or dagger)": 2}, 4),
        ("rogue", {"Scribe - read/write": 1}, 1),  # Monk list and a secondary list: the cheaper
    ],
)
def test_it_prices_creation_ranks(archetype: str, ranks: dict[str, int], spent: int) -> None:
    category = "III" if archetype == "warrior" else None
    assert omg.validate_creation(archetype, ranks, weapon_category=category).spent == spent


def test_it_caps_a_discipline_at_three_at_creation() -> None:
    with pytest.raises(CreationError, match="Archery: at most 3 ranks at creation, got 4"):
        omg.validate_creation("ranger", {"Archery": 4})


def test_it_refuses_to_overspend() -> None:
    with pytest.raises(CreationError, match="cost 8 points, only 7 are available"):
        omg.validate_creation("ranger", {"Melee Combat": 3, "Lock-picking": 1})


def test_it_refuses_dropping_a_free_rank_and_unknown_disciplines() -> None:
    with pytest.raises(CreationError, match="the archetype gives rank 1"):
        omg.validate_creation("ranger", {"Archery": 0})
    with pytest.raises(InvalidChoice, match="unknown discipline 'Juggling'"):
        omg.validate_creation("bard", {"Juggling": 1})
    assert omg.validate_creation("bard", {"Juggling": 2}, extra_secondary={"Juggling"}).spent == 2
    with pytest.raises(InvalidChoice, match="archetype must be one of"):
        omg.validate_creation("paladin", {})


SECONDARY_ONLY = {d for names in omg.SECONDARY_LISTS.values() for d in names} - {
    d for a in omg.ARCHETYPES for d in a.disciplines
}


@given(
    st.sampled_from([a.key for a in omg.ARCHETYPES]),
    st.dictionaries(
        st.sampled_from(sorted(SECONDARY_ONLY)),
        st.integers(0, 3),
        max_size=5,
    ),
)
def test_it_either_prices_a_build_within_seven_or_refuses_it(
    archetype: str, ranks: dict[str, int]
) -> None:
    category = "I" if archetype == "warrior" else None
    try:
        summary = omg.validate_creation(archetype, ranks, weapon_category=category)
    except CreationError:
        assert sum(ranks.values()) > 7
    else:
        assert summary.spent == sum(ranks.values())
        assert summary.spent + summary.remaining == 7
        assert all(1 <= r <= 3 for r in summary.ranks.values())
        assert summary.ranks.keys() >= {k for k, v in ranks.items() if v}


# --- Advancement --------------------------------------------------------------------------


def test_it_raises_disciplines_with_exp_at_the_rest() -> None:
    state = RestState(
        APTS,
        {
            "Melee Combat": DisciplineState(2, exp=2),
            "Archery": DisciplineState(4, exp=3),
            "Dancing": DisciplineState(1),
        },
        fate=1,
    )
    rest = omg.daily_rest(state, itv_d10=5)
    assert dict(rest.raised) == {"Melee Combat": (2, 4), "Archery": (4, 5)}
    assert rest.exp_lost == 2
    assert {k: v.rank for k, v in rest.state.disciplines.items()} == {
        "Melee Combat": 4,
        "Archery": 5,
        "Dancing": 1,
    }
    assert all(v.exp == 0 for v in rest.state.disciplines.values())
    assert (rest.itv, rest.itv_d10, rest.mna, rest.chi, rest.vit) == (13, 5, 10, 14, 10)
    assert rest.state.fate == 1


def test_it_buys_an_aptitude_with_three_fate_applied_at_the_rest() -> None:
    state = omg.buy_aptitude_raise(RestState(APTS, fate=7), "skl")
    state = omg.buy_aptitude_raise(state, "FOC")
    assert (state.fate, state.pending_raises) == (1, ("SKL", "FOC"))
    assert state.aptitudes == APTS  # not until the rest
    rest = omg.daily_rest(state, rng=random.Random(4))
    assert rest.state.aptitudes.skl == 5
    assert rest.state.aptitudes.foc == 3
    assert dict(rest.aptitudes_raised) == {"SKL": (4, 5), "FOC": (2, 3)}
    assert rest.state.pending_raises == ()
    assert rest.chi == 3 + 3 + 5 + 5


def test_it_refuses_an_aptitude_raise_without_fate_or_past_five() -> None:
    with pytest.raises(FateError, match="costs 3 Fate, the character has 2"):
        omg.buy_aptitude_raise(RestState(APTS, fate=2), "SPD")
    with pytest.raises(InvalidScore, match="VGR cannot go above 5"):
        omg.buy_aptitude_raise(RestState(APTS, fate=9), "VGR")
    once = omg.buy_aptitude_raise(RestState(APTS, fate=9), "SKL")
    with pytest.raises(InvalidScore, match="SKL cannot go above 5"):
        omg.buy_aptitude_raise(once, "SKL")


def test_it_needs_a_die_or_a_generator_for_the_rest() -> None:
    with pytest.raises(RulesError, match="give the ITV d10"):
        omg.daily_rest(RestState(APTS))


def test_it_keeps_or_swaps_the_reserve_roll() -> None:
    assert omg.reserve_roll(12, 87, keep_reserve=True) == omg.ReserveResult(used=12, rsv=87)
    assert omg.reserve_roll(12, 87, keep_reserve=False) == omg.ReserveResult(used=87, rsv=12)
    with pytest.raises(InvalidScore, match="RSV must be between 1 and 100"):
        omg.reserve_roll(0, 87, keep_reserve=True)


def test_it_offers_tables_as_choices() -> None:
    assert len(omg.WEAPON_CATEGORIES) == 9
    assert omg.WEAPON_CATEGORY_CHOICES[0] == ("I", "I. knife or dagger")
    assert [a.key for a in omg.ARCHETYPES] == [
        "ranger",
        "warrior",
        "monk",
        "rogue",
        "wizard",
        "bard",
    ]
    assert all(len(a.disciplines) == 7 for a in omg.ARCHETYPES)
    assert list(omg.SECONDARY_LISTS) == [
        "Scholarly Lore",
        "Tradeskills",
        "Craftsmanship",
        "Athletics",
    ]
    assert all(len(v) == 10 for v in omg.SECONDARY_LISTS.values())
    assert len(omg.WEAPONS) == 21
    assert len(omg.ARMORS) == 8
    assert all(
        w.category is None or w.category in omg.WEAPON_CATEGORIES_BY_NUMERAL for w in omg.WEAPONS
    )
    assert [t.pro for t in omg.PROFICIENCY_TIERS] == [55, 60, 70, 90, 100]
    assert [c.dif for c in omg.DIFFICULTY_CATEGORIES] == [10, 20, 30, 40, 50]
