"""The ``check.resolved`` webhook: a check outside combat, once committed (checks.signals).

Webhooks speak to the whole table, so a secret check goes out as the players see it: who
rolled what, and that it is secret; no roll, PvD, degree or effects. When the GM reveals it,
the event goes out again with its result."""

from __future__ import annotations

import logging
from typing import Any

from rest_framework import serializers

from checks.models import Check
from checks.signals import check_resolved
from integrations import hooks, payloads

logger = logging.getLogger(__name__)
EVENT = "check.resolved"


def check_data(check: Check) -> dict[str, Any]:
    who = check.character.name
    data: dict[str, Any] = {
        "campaign": {"id": check.campaign_id, "name": check.campaign.name},
        "check": {"id": check.pk, "seq": check.seq, "label": check.label, "kind": check.kind},
        "character": {"id": check.character_id, "name": who},
        "actor": check.roller.get_username() if check.roller else None,
        "secret": check.secret,
        "redacted": check.secret,
    }
    if check.secret or not payloads.character_visible(check.character):
        # A hidden NPC's check carries its numbers: it goes out as a secret one does.
        data["secret"] = data["redacted"] = True
        data["text"] = f"{who} rolled a secret check: {check.label}."
        return data
    data["text"] = f"{who}: {check.label}, rolled {check.roll}: {check.degree_label}." + (
        f" {check.effects}." if check.effects else ""
    )
    data["result"] = {
        "pro": check.pro,
        "dif": check.dif,
        "pvd": f"{check.pro}v{check.dif}",
        "roll": check.roll,
        "degree": check.degree,
        "success": check.success,
        "exp": check.exp,
        "fate": check.fate,
    }
    data["physical"] = check.physical
    data["replaces"] = check.replaces_id
    return data


def on_check(sender: Any, check: Check, **kwargs: Any) -> None:
    try:
        fresh = Check.objects.select_related("campaign", "character", "roller").get(pk=check.pk)
        hooks.dispatch(fresh.campaign_id, EVENT, lambda: check_data(fresh))
    except Exception:  # a webhook must never break the roll that was committed
        logger.exception("webhook dispatch failed")


def connect() -> None:
    check_resolved.connect(on_check, dispatch_uid="webhooks-check-resolved")


class CheckResultSerializer(serializers.Serializer[Any]):
    pro = serializers.IntegerField()
    dif = serializers.IntegerField()
    pvd = serializers.CharField()
    roll = serializers.IntegerField()
    degree = serializers.CharField()
    success = serializers.BooleanField()
    exp = serializers.IntegerField(help_text="EXP marked (0 or 1).")
    fate = serializers.IntegerField(help_text="Fate change earned (-1, 0, +1).")


class CheckNamedSerializer(serializers.Serializer[Any]):
    """A campaign or character by id and name (its own component: integrations.openapi
    imports this module for the webhook's body)."""

    id = serializers.IntegerField()
    name = serializers.CharField()


class CheckRefSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    seq = serializers.IntegerField()
    label = serializers.CharField(help_text='"Lock-picking (SKL) vs Ambitious 30"')  # type: ignore[assignment]  # the payload's key shadows Field.label
    kind = serializers.CharField(help_text="aptitude, discipline, composite or save")


class CheckDataSerializer(serializers.Serializer[Any]):
    campaign = CheckNamedSerializer()
    check = CheckRefSerializer()
    character = CheckNamedSerializer()
    actor = serializers.CharField(allow_null=True)
    secret = serializers.BooleanField()
    redacted = serializers.BooleanField(help_text="A secret check: no result.")
    text = serializers.CharField()
    result = CheckResultSerializer(required=False, help_text="Absent when secret.")
    physical = serializers.BooleanField(required=False)
    replaces = serializers.IntegerField(required=False, allow_null=True)
