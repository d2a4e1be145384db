"""The attack's and the log entry's serializers build their fields once per class
(combat.api.base.FieldsBuiltOnce): they answer exactly as DRF's ModelSerializer, which
rebuilds them for every object, does, and no two answers share a field."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from combat.api.serializers import DeclarationSerializer, LogEntrySerializer
from combat.models import CombatLogEntry
from tests.factories import make_fight
from tests.fight_steps import declare, strike

pytestmark = pytest.mark.both_databases


class LogEntryPerObject(LogEntrySerializer):
    def get_fields(self) -> dict[str, Any]:
        return serializers.ModelSerializer.get_fields(self)


class DeclarationPerObject(DeclarationSerializer):
    def get_fields(self) -> dict[str, Any]:
        return serializers.ModelSerializer.get_fields(self)


def request_of(user: Any) -> Request:
    request = Request(APIRequestFactory().get("/"))
    request.user = user
    return request


def test_it_answers_as_fields_built_for_each_object(table):
    fight = make_fight(table)  # the thug is hidden from the player
    strike(fight.encounter, fight.ysolde, fight.thug, actor=table.gm, defender=table.gm, roll=95)
    fight.refresh()
    decl = declare(fight.encounter, fight.thug, fight.ysolde, actor=table.gm)
    entries = list(CombatLogEntry.objects.filter(encounter=fight.encounter).order_by("seq"))
    for user in (table.gm, table.player):
        context = {"request": request_of(user)}
        built = LogEntrySerializer(entries, many=True, context=context).data
        assert built == LogEntryPerObject(entries, many=True, context=context).data
        answer = DeclarationSerializer(decl, context=context).data
        assert answer == DeclarationPerObject(decl, context=context).data
    # The player is kept from the hidden thug's numbers: the comparison covered a redaction.
    assert any(e["details"] is None for e in built)


def test_it_gives_every_answer_fields_of_its_own(table):
    fight = make_fight(table)
    entry = CombatLogEntry.objects.filter(encounter=fight.encounter).first()
    context = {"request": request_of(table.gm)}
    first = LogEntrySerializer(entry, context=context)
    second = LogEntrySerializer(entry, context=context)
    for name, field in first.fields.items():
        assert field is not second.fields[name]
        assert field.parent is first
        assert second.fields[name].parent is second
