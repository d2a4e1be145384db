"""Exact OMG odds, cross-checked against icepool and against the engine itself."""

from __future__ import annotations

from collections import Counter

import icepool
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rules import odds, omg
from rules.engine.errors import InvalidChoice, InvalidScore
from rules.engine.omg import Attacker, Defender, Degree


def test_it_counts_the_seventy_v_twenty_table() -> None:
    o = odds.check_odds(70, 20)
    assert dict(o.counts) == {
        Degree.SUCCESS: 44,
        Degree.FAILURE: 44,
        Degree.DRAMATIC_SUCCESS: 5,
        Degree.DRAMATIC_FAILURE: 1,
        Degree.EPIC_SUCCESS: 1,
        Degree.EPIC_FAILURE: 1,
        Degree.SUCCESS_WITH_SACRIFICE: 4,
    }
    assert (o.second_hit, o.hits) == (25, 54)
    assert o.as_dict()["counts"] == {d.value: n for d, n in o.counts.items()}


def test_it_tops_dramatic_failure_at_four_in_a_hundred() -> None:
    # The seed: the difficulty alone sets dramatic failure, at most 4% (11, 22, 33, 44 < 50).
    assert (
        max(
            odds.check_odds(p, d).counts[Degree.DRAMATIC_FAILURE]
            for p in range(55, 101)
            for d in range(5, 51)
        )
        == 4
    )


def _icepool_counts(pro: int, dif: int) -> dict[Degree, int]:
    # Two d10 read as faces 0..9 (tens, units), "00" counting as 100.
    tens = icepool.Die(range(10))
    units = icepool.Die(range(10))
    roll = icepool.map(lambda t, u: (t * 10 + u) or 100, tens, units)
    degrees = roll.map(lambda r: omg.degree_of(r, pro, dif).value)
    return {Degree(k): q for k, q in degrees.items()}


def _icepool_second(pro: int, dif: int) -> int:
    def second(t: int, u: int) -> bool:
        r = (t * 10 + u) or 100
        rev = (u * 10 + t) or 100
        first = dif < r <= pro or (r == 100 or r % 11 == 0) and r > pro
        return first and dif < rev <= pro

    return icepool.map(second, icepool.Die(range(10)), icepool.Die(range(10))).quantity(True)


@pytest.mark.parametrize(
    ("pro", "dif"), [(70, 20), (55, 50), (100, 5), (80, 25), (85, 35), (60, 44), (99, 11)]
)
def test_it_agrees_with_icepool(pro: int, dif: int) -> None:
    o = odds.check_odds(pro, dif)
    expected = _icepool_counts(pro, dif)
    assert {d: n for d, n in o.counts.items() if n} == expected
    assert o.second_hit == _icepool_second(pro, dif)
    assert icepool.d100.denominator() == odds.FACES


def test_it_agrees_with_icepool_on_damage() -> None:
    a = Attacker(omg.StrikeMode.MIGHTY, 5, 3, 4, 1)
    d = Defender(omg.DefenseMode.DODGE, 3, 2, 3, 1)
    s = odds.strike_odds(a, d)

    def damage(t: int, u: int) -> int:
        r = (t * 10 + u) or 100
        return omg.strike(a, d, r).damage

    expected = icepool.map(damage, icepool.Die(range(10)), icepool.Die(range(10)))
    assert dict(s.total) == dict(expected.items())


@given(st.integers(55, 100), st.integers(5, 50))
def test_it_sums_every_odds_to_a_hundred(pro: int, dif: int) -> None:
    o = odds.check_odds(pro, dif)
    assert sum(o.counts.values()) == 100
    assert o.counts[Degree.EPIC_SUCCESS] == 1
    assert o.counts[Degree.EPIC_FAILURE] == 1
    assert 0 <= o.second_hit <= o.hits


strikes = st.builds(
    Attacker,
    st.sampled_from(list(omg.StrikeMode)),
    st.integers(1, 5),
    st.integers(0, 5),
    st.integers(0, 5),
    st.integers(0, 5),
)
defenses = st.builds(
    Defender,
    st.sampled_from(list(omg.DefenseMode)),
    st.integers(1, 5),
    st.integers(0, 5),
    st.integers(0, 5),
    st.integers(0, 5),
)


@given(strikes, defenses)
def test_it_matches_the_engine_face_by_face(a: Attacker, d: Defender) -> None:
    s = odds.strike_odds(a, d)
    totals = Counter(omg.strike(a, d, r).damage for r in range(1, 101))
    assert dict(s.total) == dict(totals)
    assert sum(s.first.values()) == 100
    assert s.first_miss == 100 - s.check.hits
    assert all(dmg >= 0 for dmg in s.total)
    if s.second is None:
        assert not (a.disciplined and a.mode is omg.StrikeMode.FAST)
        assert s.second_miss == 100
    else:
        assert sum(s.second.values()) == 100
        assert s.second_miss == 100 - s.check.second_hit


@given(strikes.filter(lambda a: a.mode is omg.StrikeMode.PRECISE and a.disciplined), defenses)
def test_it_shows_precise_ignoring_armor(a: Attacker, d: Defender) -> None:
    bare = Defender(d.mode, d.apt, d.dsc)
    assert odds.strike_odds(a, d).first == odds.strike_odds(a, bare).first


def test_it_gives_the_seed_fast_strike_a_second_distribution() -> None:
    s = odds.damage_odds(
        strike="fast",
        attack_apt=3,
        attack_dsc=3,
        weapon_dmg=4,
        defense="dodge",
        defense_apt=3,
        defense_dsc=2,
        arm=2,
    )
    assert (s.pro, s.dif) == (80, 25)
    assert s.second is not None
    assert s.second_miss == 100 - s.check.second_hit
    assert s.mean_damage > 0
    assert s.as_dict()["second"] == dict(s.second)


def test_it_refuses_bad_odds_queries() -> None:
    with pytest.raises(InvalidScore, match="PRO must be between 55 and 100"):
        odds.check_odds(101, 20)
    with pytest.raises(InvalidScore, match="DIF must be a whole number"):
        odds.check_odds(70, 2.5)  # type: ignore[arg-type]  # the wrong type on purpose
    with pytest.raises(InvalidChoice, match="strike mode must be one of"):
        odds.damage_odds(strike="wild", attack_apt=3, defense="dodge", defense_apt=3)
