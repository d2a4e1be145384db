"""The one way into a fight's rows (combat/services/rows.py): what an action reads, and who
is let in. Every service finds the encounter among the actor's campaigns, whether it was given
rows (the pages) or ids (the API). The locks themselves are checked on PostgreSQL in
tests/combat/test_row_locking.py."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser
from django.db import transaction

from combat import services
from combat.models import Declaration, Encounter
from combat.services.attacks import declaration_rows
from combat.services.rows import lock, lock_declaration
from sheets import services as sheet_services
from sheets.models import Discipline

pytestmark = [pytest.mark.django_db, pytest.mark.both_databases]


def _declared(fight: Any) -> Declaration:
    decl, _ = services.declare_attack(
        encounter=fight.encounter,
        attacker=fight.ysolde,
        target=fight.thug,
        action="precise",
        zone=fight.zone(fight.thug, "chest"),
        weapon=fight.weapon(fight.ysolde),
        actor=fight.table.gm,
    )
    return decl


def _disciplines(*participants: Any) -> set[int]:
    ids = [p.character_id for p in participants]
    return set(Discipline.objects.filter(character_id__in=ids).values_list("pk", flat=True))


def test_it_reads_a_new_declarations_rows(fight):
    zone, weapon = fight.zone(fight.thug, "chest"), fight.weapon(fight.ysolde)
    gm = fight.table.gm
    with transaction.atomic():
        rows = declaration_rows(
            fight.encounter.pk,
            fight.ysolde.pk,
            fight.thug.pk,
            gm,
            zone=zone.pk,
            weapon=weapon.pk,
            changes=False,
        )
    # The two participants with their characters, the zone and the weapon named (not the
    # others of either sheet), and the disciplines of both sides (for the odds).
    assert set(rows.participants) == {fight.ysolde.pk, fight.thug.pk}
    for p in rows.participants.values():
        assert p.character.pk == p.character_id
        assert p.encounter is rows.encounter
    assert rows.encounter.campaign == fight.table.campaign
    assert (set(rows.zones), set(rows.weapons)) == ({zone.pk}, {weapon.pk})
    assert set(rows.disciplines) == _disciplines(fight.ysolde, fight.thug)
    assert rows.characters == {}  # a declaration changes no sheet: none locked
    assert not any(p._waiting for p in rows.participants.values())  # type: ignore[attr-defined]  # set by the rows' read
    _declared(fight)
    with transaction.atomic():
        rows = declaration_rows(
            fight.encounter, fight.ysolde.pk, fight.thug.pk, gm, zone=None, weapon=None
        )
    assert rows.participants[fight.ysolde.pk]._waiting  # type: ignore[attr-defined]  # set by the rows' read
    assert not rows.participants[fight.thug.pk]._waiting  # type: ignore[attr-defined]  # set by the rows' read
    assert (rows.zones, rows.weapons) == ({}, {})
    # A strike in one call changes the sheets: both characters come locked.
    assert set(rows.characters) == {fight.ysolde.character_id, fight.thug.character_id}


def test_it_names_a_participant_that_is_not_in_the_fight(fight):
    other, _ = services.create_encounter(
        campaign=fight.table.campaign, name="Elsewhere", actor=fight.table.gm
    )
    with pytest.raises(services.CombatError) as refused:
        declaration_rows(
            other, fight.ysolde.pk, fight.thug.pk, fight.table.gm, zone=None, weapon=None
        )
    assert refused.value.fields == ("attacker", "target")


@pytest.mark.parametrize("by_id", [False, True])
def test_it_reads_a_declarations_rows_for_a_roll(fight, by_id):
    decl = _declared(fight)
    with transaction.atomic():
        rows = lock_declaration(decl.pk if by_id else decl, actor=fight.table.gm, sheets=True)
    held = rows.declarations[decl.pk]
    assert (held.attacker_id, held.target_id) == (fight.ysolde.pk, fight.thug.pk)
    assert held.attacker is rows.participants[fight.ysolde.pk]
    assert set(rows.participants) == {fight.ysolde.pk, fight.thug.pk}
    # Both characters, locked (a hit steps the version in the UPDATE that writes it), and
    # the participants carry those rows.
    assert set(rows.characters) == {fight.ysolde.character_id, fight.thug.character_id}
    for p in rows.participants.values():
        assert p.character is rows.characters[p.character_id]
        assert p.character._locked  # type: ignore[attr-defined]  # set by lock_sheets
    assert (set(rows.zones), set(rows.weapons)) == ({decl.zone_id}, {decl.weapon_id})
    assert set(rows.disciplines) == _disciplines(fight.ysolde, fight.thug)
    # A defense changes no sheet: the declaration and its participants only.
    with transaction.atomic():
        rows = lock_declaration(decl, actor=fight.table.gm, sheets=False)
    assert set(rows.participants) == {fight.ysolde.pk, fight.thug.pk}
    assert (rows.characters, rows.zones, rows.disciplines) == ({}, {}, {})


def test_it_reads_every_participant_or_those_asked_for(fight):
    with transaction.atomic():
        everyone = lock(fight.encounter, actor=fight.table.player)
        one = lock(fight.encounter.pk, actor=fight.table.player, participants={fight.thug.pk})
    assert set(everyone.participants) == {fight.ysolde.pk, fight.thug.pk}
    assert set(one.participants) == {fight.thug.pk}
    assert everyone.encounter == one.encounter == fight.encounter


def _outsiders(fight: Any) -> list[Any]:
    table = fight.table
    return [table.other_gm, table.outsider, AnonymousUser()]


@pytest.mark.parametrize("by_id", [False, True])
def test_it_lets_no_outsider_into_a_fight_by_row_or_by_id(fight, by_id):
    decl = _declared(fight)
    encounter = fight.encounter.pk if by_id else fight.encounter
    declaration = decl.pk if by_id else decl
    for user in _outsiders(fight):
        with pytest.raises(Encounter.DoesNotExist):
            lock(encounter, actor=user)
        with pytest.raises(Declaration.DoesNotExist):
            lock_declaration(declaration, actor=user, sheets=False)
    # The campaign's player and GM are let in.
    for user in (fight.table.player, fight.table.gm):
        assert lock(encounter, actor=user).encounter.pk == fight.encounter.pk
        assert decl.pk in lock_declaration(declaration, actor=user, sheets=True).declarations


@pytest.mark.parametrize("by_id", [False, True])
def test_a_service_refuses_a_former_player_given_rows_or_ids(fight, by_id):
    """A player removed from the campaign still owns their character in the fight: the
    services find the fight among the actor's campaigns, whether they are given rows or
    ids, so the former player can no longer act for it."""
    table = fight.table
    decl, _ = services.declare_attack(
        encounter=fight.encounter,
        attacker=fight.thug,
        target=fight.ysolde,
        action="fast",
        zone=fight.zone(fight.ysolde, "chest"),
        weapon=fight.weapon(fight.thug),
        actor=table.gm,
    )
    assert sheet_services.remove_player(
        user=table.gm, campaign=table.campaign, user_id=table.player.pk
    )

    def row(obj: Any) -> Any:
        return obj.pk if by_id else obj

    with pytest.raises(Declaration.DoesNotExist):
        services.declare_defense(declaration=row(decl), defense="parry", actor=table.player)
    services.declare_defense(declaration=decl, defense="parry", actor=table.gm)
    services.resolve(declaration=decl, roll=50, actor=table.gm)
    with pytest.raises(Encounter.DoesNotExist):
        services.declare_attack(
            encounter=row(fight.encounter),
            attacker=row(fight.ysolde),
            target=row(fight.thug),
            action="fast",
            zone=row(fight.zone(fight.thug, "chest")),
            weapon=row(fight.weapon(fight.ysolde)),
            actor=table.player,
        )
    assert not Declaration.objects.filter(attacker=fight.ysolde).exists()
    with pytest.raises(Encounter.DoesNotExist):
        services.next_turn(encounter=fight.encounter, actor=table.player)
