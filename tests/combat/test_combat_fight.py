"""A full scripted fight from the seed's numbers, with the rolls given, checking every number
after each step: wounds, Vitality, armor, weapon DMG, EXP, Fate, turns and the log."""

from __future__ import annotations

import random

import pytest
from django.core.exceptions import PermissionDenied

from combat import services
from combat.models import CombatLogEntry, Declaration, Encounter, Participant
from rules.engine.omg_data import weapon_discipline
from tests.fight_steps import declare, declare_and_defend, strike

pytestmark = [pytest.mark.django_db, pytest.mark.both_databases]


def _state(fight):
    fight.refresh()
    y, t = fight.ysolde.character, fight.thug.character
    return {
        "y_chest": fight.zone(fight.ysolde, "chest").wounds,
        "y_chest_arm": fight.zone(fight.ysolde, "chest").arm,
        "y_vit": y.vitality,
        "y_fate": y.fate,
        "y_exp": y.disciplines.get(name=weapon_discipline("III")).exp_marks,
        "t_arm_wounds": fight.zone(fight.thug, "left arm").wounds,
        "t_arm_arm": fight.zone(fight.thug, "left arm").arm,
        "t_vit": t.vitality,
        "hatchet": fight.weapon(fight.thug).dmg,
        "t_counter": fight.thug.counterattacks,
        "t_state": fight.thug.state,
        "y_state": fight.ysolde.state,
    }


def test_it_starts_with_the_initiative_order(fight):
    assert fight.encounter.status == "running"
    assert fight.encounter.round == 1
    assert fight.encounter.turn_id == fight.ysolde.pk
    assert [fight.ysolde.position, fight.thug.position] == [0, 1]
    assert (fight.ysolde.initiative, fight.thug.initiative) == (14, 9)


def test_it_runs_the_seed_fight_step_by_step(fight):
    gm, player = fight.table.gm, fight.table.player
    start = _state(fight)
    assert start == {
        "y_chest": 0,
        "y_chest_arm": 2,
        "y_vit": 10,
        "y_fate": 1,
        "y_exp": 0,
        "t_arm_wounds": 0,
        "t_arm_arm": 2,
        "t_vit": 7,
        "hatchet": 4,
        "t_counter": 0,
        "t_state": "active",
        "y_state": "active",
    }

    # 1. Ysolde: fast strike (80) at the thug's left arm; the thug dodges (SPD 2 + Melee 1:
    #    15). Rolled 43: both 43 and its reverse 34 hit. SUM 7 + DMG 4 = 11, minus ARM 2, halved
    #    by the dodge = 4; the armor wears to 1, so the second hit: 11 - 1 = 10, halved = 5.
    decl = declare(
        fight.encounter, fight.ysolde, fight.thug, action="fast", zone="left arm", actor=player
    )
    odds = services.declaration_odds(
        Declaration.objects.select_related(
            "attacker__character", "target__character", "zone", "weapon", "encounter"
        ).get(pk=decl.pk)
    )
    assert odds["dodge"]["pvd"] == "80v15" and odds["parry"]["pvd"] == "80v20"
    services.declare_defense(declaration=decl, defense="dodge", actor=gm)
    entry = services.resolve(declaration=decl, roll=43, actor=player)
    assert entry.physical and entry.roll == 43
    assert [h["damage"] for h in entry.payload["result"]["hits"]] == [4, 5]
    assert _state(fight) == {**start, "t_arm_wounds": 9, "t_arm_arm": 0}

    # 2. The thug's turn: mighty strike (VGR 4 + Axe 2: 80) at Ysolde's chest; she blocks
    #    (VGR 5 + Melee 2: 35). Rolled 62: SUM 8 + 4 = 12, x2 = 24, minus 2 = 22 wounds; BZF 12,
    #    so 10 over: Vitality 10 -> 0, grievous wound, down. Leather wears to 1.
    services.next_turn(encounter=fight.encounter, actor=player)
    fight.refresh()
    assert fight.encounter.turn_id == fight.thug.pk
    decl2 = declare_and_defend(
        fight.encounter, fight.thug, fight.ysolde, actor=gm, defender=player, defense="block"
    )
    roll2 = services.resolve(declaration=decl2, rng=_rng_rolling(62), actor=gm)
    assert roll2.roll == 62 and not roll2.physical
    after2 = {**start, "t_arm_wounds": 9, "t_arm_arm": 0}
    assert _state(fight) == {
        **after2,
        "y_chest": 22,
        "y_chest_arm": 1,
        "y_vit": 0,
        "y_state": "down",
    }
    assert fight.ysolde.stamina_due
    assert fight.zone(fight.ysolde, "chest").grievous

    # 3. Ysolde's player spends her 1 Fate to re-roll: everything of roll 62 is undone and the
    #    new roll, 11, is a dramatic failure against her disciplined block: the hatchet
    #    loses 1 DMG.
    fate_entry, reroll = services.spend_fate(
        entry=roll2, spender=fight.ysolde, action="reroll", roll=11, actor=player
    )
    assert fate_entry.reverts_id == roll2.pk and reroll.payload["reroll_of"] == roll2.pk
    assert _state(fight) == {**after2, "y_fate": 0, "hatchet": 3}
    assert not fight.ysolde.stamina_due
    assert fight.zone(fight.ysolde, "chest").grievous == ""

    # 4. Round 2. Ysolde: precise strike (SKL 4 + 3: 85) at the same arm; the thug parries
    #    (SKL 3 + 1: 20). Rolled 85 = PRO: epic success, +1 EXP on Swordsmanship, +1 Fate.
    #    SUM 8 + 5 = 13 + 4 = 17, armor bypassed: arm 9 -> 26, 13 over BZF 13, Vitality 7 -> 0.
    #    The parry earns the thug a counterattack.
    services.next_turn(encounter=fight.encounter, actor=gm)
    fight.refresh()
    assert (fight.encounter.round, fight.encounter.turn_id) == (2, fight.ysolde.pk)
    decl3 = declare_and_defend(
        fight.encounter,
        fight.ysolde,
        fight.thug,
        action="precise",
        zone="left arm",
        actor=gm,  # the GM may act for anyone
        defender=gm,
    )
    before4 = _state(fight)
    roll3 = services.resolve(declaration=decl3, roll=85, actor=player)
    assert roll3.payload["result"]["abbr"] == "EpS"
    after4 = {
        **before4,
        "t_arm_wounds": 26,
        "t_vit": 0,
        "t_state": "down",
        "y_exp": 1,
        "y_fate": 1,
        "t_counter": 1,
    }
    assert _state(fight) == after4

    # 5. The GM undoes it: every number is back, the attack is open for a roll again.
    undo = services.undo_last(encounter=fight.encounter, actor=gm)
    assert undo.reverts_id == roll3.pk
    assert _state(fight) == before4
    assert Declaration.objects.get(pk=decl3.pk).status == "defended"

    # 6. Rolled again for real: 40, a plain success. 4 + 10 = 14 + 4 = 18 damage, 26 + ...
    roll4 = services.resolve(declaration=decl3, roll=40, actor=player)
    assert roll4.payload["result"]["damage"] == 18
    assert _state(fight)["t_arm_wounds"] == 27

    # The log only grew, in order.
    seqs = list(fight.encounter.log.values_list("seq", flat=True))
    assert seqs == list(range(1, len(seqs) + 1))


def test_it_emits_each_entry_after_commit_and_nothing_on_rollback(
    fight, emitted, django_capture_on_commit_callbacks
):
    player, gm = fight.table.player, fight.table.gm
    with django_capture_on_commit_callbacks(execute=True):
        decl, declared = services.declare_attack(
            encounter=fight.encounter,
            attacker=fight.ysolde,
            target=fight.thug,
            action="mighty",
            zone=fight.zone(fight.thug, "chest"),
            weapon=fight.weapon(fight.ysolde),
            actor=player,
        )
    with django_capture_on_commit_callbacks(execute=True):
        defended = services.declare_defense(declaration=decl, defense="parry", actor=gm)
    with django_capture_on_commit_callbacks(execute=True):
        rolled = services.resolve(declaration=decl, roll=43, actor=player)
    assert emitted == [declared, defended, rolled]
    # Ysolde has no Fate left: the re-roll undoes roll 43 inside its transaction, then fails;
    # everything rolls back and nothing is sent.
    type(fight.ysolde.character).objects.filter(pk=fight.ysolde.character_id).update(fate=0)
    with (
        django_capture_on_commit_callbacks(execute=True) as callbacks,
        pytest.raises(services.CombatError, match="no Fate"),
    ):
        services.spend_fate(
            entry=rolled, spender=fight.ysolde, action="reroll", roll=90, actor=player
        )
    assert callbacks == [] and len(emitted) == 3
    assert fight.zone(fight.thug, "chest").wounds == 20


def _rng_rolling(value):
    class Fixed(random.Random):
        def randint(self, a, b):
            return value

    return Fixed()


def test_it_resolves_a_declaration_only_once(fight):
    decl = declare_and_defend(
        fight.encounter, fight.ysolde, fight.thug, actor=fight.table.player, defender=fight.table.gm
    )
    services.resolve(declaration=decl, roll=43, actor=fight.table.player)
    with pytest.raises(services.CombatConflict):
        services.resolve(declaration=decl, roll=43, actor=fight.table.player)
    assert CombatLogEntry.objects.filter(kind="roll").count() == 1
    # The seed's example: 43 -> 7 + 4 = 11, x2 = 22, minus leather 2 = 20.
    assert fight.zone(fight.thug, "chest").wounds == 20


def test_it_waits_for_the_defense_before_rolling(fight):
    decl = declare(
        fight.encounter,
        fight.ysolde,
        fight.thug,
        action="fast",
        weapon=None,
        actor=fight.table.player,
    )
    with pytest.raises(services.CombatError, match="defense"):
        services.resolve(declaration=decl, roll=50, actor=fight.table.player)


def test_it_strips_melee_from_the_defense_after_a_feint(fight):
    gm, player = fight.table.gm, fight.table.player
    feint, _ = services.declare_attack(
        encounter=fight.encounter,
        attacker=fight.ysolde,
        target=fight.thug,
        action="feint",
        actor=player,
    )
    assert feint.status == "defended"  # against Focus + Melee: nothing to declare
    entry = services.resolve(declaration=feint, roll=50, actor=player)
    assert entry.payload["result"]["condition"] == "feinted"
    decl = declare_and_defend(
        fight.encounter,
        fight.ysolde,
        fight.thug,
        action="fast",
        actor=player,
        defender=gm,
        defense="dodge",
    )
    # SPD 2 alone: DIF 10, and the dodge no longer halves. 43: 11 - 2 = 9, then 11 - 1 = 10.
    entry = services.resolve(declaration=decl, roll=43, actor=player)
    assert entry.payload["result"]["dif"] == 10
    assert [h["damage"] for h in entry.payload["result"]["hits"]] == [9, 10]
    fight.refresh()
    assert "feinted" not in fight.thug.conditions


def test_it_skips_the_down_and_offers_counterattacks_before_the_round_ends(fight):
    gm, player = fight.table.gm, fight.table.player
    # A miss, but a parry.
    strike(
        fight.encounter, fight.ysolde, fight.thug, action="fast", actor=player, defender=gm, roll=90
    )
    fight.refresh()
    assert fight.thug.counterattacks == 1
    services.next_turn(encounter=fight.encounter, actor=gm)  # the thug's turn
    services.next_turn(encounter=fight.encounter, actor=gm)  # round end: counterattack first
    fight.refresh()
    assert fight.encounter.countering and fight.encounter.turn_id == fight.thug.pk
    counter, _ = services.declare_attack(
        encounter=fight.encounter,
        attacker=fight.thug,
        target=fight.ysolde,
        action="mighty",
        zone=fight.zone(fight.ysolde, "head"),
        weapon=fight.weapon(fight.thug),
        counterattack=True,
        actor=gm,
    )
    services.cancel_declaration(declaration=counter, actor=gm)
    services.next_turn(encounter=fight.encounter, actor=gm)
    fight.refresh()
    assert fight.encounter.round == 2 and not fight.encounter.countering
    assert fight.thug.counterattacks == 0
    services.update_participant(participant=fight.ysolde, state="unconscious", actor=gm)
    services.next_turn(encounter=fight.encounter, actor=gm)  # round 2: thug acts
    services.next_turn(encounter=fight.encounter, actor=gm)  # Ysolde skipped: round 3
    fight.refresh()
    assert fight.encounter.round == 3 and fight.encounter.turn_id == fight.thug.pk


def test_it_rolls_missing_itv_with_the_injected_dice(table):
    from tests.factories import make_thug

    npc = make_thug(table.campaign, table.gm, itv=None)
    encounter, _ = services.create_encounter(campaign=table.campaign, name="x", actor=table.gm)
    services.add_npc_copies(encounter=encounter, npc=npc, count=3, actor=table.gm)
    services.update_participant(
        participant=encounter.participants.get(character__name="Salvager Thug #2"),
        on_alert=True,
        actor=table.gm,
    )
    services.start_encounter(encounter=encounter, actor=table.gm, rng=random.Random(5))
    ps = list(encounter.participants.order_by("position").select_related("character"))
    # FOC 1 + SPD 2 + SVY 2 + d10; on alert doubles.
    assert ps[0].character.name == "Salvager Thug #2"
    assert ps[0].initiative == 2 * ps[0].itv
    assert all(6 <= p.itv <= 15 for p in ps)
    assert all(p.character.itv == p.itv for p in ps)


def test_it_runs_a_stamina_test_after_a_grievous_wound(fight):
    gm = fight.table.gm
    services.adjust_zone(
        encounter=fight.encounter, zone=fight.zone(fight.ysolde, "head"), amount=14, actor=gm
    )
    fight.refresh()
    assert fight.ysolde.stamina_due and fight.ysolde.character.vitality == 8
    # STM = NRV 3 + VGR 5 = 8: PRO 90 vs 20. 95 fails: unconscious.
    services.stamina_check(participant=fight.ysolde, roll=95, actor=fight.table.player)
    fight.refresh()
    assert fight.ysolde.state == "unconscious" and not fight.ysolde.stamina_due
    services.adjust_zone(
        encounter=fight.encounter, zone=fight.zone(fight.ysolde, "head"), amount=-5, actor=gm
    )
    fight.refresh()
    assert fight.ysolde.character.vitality == 10
    assert fight.zone(fight.ysolde, "head").wounds == 9


def test_it_undoes_a_fate_reroll_in_one_step_while_the_attacker_has_a_new_attack_open(fight):
    """Undoing a re-roll alone would reopen its attack next to the attacker's newer one; the
    re-roll and its Fate spend go back together instead, and the newer attack stays open."""
    gm, player = fight.table.gm, fight.table.player
    start = _state(fight)
    decl = declare_and_defend(
        fight.encounter,
        fight.ysolde,
        fight.thug,
        action="precise",
        zone="left arm",
        actor=player,
        defender=gm,
        defense="dodge",
    )
    first = services.resolve(declaration=decl, roll=40, actor=player)
    after_first = _state(fight)
    assert after_first["t_arm_wounds"] > 0
    again = declare(
        fight.encounter, fight.ysolde, fight.thug, action="fast", zone="head", actor=player
    )
    fate, reroll = services.spend_fate(
        entry=first, spender=fight.ysolde, action="reroll", roll=99, actor=player
    )
    assert _state(fight)["y_fate"] == start["y_fate"] - 1

    undo = services.undo_last(encounter=fight.encounter, actor=gm)

    assert undo.reverts_id == reroll.pk
    undos = list(fight.encounter.log.filter(kind="undo").values_list("reverts", flat=True))
    assert undos == [reroll.pk, fate.pk]
    assert _state(fight) == after_first  # the first roll's wounds, the Fate point back
    assert Declaration.objects.get(pk=decl.pk).status == "resolved"
    assert Declaration.objects.get(pk=again.pk).status == "pending"
    assert services.latest_roll(fight.encounter).pk == first.pk

    # Going on back: the new declaration, the first roll, its defense, its declaration.
    for _ in range(4):
        services.undo_last(encounter=fight.encounter, actor=gm)
    assert _state(fight) == start
    assert not Declaration.objects.filter(status__in=["pending", "defended"]).exists()


def _turns(fight):
    return CombatLogEntry.objects.filter(encounter=fight.encounter, kind="turn").count()


def test_it_passes_the_turn_once_when_pressed_twice_with_the_same_view(fight):
    gm = fight.table.gm
    seen = services.SeenTurn(round=1, turn=fight.ysolde.pk, countering=False)
    services.next_turn(encounter=fight.encounter, seen=seen, actor=gm)
    with pytest.raises(services.CombatConflict, match="already moved on"):
        services.next_turn(encounter=fight.encounter, seen=seen, actor=gm)
    fight.refresh()
    assert (fight.encounter.round, fight.encounter.turn_id) == (1, fight.thug.pk)
    assert _turns(fight) == 1
    # What the page shows now passes it; without a view the turn passes as before.
    now = services.SeenTurn(round=1, turn=fight.thug.pk, countering=False)
    services.next_turn(encounter=fight.encounter, seen=now, actor=gm)
    services.next_turn(encounter=fight.encounter, actor=gm)
    fight.refresh()
    assert (fight.encounter.round, fight.encounter.turn_id) == (2, fight.thug.pk)


def test_it_tells_a_counterattack_turn_from_the_same_participants_turn(fight):
    """The last of the round may be next again, for a queued counterattack: same round, same
    participant. A second press must not take that counterattack away."""
    gm = fight.table.gm
    services.next_turn(encounter=fight.encounter, actor=gm)  # the thug, last of round 1
    Participant.objects.filter(pk=fight.thug.pk).update(counterattacks=1)
    seen = services.SeenTurn(round=1, turn=fight.thug.pk, countering=False)
    services.next_turn(encounter=fight.encounter, seen=seen, actor=gm)
    fight.refresh()
    assert fight.encounter.countering and fight.encounter.turn_id == fight.thug.pk
    with pytest.raises(services.CombatConflict):
        services.next_turn(encounter=fight.encounter, seen=seen, actor=gm)
    fight.refresh()
    assert fight.encounter.countering and fight.thug.counterattacks == 1


def test_it_refuses_a_stamina_test_that_is_not_due(fight):
    player = fight.table.player
    with pytest.raises(services.CombatConflict, match="No Stamina test is due"):
        services.stamina_check(participant=fight.ysolde, roll=95, actor=player)
    assert not CombatLogEntry.objects.filter(kind="stamina").exists()
    services.adjust_zone(
        encounter=fight.encounter,
        zone=fight.zone(fight.ysolde, "head"),
        amount=14,
        actor=fight.table.gm,
    )
    services.stamina_check(participant=fight.ysolde, roll=50, actor=player)
    with pytest.raises(services.CombatConflict, match="already rolled"):
        services.stamina_check(participant=fight.ysolde, roll=95, actor=player)
    fight.refresh()
    assert fight.ysolde.state == "active"
    assert CombatLogEntry.objects.filter(kind="stamina").count() == 1


def test_it_deletes_an_encounter_only_while_it_is_not_running(fight):
    gm = fight.table.gm
    with pytest.raises(services.CombatConflict, match="running"):
        services.delete_encounter(encounter=fight.encounter, actor=gm)
    with pytest.raises(PermissionDenied):
        services.delete_encounter(encounter=fight.encounter, actor=fight.table.player)
    services.finish_encounter(encounter=fight.encounter, actor=gm)
    services.delete_encounter(encounter=fight.encounter, actor=gm)
    assert not Encounter.objects.filter(pk=fight.encounter.pk).exists()
    assert not CombatLogEntry.objects.filter(encounter_id=fight.encounter.pk).exists()
    preparing, _ = services.create_encounter(campaign=fight.table.campaign, name="Ford", actor=gm)
    services.delete_encounter(encounter=preparing, actor=gm)
    assert not Encounter.objects.filter(pk=preparing.pk).exists()


def test_it_makes_a_disarmed_participant_lose_exactly_the_next_round(fight):
    """Seed 000: a disarm "spends next rd. retrieving weapon". Disarmed in round 1 before her
    turn is over, Ysolde still acts in round 1, is skipped in round 2, acts again in round 3."""
    gm = fight.table.gm
    # The GM declares out of turn: the thug (SKL 3 + Melee 1: 70) disarms Ysolde, who
    # dodges (SPD 3 + Melee 2: 25); 43 succeeds.
    strike(
        fight.encounter,
        fight.thug,
        fight.ysolde,
        action="disarm",
        zone=None,
        weapon=None,
        actor=gm,
        defender=fight.table.player,
        defense="dodge",
        roll=43,
    )
    fight.refresh()
    assert "disarmed" in fight.ysolde.conditions
    assert fight.encounter.turn_id == fight.ysolde.pk and fight.ysolde.can_act  # round 1

    services.next_turn(encounter=fight.encounter, actor=gm)  # the thug's turn
    services.next_turn(encounter=fight.encounter, actor=gm)  # round 2: Ysolde is busy
    fight.refresh()
    fight.ysolde.encounter = fight.encounter
    assert fight.encounter.round == 2 and fight.encounter.turn_id == fight.thug.pk
    assert fight.ysolde.busy and not fight.ysolde.can_act

    services.next_turn(encounter=fight.encounter, actor=gm)  # round 3: weapon back
    fight.refresh()
    assert fight.encounter.round == 3 and fight.encounter.turn_id == fight.ysolde.pk
    assert fight.ysolde.conditions == {} and fight.ysolde.can_act


def test_it_stops_the_counterattack_queue_at_its_bound(fight):
    """A hundred parries in one round is a GM clicking through, not a fight: the queue stays
    at 100 (the database's bound) and the roll answers as usual instead of failing."""
    Participant.objects.filter(pk=fight.thug.pk).update(counterattacks=100)
    # A miss, but a parry.
    strike(
        fight.encounter,
        fight.ysolde,
        fight.thug,
        action="fast",
        actor=fight.table.player,
        defender=fight.table.gm,
        roll=90,
    )
    fight.refresh()
    assert fight.thug.counterattacks == 100
