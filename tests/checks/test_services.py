"""Checks outside combat, through the services: every kind against the engine, the Difficulty
Categories, table and server dice, EXP and Fate, Fate and undo restoring exactly, bad input."""

from __future__ import annotations

import random

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404

from checks import services
from checks.models import Check, ResourceChange
from checks.services import CheckConflict, Target, parse_roll, parse_target
from rules.engine import omg

pytestmark = [pytest.mark.django_db, pytest.mark.both_databases]

CATEGORIES = [(c.name, c.dif) for c in omg.DIFFICULTY_CATEGORIES]


def roll(t, character, target, value=None, user=None, rng=None, **kw):
    return services.roll_check(
        user=user or t.owner,
        character=character,
        target=target,
        roll=value,
        rng=rng or random.Random(1),
        **kw,
    )


def sheet(t, character):
    c = t.fresh(character)
    return (c.fate, c.exp_marks, dict(c.disciplines.values_list("name", "exp_marks")))


@pytest.mark.parametrize(("name", "dif"), CATEGORIES)
@pytest.mark.parametrize(
    ("target", "pro"),
    [
        ({"kind": "aptitude", "aptitude": "SKL"}, 70),  # SKL 4
        ({"kind": "discipline", "discipline": "Lock-picking"}, 85),  # SKL 4 + 3
        (
            {"kind": "discipline", "discipline": "lock-picking", "aptitude": "SPD"},
            80,
        ),  # paired anew
        ({"kind": "composite", "composite": "STM"}, 90),  # NRV 3 + VGR 5
    ],
)
def test_it_rolls_each_kind_against_each_category_as_the_engine_reads_it(
    table, target, pro, name, dif
):
    for value in (dif, pro, 44, 100, 3):
        check = roll(table, table.ysolde, parse_target(against=name, **target), value)
        expected = omg.check(pro, dif, value)
        assert (check.pro, check.dif, check.roll) == (pro, dif, value)
        assert check.degree == expected.degree.value
        assert check.physical


@pytest.mark.parametrize(("name", "dif"), CATEGORIES)
def test_it_reads_a_save_from_the_savers_side(table, name, dif):
    # STM 8: the save is DIF 40 against the opposing PRO (a tier or a number).
    target = parse_target(kind="save", composite="STM", against="Adept")
    assert target.against == 70
    for value in range(1, 101):
        check = roll(table, table.ysolde, target, value)
        opposing = omg.check(70, 40, value)
        assert check.success is not opposing.success
        assert check.degree == omg.save_degree(opposing.degree).value
    Check.objects.all().delete()


def test_it_rolls_server_dice_with_the_generator_it_is_given(table):
    target = parse_target(kind="aptitude", aptitude="SKL", against=20)
    check = roll(table, table.ysolde, target, rng=random.Random(7))
    assert check.roll == random.Random(7).randint(1, 100)
    assert not check.physical


def test_it_marks_exp_on_the_discipline_and_moves_fate_on_an_epic_success(table):
    target = parse_target(kind="discipline", discipline="Lock-picking", against="Ambitious")
    check = roll(table, table.ysolde, target, 85)
    assert check.degree == "epic_success"
    assert sheet(table, table.ysolde) == (3, 0, {"Lock-picking": 1, "Athletics": 0})
    assert "+1 EXP on Lock-picking" in check.effects


def test_it_takes_fate_on_an_epic_failure_and_marks_exp_too(table):
    target = parse_target(kind="discipline", discipline="Lock-picking", against=30)
    roll(table, table.ysolde, target, 30)
    assert sheet(table, table.ysolde) == (1, 0, {"Lock-picking": 1, "Athletics": 0})


def test_it_moves_only_fate_at_discipline_5(table):
    target = parse_target(kind="discipline", discipline="Athletics", against=20)
    check = roll(table, table.ysolde, target, 90)  # SPD 3 + 5: PRO 90
    assert (check.degree, check.exp) == ("epic_success", 0)
    assert sheet(table, table.ysolde) == (3, 0, {"Lock-picking": 0, "Athletics": 0})


def test_it_puts_an_undisciplined_epic_on_the_sheets_own_exp_marks(table):
    target = parse_target(kind="aptitude", aptitude="VGR", against=20)
    roll(table, table.ysolde, target, 75)  # VGR 5: PRO 75
    assert sheet(table, table.ysolde) == (3, 1, {"Lock-picking": 0, "Athletics": 0})


def test_it_never_takes_fate_below_zero_and_undo_gives_back_only_what_it_took(table):
    table.ysolde.fate = 0
    table.ysolde.save()
    target = parse_target(kind="aptitude", aptitude="SKL", against=20)
    roll(table, table.ysolde, target, 20)
    assert sheet(table, table.ysolde)[:2] == (0, 1)
    services.undo_latest(user=table.gm, campaign=table.campaign)
    assert sheet(table, table.ysolde)[:2] == (0, 0)


def test_it_revokes_the_latest_roll_exactly_for_one_fate(table):
    before = sheet(table, table.ysolde)
    target = parse_target(kind="discipline", discipline="Lock-picking", against=30)
    check = roll(table, table.ysolde, target, 85)
    revoked, new = services.spend_fate(
        user=table.owner, check=check, spender=table.ysolde, action="revoke", rng=random.Random()
    )
    assert new is None and revoked.status == "revoked"
    fate, exp, disciplines = sheet(table, table.ysolde)
    assert (fate, exp, disciplines) == (before[0] - 1, before[1], before[2])


def test_it_rerolls_with_the_same_pvd_and_applies_the_new_result(table):
    target = parse_target(kind="discipline", discipline="Lock-picking", against=30)
    check = roll(table, table.ysolde, target, 30)  # EpF: Fate 2 -> 1, EXP +1
    _, new = services.spend_fate(
        user=table.player,  # anyone's Fate: Bram spends his on Ysolde's roll
        check=check,
        spender=table.bram,
        action="reroll",
        roll=85,
        rng=random.Random(),
    )
    assert (new.pro, new.dif, new.degree, new.replaces_id) == (85, 30, "epic_success", check.pk)
    assert sheet(table, table.ysolde) == (3, 0, {"Lock-picking": 1, "Athletics": 0})
    assert table.fresh(table.bram).fate == 0


def test_it_undoes_a_reroll_and_its_fate_in_one_step(table):
    before_y, before_b = sheet(table, table.ysolde), sheet(table, table.bram)
    target = parse_target(kind="discipline", discipline="Lock-picking", against=30)
    check = roll(table, table.ysolde, target, 30)
    after_first = sheet(table, table.ysolde)
    services.spend_fate(
        user=table.player,
        check=check,
        spender=table.bram,
        action="reroll",
        roll=85,
        rng=random.Random(),
    )
    services.undo_latest(user=table.gm, campaign=table.campaign)
    assert sheet(table, table.ysolde) == after_first
    assert sheet(table, table.bram) == before_b
    services.undo_latest(user=table.gm, campaign=table.campaign)
    assert sheet(table, table.ysolde) == before_y
    assert list(Check.objects.values_list("status", flat=True)) == ["undone", "undone"]


def test_it_refuses_fate_on_a_roll_that_is_no_longer_the_latest(table):
    target = parse_target(kind="aptitude", aptitude="SKL", against=20)
    first = roll(table, table.ysolde, target, 50)
    roll(table, table.bram, target, 50, user=table.player)
    with pytest.raises(CheckConflict):
        services.spend_fate(
            user=table.owner, check=first, spender=table.ysolde, action="revoke", rng=None
        )
    assert table.fresh(table.ysolde).fate == 2


def test_it_refuses_undo_when_the_sheet_changed_since(table):
    target = parse_target(kind="aptitude", aptitude="SKL", against=20)
    roll(table, table.ysolde, target, 70)  # EpS: Fate 3
    table.ysolde.refresh_from_db()
    table.ysolde.fate = 9
    table.ysolde.save()
    with pytest.raises(CheckConflict):
        services.undo_latest(user=table.gm, campaign=table.campaign)
    assert table.fresh(table.ysolde).fate == 9


def test_it_lets_only_the_gm_undo(table):
    target = parse_target(kind="aptitude", aptitude="SKL", against=20)
    roll(table, table.ysolde, target, 70)
    with pytest.raises(PermissionDenied):
        services.undo_latest(user=table.owner, campaign=table.campaign)


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"kind": "spell", "aptitude": "SKL", "against": 20}, "kind"),
        ({"kind": "aptitude", "aptitude": "LCK", "against": 20}, "aptitude"),
        ({"kind": "aptitude", "aptitude": "SKL", "against": 51}, "against"),
        ({"kind": "aptitude", "aptitude": "SKL", "against": 4}, "against"),
        ({"kind": "aptitude", "aptitude": "SKL", "against": "Hard"}, "against"),
        ({"kind": "save", "composite": "STM", "against": 40}, "against"),
        ({"kind": "composite", "composite": "LUK", "against": 40}, "composite"),
        ({"kind": "discipline", "against": 40}, "discipline"),
    ],
)
def test_it_names_the_field_of_a_bad_target(fields, field):
    with pytest.raises(ValidationError) as exc:
        parse_target(**fields)
    assert field in exc.value.message_dict


@pytest.mark.parametrize("value", [0, 101, -5, "x", 1.5, True])
def test_it_refuses_a_roll_outside_the_d100(value):
    with pytest.raises(ValidationError) as exc:
        parse_roll(value)
    assert "roll" in exc.value.message_dict


def test_it_refuses_an_unknown_discipline_and_stores_nothing(table):
    target = parse_target(kind="discipline", discipline="Basket Weaving", against=20)
    with pytest.raises(ValidationError) as exc:
        roll(table, table.ysolde, target, 50)
    assert "discipline" in exc.value.message_dict
    assert not Check.objects.exists()


def test_it_refuses_a_roll_for_someone_elses_character(table):
    target = parse_target(kind="aptitude", aptitude="SKL", against=20)
    with pytest.raises(PermissionDenied):
        roll(table, table.bram, target, 50, user=table.owner)
    with pytest.raises(Http404):
        roll(table, table.bram, target, 50, user=table.outsider)
    assert not Check.objects.exists()


def test_it_lets_the_gm_roll_for_anyone_and_only_the_gm_roll_in_secret(table):
    target = parse_target(kind="aptitude", aptitude="SKL", against=20)
    assert roll(table, table.bram, target, 50, user=table.gm).roller == table.gm
    with pytest.raises(PermissionDenied):
        roll(table, table.ysolde, target, 50, secret=True)


def test_it_holds_a_secret_rolls_effects_until_the_gm_reveals_it(table):
    before = sheet(table, table.ysolde)
    target = parse_target(kind="aptitude", aptitude="SKL", against=20)
    check = roll(table, table.ysolde, target, 70, user=table.gm, secret=True)
    assert sheet(table, table.ysolde) == before
    services.reveal(user=table.gm, check=check)
    assert sheet(table, table.ysolde)[0] == before[0] + 1


def test_a_call_asks_characters_and_an_answer_uses_their_own_numbers(table, rng):
    target = parse_target(kind="discipline", discipline="Athletics", against="Ambitious")
    call = services.call_checks(
        user=table.gm, campaign=table.campaign, characters=[table.ysolde, table.bram], target=target
    )
    asked = {r.character_id: r for r in call.requests.all()}
    y = services.answer(user=table.owner, request=asked[table.ysolde.pk], rng=rng, roll=44)
    b = services.answer(user=table.player, request=asked[table.bram.pk], rng=rng, roll=44)
    assert (y.pro, y.aptitude, y.level) == (90, "SPD", 5)
    assert (b.pro, b.aptitude, b.level) == (50 + 5 * (table.bram.vgr + 2), "VGR", 2)
    with pytest.raises(CheckConflict):
        services.answer(user=table.owner, request=asked[table.ysolde.pk], rng=rng, roll=44)


def test_a_call_for_a_discipline_the_sheet_lacks_is_undisciplined(table, rng):
    target = parse_target(kind="discipline", discipline="Gymnastics", against=20)
    call = services.call_checks(
        user=table.gm, campaign=table.campaign, characters=[table.bram], target=target
    )
    check = services.answer(user=table.player, request=call.requests.get(), rng=rng, roll=50)
    assert (check.level, check.aptitude) == (0, "SPD")
    assert check.pro == 50 + 5 * table.bram.spd


def test_only_the_gm_calls_and_a_player_answers_only_for_their_own(table, rng):
    target = parse_target(kind="aptitude", aptitude="SKL", against=20)
    with pytest.raises(PermissionDenied):
        services.call_checks(
            user=table.owner, campaign=table.campaign, characters=[table.bram], target=target
        )
    call = services.call_checks(
        user=table.gm, campaign=table.campaign, characters=[table.bram], target=target
    )
    with pytest.raises(PermissionDenied):
        services.answer(user=table.owner, request=call.requests.get(), rng=rng)


def test_a_secret_call_is_rolled_by_the_server_for_a_player(table, rng):
    target = parse_target(kind="aptitude", aptitude="SKL", against=20)
    call = services.call_checks(
        user=table.gm,
        campaign=table.campaign,
        characters=[table.ysolde],
        target=target,
        secret=True,
    )
    with pytest.raises(ValidationError):
        services.answer(user=table.owner, request=call.requests.get(), rng=rng, roll=70)
    check = services.answer(user=table.owner, request=call.requests.get(), rng=rng)
    assert check.secret and not check.physical


def test_it_spends_and_restores_mana_and_chi_within_bounds_and_logs_it(table):
    y = table.fresh(table.ysolde)
    top = y.maxima().mna
    change = services.change_resource(
        user=table.owner, character=y, pool="mana", amount=-3, cost="ARC"
    )
    assert (change.before, change.after) == (top, top - 3)
    with pytest.raises(ValidationError):
        services.change_resource(user=table.owner, character=y, pool="mana", amount=4)
    with pytest.raises(ValidationError):
        services.change_resource(user=table.owner, character=y, pool="chi", amount=-99)
    services.change_resource(user=table.owner, character=y, pool="mana", amount=3)
    assert table.fresh(y).mana == top
    assert ResourceChange.objects.count() == 2
    with pytest.raises(PermissionDenied):
        services.change_resource(user=table.player, character=y, pool="mana", amount=-1)


def test_the_daily_rest_refills_what_was_spent(table):
    from sheets.services import daily_rest

    y = table.fresh(table.ysolde)
    services.change_resource(user=table.owner, character=y, pool="chi", amount=-4, cost="CHI")
    daily_rest(user=y.owner, character=y, rng=random.Random(1))
    assert table.fresh(y).chi == y.maxima().chi


def test_target_is_a_plain_value():
    assert Target("aptitude", 20, "SKL") == parse_target(
        kind="aptitude", aptitude="SKL", against=20
    )
