"""Simple Die System engine: stacking, die sizes, the flag die, ties and exact odds."""

from __future__ import annotations

import doctest
import itertools
import json
import random
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules import sds
from rules.engine.errors import DiceError, InvalidChoice, InvalidScore, RulesError

even_sizes = st.integers(2, 30).map(lambda n: 2 * n)


# --- seed examples -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bonuses", "expected"),
    [
        ({"mod": 2, "self_buff": 2}, 3),  # seed: +2 ring and +2 buff is +3
        ({"mod": 2, "self_buff": 3}, 4),  # seed: +2 ring and +3 buff is +4
        ({"mod": 1}, 1),
        ({"mod": 3, "self_buff": 1, "party_buff": 2}, 5),
        ({"party_buff": 4, "focus": 2}, 6),
        ({"mod": 2, "focus": 1, "penalty": 4}, -1),
        ({}, 0),
    ],
)
def test_it_stacks_bonuses(bonuses: dict[str, int], expected: int) -> None:
    assert sds.stack_bonus(**bonuses) == expected


@pytest.mark.parametrize(
    ("skill", "bonuses", "effective", "die"),
    [
        (8, {"mod": 1}, 10, 10),  # seed: skill 8 with a +1 mod rolls a d10
        (8, {"mod": 2, "self_buff": 2}, 14, 20),
        (12, {"mod": 3}, 18, 20),
        (4, {"penalty": 1}, 4, 4),  # never below 4
        (6, {"penalty": 5}, 4, 4),
        (20, {"focus": 1}, 22, 100),
        (100, {}, 100, 100),
    ],
)
def test_it_sizes_the_skill_die(
    skill: int, bonuses: dict[str, Any], effective: int, die: int
) -> None:
    check = sds.SkillCheck(skill, **bonuses)
    assert (check.effective_skill, check.die) == (effective, die)


@pytest.mark.parametrize(("face", "result"), [(17, 17), (18, 18), (19, 18), (20, 18), (1, 1)])
def test_it_caps_an_odd_size_rolled_on_a_bigger_die(face: int, result: int) -> None:
    r = sds.check(sds.SkillCheck(18), skill_rolls=[face], flag_rolls=[5])
    assert (r.die, r.skill_result) == (20, result)


@pytest.mark.parametrize(
    ("flag_rolls", "flags", "multiplier"),
    [
        ([1], ("critical",), 1),
        ([19], ("tremendous",), 1),
        ([7], (), 1),
        ([10, 4], ("heroic",), 10),
        ([20, 19], ("heroic",), 10),  # a 19 on the re-roll only ends the chain
        ([10, 1], ("heroic",), 10),
        ([10, 20, 3], ("heroic",), 100),
        ([20, 20, 10, 2], ("heroic",), 1000),
    ],
)
def test_it_reads_the_flag_die(
    flag_rolls: list[int], flags: tuple[str, ...], multiplier: int
) -> None:
    r = sds.check(sds.SkillCheck(6), skill_rolls=[5], flag_rolls=flag_rolls)
    assert (r.flags, r.multiplier, r.result) == (flags, multiplier, 5 * multiplier)


@pytest.mark.parametrize(
    ("skill_face", "flag", "difficulty", "gm_roll", "winner"),
    [
        (4, 5, sds.Difficulty(die=10), 4, "player"),  # seed: a tie on 4 goes to the player
        (7, 5, sds.Difficulty(die=10), 7, "gm"),  # seed: a tie on 7 goes to the GM
        (8, 5, sds.Difficulty(die=10), 3, "player"),
        (2, 5, sds.Difficulty(die=10), 3, "gm"),
        (8, 5, sds.Difficulty(hard=8), None, "player"),  # Hard 8: an 8 is enough
        (7, 5, sds.Difficulty(hard=7), None, "gm"),
        (1, 10, sds.Difficulty(hard=8), None, "player"),  # heroic 1 x10 = 10
        (8, 1, sds.Difficulty(die=10), 3, "player"),  # a critical never changes success
        (2, 19, sds.Difficulty(die=10), 3, "gm"),  # nor does a tremendous result
    ],
)
def test_it_settles_against_the_difficulty(
    skill_face: int, flag: int, difficulty: sds.Difficulty, gm_roll: int | None, winner: str
) -> None:
    flags = [flag, 2] if flag in (10, 20) else [flag]
    r = sds.check(
        sds.SkillCheck(8), difficulty, skill_rolls=[skill_face], flag_rolls=flags, gm_roll=gm_roll
    )
    assert r.winner == winner


def test_it_rolls_a_gm_die_of_odd_size_on_the_next_die() -> None:
    r = sds.check(
        sds.SkillCheck(8), sds.Difficulty(die=14), skill_rolls=[8], flag_rolls=[3], gm_roll=17
    )
    assert (r.gm_die, r.gm_roll, r.gm_result, r.winner) == (20, 17, 14, "gm")


def test_it_keeps_the_lower_of_two_unskilled_rolls() -> None:
    r = sds.check(sds.SkillCheck(8, unskilled=True), skill_rolls=[6, 3], flag_rolls=[5])
    assert (r.skill_rolls, r.skill_result) == ((6, 3), 3)


def test_it_lists_the_dice_for_a_diceless_gm() -> None:
    assert sds.dice_to_roll(sds.SkillCheck(8), sds.Difficulty(die=10)) == ("d8", "d10", "d20")
    assert sds.dice_to_roll(sds.SkillCheck(8), sds.Difficulty(die=8)) == ("d8", "d8", "d20")
    assert sds.dice_to_roll(sds.SkillCheck(8), sds.Difficulty(hard=8)) == ("d8", "d20")
    unskilled = sds.SkillCheck(14, unskilled=True)
    assert sds.dice_to_roll(unskilled, sds.Difficulty(die=18)) == ("d20", "d20", "d20", "d20")
    r = sds.check(
        sds.SkillCheck(8),
        sds.Difficulty(die=8),
        skill_rolls=[6],
        gm_roll=6,
        flag_rolls=[3],
        diceless=True,
    )
    assert r.diceless and r.winner == "player"


def test_it_rolls_with_a_seeded_random() -> None:
    check, difficulty = sds.SkillCheck(10, mod=1, unskilled=True), sds.Difficulty(die=12)
    a = sds.check(check, difficulty, rng=random.Random(99))
    assert a == sds.check(check, difficulty, rng=random.Random(99))
    rng = random.Random(1)
    results = [sds.check(check, difficulty, rng=rng) for _ in range(500)]
    assert any(r.multiplier > 1 for r in results)
    assert {r.winner for r in results} == {"player", "gm"}


@pytest.mark.parametrize(
    ("typed", "missing"),
    [
        ({"skill_rolls": [4, 9], "flag_rolls": [2]}, "gm_roll"),
        ({"skill_rolls": [4, 9], "gm_roll": 5}, "flag_rolls"),
        ({"flag_rolls": [2], "gm_roll": 5}, "skill_rolls"),
        ({"gm_roll": 5}, "skill_rolls"),
    ],
)
def test_it_never_tops_up_typed_in_dice_with_the_generator(
    typed: dict[str, object], missing: str
) -> None:
    # Dice typed in at the table are read, never mixed with generated ones: a roll is either
    # all typed in or all the generator's (docs/rules.md, "Simple Die System").
    check, difficulty = sds.SkillCheck(10, mod=1, unskilled=True), sds.Difficulty(die=12)
    with pytest.raises(DiceError, match=rf"^{missing}: "):
        sds.check(check, difficulty, rng=random.Random(3), **typed)  # type: ignore[arg-type]  # the wrong type on purpose


# --- exact odds ----------------------------------------------------------------------------


def _flag_sequences(depth: int) -> Iterator[tuple[tuple[int, ...], Fraction]]:
    """Every flag sequence with fewer than ``depth`` heroic rolls, and its probability."""

    def walk(prefix: tuple[int, ...]) -> Iterator[tuple[tuple[int, ...], Fraction]]:
        for f in range(1, 21):
            seq = (*prefix, f)
            if f in (10, 20):
                if len(seq) < depth:
                    yield from walk(seq)
            else:
                yield seq, Fraction(1, 20 ** len(seq))

    return walk(())


def _brute_player(check: sds.SkillCheck, difficulty: sds.Difficulty) -> Fraction:
    die = check.die
    skill_faces = list(itertools.product(range(1, die + 1), repeat=2 if check.unskilled else 1))
    gm_faces: list[int | None] = (
        list(range(1, difficulty.physical + 1)) if difficulty.physical else [None]
    )
    p_skill = Fraction(1, len(skill_faces))
    p_gm = Fraction(1, len(gm_faces))
    depth = 4
    player = Fraction(0)
    for flags, p_flag in _flag_sequences(depth):
        for rolls in skill_faces:
            for gm in gm_faces:
                r = sds.check(check, difficulty, skill_rolls=rolls, flag_rolls=flags, gm_roll=gm)
                if r.winner == "player":
                    player += p_flag * p_skill * p_gm
    # Chains of `depth` or more heroic rolls multiply by 10**depth: past any GM result here.
    return player + Fraction(1, 10**depth)


@pytest.mark.parametrize(
    ("check", "difficulty"),
    [
        (sds.SkillCheck(8), sds.Difficulty(die=10)),
        (sds.SkillCheck(4), sds.Difficulty(die=4)),
        (sds.SkillCheck(6, unskilled=True), sds.Difficulty(die=8)),
        (sds.SkillCheck(14), sds.Difficulty(die=6)),
        (sds.SkillCheck(6), sds.Difficulty(hard=8)),
        (sds.SkillCheck(10), sds.Difficulty(hard=9)),
        (sds.SkillCheck(4), sds.Difficulty(hard=60)),
    ],
)
def test_it_matches_brute_force_win_odds(check: sds.SkillCheck, difficulty: sds.Difficulty) -> None:
    odds = sds.check_odds(check, difficulty)
    assert odds.player == _brute_player(check, difficulty)


def test_it_gives_hard_eight_only_to_heroes_below_skill_eight() -> None:
    for skill in (4, 6):
        assert sds.check_odds(sds.SkillCheck(skill), sds.Difficulty(hard=8)).player == Fraction(
            1, 10
        )
    # Hard 16 needs a heroic flag, and a 1 on the skill die needs two of them (10 < 16).
    hard16 = sds.check_odds(sds.SkillCheck(12), sds.Difficulty(hard=16)).player
    assert hard16 == Fraction(9, 100) * Fraction(11, 12) + Fraction(1, 100)


def test_it_gives_the_skill_and_flag_distributions() -> None:
    odds = sds.check_odds(sds.SkillCheck(18))
    assert odds.skill_result[18] == Fraction(3, 20)
    assert odds.skill_result[1] == Fraction(1, 20)
    assert odds.player is None
    assert sum(odds.flags.values()) == 1
    assert odds.heroic_at_least[2] == Fraction(1, 100)
    low = sds.check_odds(sds.SkillCheck(4, unskilled=True)).skill_result
    assert low == {1: Fraction(7, 16), 2: Fraction(5, 16), 3: Fraction(3, 16), 4: Fraction(1, 16)}


@settings(max_examples=60, deadline=None)
@given(
    skill=even_sizes,
    unskilled=st.booleans(),
    gm=st.one_of(
        even_sizes.map(lambda d: sds.Difficulty(die=d)),
        st.integers(1, 200).map(lambda h: sds.Difficulty(hard=h)),
    ),
)
def test_it_has_odds_that_sum_to_one(skill: int, unskilled: bool, gm: sds.Difficulty) -> None:
    odds = sds.check_odds(sds.SkillCheck(skill, unskilled=unskilled), gm)
    assert odds.player is not None and odds.gm is not None
    assert odds.player + odds.gm == 1
    assert 0 < odds.player <= 1  # a long enough heroic chain beats any difficulty
    assert sum(odds.skill_result.values()) == 1
    assert sum(odds.gm_result.values()) == 1
    # Rolling skilled is never worse than unskilled.
    if unskilled:
        skilled = sds.check_odds(sds.SkillCheck(skill), gm).player
        assert skilled is not None and skilled >= odds.player


# --- bad input -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: sds.SkillCheck(7), InvalidScore),
        (lambda: sds.SkillCheck(2), InvalidScore),
        (lambda: sds.SkillCheck(100, mod=1), InvalidScore),
        (lambda: sds.SkillCheck(8, mod=-1), InvalidScore),
        (lambda: sds.SkillCheck(8, unskilled="yes"), InvalidChoice),  # type: ignore[arg-type]  # the wrong type on purpose
        (lambda: sds.Difficulty(), InvalidChoice),
        (lambda: sds.Difficulty(die=8, hard=8), InvalidChoice),
        (lambda: sds.Difficulty(die=9), InvalidScore),
        (lambda: sds.Difficulty(hard=0), InvalidScore),
        (lambda: sds.check(sds.SkillCheck(8), skill_rolls=[9], flag_rolls=[2]), DiceError),
        (lambda: sds.check(sds.SkillCheck(18), skill_rolls=[21], flag_rolls=[2]), DiceError),
        (
            lambda: sds.check(sds.SkillCheck(8, unskilled=True), skill_rolls=[3], flag_rolls=[2]),
            DiceError,
        ),
        (lambda: sds.check(sds.SkillCheck(8), skill_rolls=[3], flag_rolls=[10]), DiceError),
        (lambda: sds.check(sds.SkillCheck(8), skill_rolls=[3], flag_rolls=[5, 3]), DiceError),
        (lambda: sds.check(sds.SkillCheck(8), skill_rolls=[3], flag_rolls=[10, 2, 5]), DiceError),
        (lambda: sds.check(sds.SkillCheck(8), skill_rolls=[3], flag_rolls=[]), DiceError),
        (lambda: sds.check(sds.SkillCheck(8), skill_rolls=[3], flag_rolls=[21]), DiceError),
        (lambda: sds.check(sds.SkillCheck(8), skill_rolls=[3]), DiceError),
        (
            lambda: sds.check(
                sds.SkillCheck(8),
                sds.Difficulty(hard=8),
                skill_rolls=[3],
                flag_rolls=[2],
                gm_roll=4,
            ),
            DiceError,
        ),
        (
            lambda: sds.check(
                sds.SkillCheck(8), sds.Difficulty(die=10), skill_rolls=[3], flag_rolls=[2]
            ),
            DiceError,
        ),
        (
            lambda: sds.check(
                sds.SkillCheck(8),
                sds.Difficulty(die=10),
                skill_rolls=[3],
                flag_rolls=[2],
                gm_roll=11,
            ),
            DiceError,
        ),
    ],
)
def test_it_rejects_bad_input(call: object, error: type[RulesError]) -> None:
    with pytest.raises(error) as info:
        call()  # type: ignore[operator]  # a lambda of the table
    assert str(info.value)


def test_it_keeps_its_docstring_examples_true() -> None:
    assert doctest.testmod(sds).failed == 0


def test_it_serialises_results_and_odds_for_json() -> None:
    r = sds.check(
        sds.SkillCheck(8),
        sds.Difficulty(die=10),
        skill_rolls=[5],
        flag_rolls=[10, 20, 3],
        gm_roll=7,
    ).as_dict()
    assert (r["die"], r["result"], r["flags"], r["winner"]) == ("d8", 500, ["heroic"], "player")
    odds = sds.check_odds(sds.SkillCheck(4), sds.Difficulty(hard=8)).as_dict(exact=True)
    assert odds["player"] == "1/10"
    json.dumps([r, odds])
