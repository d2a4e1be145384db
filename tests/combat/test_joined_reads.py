"""The strike path's hand-written reads (combat/services/joined.py) hand back the same rows
the ORM reads, field for field, on SQLite and on PostgreSQL (the suite runs on both); a
LEFT JOIN that matched nothing is None; a row met on several lines is decoded once; and
the rows are locked in the documented order."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection, models

from combat import services
from combat.models import Declaration, Encounter, Participant
from combat.services.joined import (
    _compile,
    attack_read,
    declared_read,
    fetch,
    sheet_rows_read,
)
from sheets.models import BodyZone, Campaign, Character, Discipline, Weapon

pytestmark = pytest.mark.django_db


def _same(row: models.Model) -> None:
    """Every concrete field of ``row`` equals the ORM's reading of it, type included."""
    stored = type(row)._default_manager.get(pk=row.pk)
    for f in type(row)._meta.concrete_fields:
        got, want = getattr(row, f.attname), getattr(stored, f.attname)
        assert (got, type(got)) == (want, type(want)), f"{type(row).__name__}.{f.attname}"


def _declared(fight: Any) -> Declaration:
    zone = fight.zone(fight.thug, "chest")
    decl, _ = services.declare_attack(
        encounter=fight.encounter,
        attacker=fight.ysolde,
        target=fight.thug,
        action="precise",
        zone=zone,
        weapon=fight.weapon(fight.ysolde),
        actor=fight.table.gm,
    )
    return decl


def test_a_declarations_read_equals_the_orms_rows(fight):
    # Values that need the ORM's converters on one database or the other: booleans (hidden,
    # on_alert), a JSON column (conditions), datetimes with their time zone.
    Participant.objects.filter(pk=fight.thug.pk).update(
        conditions={"prone": {"until_round": 3, "by": fight.ysolde.pk}}, on_alert=True
    )
    decl = _declared(fight)
    gm = fight.table.gm
    for sheets in (False, True):
        [row] = fetch(declared_read(True, False, sheets), [decl.pk, gm.pk, gm.pk])
        characters = ("lo", "hi") if sheets else ("ac", "tc")
        for alias in ("d", "e", "c", "a", "t", *characters):
            _same(row[alias])
        assert row["t"].hidden is True and row["t"].on_alert is True
        assert row["t"].conditions == {"prone": {"until_round": 3, "by": fight.ysolde.pk}}
        assert row["d"].created_at.tzinfo is not None
        if sheets:
            assert row["lo"].pk < row["hi"].pk
            assert {row["lo"].pk, row["hi"].pk} == {
                fight.ysolde.character_id,
                fight.thug.character_id,
            }


def test_a_declaration_outside_the_users_campaigns_is_not_found(fight):
    decl = _declared(fight)
    # A GM of another campaign, and someone in no campaign: not found.
    for user in (fight.table.other_gm, fight.table.outsider):
        assert fetch(declared_read(True, False, False), [decl.pk, user.pk, user.pk]) == []
    # The player is a member of the campaign: found.
    player = fight.table.player
    assert len(fetch(declared_read(True, False, False), [decl.pk, player.pk, player.pk])) == 1
    # Named with the wrong encounter: not found either.
    other, _ = services.create_encounter(
        campaign=fight.table.campaign, name="Other", actor=fight.table.gm
    )
    assert fetch(declared_read(False, True, False), [decl.pk, other.pk]) == []


def test_a_new_declarations_read_brings_each_participant_once_with_its_disciplines(fight):
    zone = fight.zone(fight.thug, "chest")
    weapon = fight.weapon(fight.ysolde)
    params = [fight.encounter.pk, fight.ysolde.pk, fight.thug.pk, zone.pk, weapon.pk]
    lines = fetch(attack_read(False, True, True, True), params)
    disciplines = Discipline.objects.filter(
        character_id__in=[fight.ysolde.character_id, fight.thug.character_id]
    )
    # One line per discipline (every character in the fight has some), in pk order.
    assert [line["dl"].pk for line in lines] == sorted(d.pk for d in disciplines)
    for line in lines:
        _same(line["dl"])
    # The participant, the encounter, the zone and the weapon are decoded once and shared.
    assert len({id(line["e"]) for line in lines}) == 1
    assert len({id(line["z"]) for line in lines}) == 1
    assert len({id(line["p"]) for line in lines}) == 2
    for alias in ("p", "e", "c", "ch", "z", "w"):
        _same(lines[0][alias])
    assert {line["waiting"] for line in lines} == {False}
    # Waiting: once the attacker has an attack open, its lines say so.
    _declared(fight)
    lines = fetch(attack_read(False, True, True, True), params)
    waiting = {line["p"].pk: bool(line["waiting"]) for line in lines}
    assert waiting == {fight.ysolde.pk: True, fight.thug.pk: False}


def test_a_character_without_disciplines_comes_back_with_none(fight):
    Discipline.objects.filter(character_id=fight.thug.character_id).delete()
    lines = fetch(
        attack_read(False, False, False, True),
        [fight.encounter.pk, fight.ysolde.pk, fight.thug.pk],
    )
    thug = [line for line in lines if line["p"].pk == fight.thug.pk]
    assert [line["dl"] for line in thug] == [None]
    # Without a zone or a weapon, a roll's second read is the disciplines alone.
    ids = sorted([fight.ysolde.character_id, fight.thug.character_id])
    rows = fetch(sheet_rows_read(False, False), ids)
    assert {line["dl"].character_id for line in rows} == {fight.ysolde.character_id}


def test_a_rolls_second_read_brings_the_zone_and_the_weapon_with_the_disciplines(fight):
    zone = fight.zone(fight.thug, "chest")
    weapon = fight.weapon(fight.ysolde)
    ids = sorted([fight.ysolde.character_id, fight.thug.character_id])
    lines = fetch(sheet_rows_read(True, True), [*ids, zone.pk, weapon.pk])
    assert (lines[0]["z"], lines[0]["w"]) == (zone, weapon)
    _same(lines[0]["z"])
    _same(lines[0]["w"])
    assert sorted(line["dl"].pk for line in lines) == sorted(
        Discipline.objects.filter(character_id__in=ids).values_list("pk", flat=True)
    )


@pytest.mark.postgres
def test_the_reads_lock_in_the_documented_order():
    """PostgreSQL takes a statement's row locks in the order FOR UPDATE OF names them:
    encounter, declaration, participants, characters (lower pk first), zone, weapon."""
    assert connection.vendor == "postgresql"
    order = {
        declared_read(True, False, True): '"e", "d", "a", "t", "lo", "hi"',
        declared_read(True, False, False): '"e", "d", "a", "t"',
        attack_read(True, True, True, True): '"e", "p", "z", "w"',
        sheet_rows_read(True, True): '"z", "w"',
    }
    for read, of in order.items():
        assert _compile(read, "default").sql.endswith(f"FOR UPDATE OF {of}")


def test_the_models_it_reads_start_with_their_pk():
    # fetch() tells a row from the next by its first column.
    for model in (Declaration, Encounter, Campaign, Participant, Character, BodyZone, Weapon):
        assert model._meta.concrete_fields[0] is model._meta.pk
    assert Discipline._meta.concrete_fields[0] is Discipline._meta.pk
