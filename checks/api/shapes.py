"""What the checks API answers: each body's shape (a serializer, documentation only: the
schema's components) next to the one function that writes it, so the two are read together.
tests/config/test_generated_client.py checks, through a client generated from the schema,
that the answers match them.

A secret check reads, to anyone but the GM, as that it was made, by whom and for what, never
its roll, degree or effects (:func:`check_for`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError
from rest_framework import serializers

from checks import services
from checks.models import Check, CheckCall, CheckRequest, ResourceChange
from rules.api.omg import DegreeCountsSerializer
from rules.engine import omg

if TYPE_CHECKING:
    from django.contrib.auth import models as auth

    User = auth.User | auth.AnonymousUser

KINDS = [k.value for k in omg.CheckKind]


class CheckCharacterSerializer(serializers.Serializer[Any]):
    """The character a check is about: its id and name."""

    id = serializers.IntegerField()
    name = serializers.CharField()


class CheckSerializer(serializers.Serializer[Any]):
    """A check rolled outside combat. The fields from ``level`` on are absent from a secret
    check read by anyone but the GM."""

    id = serializers.IntegerField()
    campaign = serializers.IntegerField()
    character = CheckCharacterSerializer()
    roller = serializers.CharField(
        allow_null=True, help_text="Who rolled it (username); null once their account is gone."
    )
    seq = serializers.IntegerField(help_text="Its place in the campaign's rolls.")
    kind = serializers.ChoiceField(choices=KINDS)
    aptitude = serializers.CharField(allow_null=True)
    discipline = serializers.CharField(allow_null=True)
    composite = serializers.CharField(allow_null=True)
    # The metaclass takes a declared field out of the class, so DRF's own Field.label (the
    # stubs' str) is untouched at run time; mypy sees only the class attribute.
    label = serializers.CharField(  # type: ignore[assignment]
        help_text='What was rolled: "Lock-picking (SKL) vs Ambitious 30".'
    )
    secret = serializers.BooleanField()
    status = serializers.CharField(
        help_text="active; revoked (by a Fate spend, or replaced by its re-roll); undone."
    )
    created_at = serializers.DateTimeField()
    level = serializers.IntegerField(required=False, help_text="The discipline's level used.")
    pro = serializers.IntegerField(required=False)
    dif = serializers.IntegerField(required=False)
    roll = serializers.IntegerField(required=False, help_text="The d100 (1..100).")
    physical = serializers.BooleanField(required=False, help_text="Rolled at the table.")
    degree = serializers.ChoiceField(choices=[d.value for d in omg.Degree], required=False)
    abbr = serializers.CharField(required=False, allow_null=True, help_text="DrS, EpF, ...")
    success = serializers.BooleanField(required=False)
    exp = serializers.IntegerField(required=False, help_text="EXP marks it earned.")
    exp_on = serializers.CharField(required=False, allow_null=True)
    fate = serializers.IntegerField(required=False, help_text="Fate it gained or cost.")
    effects = serializers.CharField(required=False, help_text="What it did to the sheet.")
    replaces = serializers.IntegerField(
        required=False, allow_null=True, help_text="The check this one re-rolled with Fate."
    )
    note = serializers.CharField(required=False)


def check_data(check: Check, *, hidden: bool) -> dict[str, Any]:
    """A check as its reader may see it: a secret one hides its result from all but the GM."""
    data: dict[str, Any] = {
        "id": check.pk,
        "campaign": check.campaign_id,
        "character": {"id": check.character_id, "name": check.character.name},
        "roller": check.roller.get_username() if check.roller else None,
        "seq": check.seq,
        "kind": check.kind,
        "aptitude": check.aptitude or None,
        "discipline": check.discipline or None,
        "composite": check.composite or None,
        "label": check.label,
        "secret": check.secret,
        "status": check.status,
        "created_at": check.created_at.isoformat(),
    }
    if hidden:
        return data
    data.update(
        level=check.level,
        pro=check.pro,
        dif=check.dif,
        roll=check.roll,
        physical=check.physical,
        degree=check.degree,
        abbr=omg.Degree(check.degree).abbr,
        success=check.success,
        exp=check.exp,
        exp_on=check.exp_on or None,
        fate=check.fate,
        effects=check.effects,
        replaces=check.replaces_id,
        note=check.note,
    )
    return data


def check_for(user: User, check: Check) -> dict[str, Any]:
    """:func:`check_data` for ``user``: the result hidden unless they may see it."""
    return check_data(check, hidden=check.secret and not check.campaign.is_gm(user))


class CheckFateSerializer(serializers.Serializer[Any]):
    """A Fate spend: the check it revoked, and its re-roll (null for a revoke)."""

    revoked = CheckSerializer()
    reroll = CheckSerializer(allow_null=True)


def fate_data(user: User, revoked: Check, reroll: Check | None) -> dict[str, Any]:
    return {
        "revoked": check_for(user, revoked),
        "reroll": check_for(user, reroll) if reroll is not None else None,
    }


class CheckAskedSerializer(serializers.Serializer[Any]):
    """One character asked by a call, and their answer once they rolled it."""

    id = serializers.IntegerField(help_text="What POST /api/check-requests/{id}/answer/ takes.")
    character = CheckCharacterSerializer()
    check = CheckSerializer(allow_null=True)


class CheckCallSerializer(serializers.Serializer[Any]):
    """The GM's call for a check, with each asked character's answer."""

    id = serializers.IntegerField()
    campaign = serializers.IntegerField()
    label = serializers.CharField()  # type: ignore[assignment]  # as CheckSerializer's
    kind = serializers.ChoiceField(choices=KINDS)
    aptitude = serializers.CharField(allow_null=True)
    discipline = serializers.CharField(allow_null=True)
    composite = serializers.CharField(allow_null=True)
    against = serializers.IntegerField(help_text="The DIF (a test) or the opposing PRO (a save).")
    secret = serializers.BooleanField()
    note = serializers.CharField()
    closed = serializers.BooleanField()
    requests = CheckAskedSerializer(many=True)


def call_data(user: User, call: CheckCall) -> dict[str, Any]:
    return {
        "id": call.pk,
        "campaign": call.campaign_id,
        "label": call.label,
        "kind": call.kind,
        "aptitude": call.aptitude or None,
        "discipline": call.discipline or None,
        "composite": call.composite or None,
        "against": call.against,
        "secret": call.secret,
        "note": call.note,
        "closed": call.closed,
        "requests": [
            {
                "id": r.pk,
                "character": {"id": r.character_id, "name": r.character.name},
                "check": check_for(user, r.check_made) if r.check_made else None,
            }
            for r in call.requests.select_related("character", "check_made__character")
        ],
    }


class CheckOddsSerializer(serializers.Serializer[Any]):
    """The asked character's odds on the called check."""

    pro = serializers.IntegerField()
    dif = serializers.IntegerField()
    counts = DegreeCountsSerializer(help_text="Faces of the d100 giving each degree.")


class CheckPromptSerializer(serializers.Serializer[Any]):
    """A call waiting for one of your characters."""

    id = serializers.IntegerField(help_text="What POST /api/check-requests/{id}/answer/ takes.")
    call = serializers.IntegerField()
    campaign = serializers.IntegerField()
    character = CheckCharacterSerializer()
    label = serializers.CharField()  # type: ignore[assignment]  # as CheckSerializer's
    secret = serializers.BooleanField()
    odds = CheckOddsSerializer(
        allow_null=True, help_text="Null when the character's sheet cannot roll it."
    )


def prompt_data(asked: CheckRequest) -> dict[str, Any]:
    return {
        "id": asked.pk,
        "call": asked.call_id,
        "campaign": asked.call.campaign_id,
        "character": {"id": asked.character_id, "name": asked.character.name},
        "label": asked.call.label,
        "secret": asked.call.secret,
        "odds": _odds(asked),
    }


def _odds(asked: CheckRequest) -> dict[str, Any] | None:
    try:
        spec, _apt, _lv = services.spec_for(
            asked.character, services.target_of(asked.call), lenient=True
        )
    except ValidationError:
        return None
    counts = omg.sheet_check_odds(spec)
    return {"pro": spec.pro, "dif": spec.dif, "counts": {d.value: n for d, n in counts.items()}}


class ResourceChangeSerializer(serializers.Serializer[Any]):
    """Mana or Chi spent (a negative amount) or restored."""

    character = serializers.IntegerField()
    pool = serializers.ChoiceField(choices=["mana", "chi"])
    cost = serializers.CharField(allow_null=True, help_text="ARC, PWR, PSI or CHI, if given.")
    amount = serializers.IntegerField()
    before = serializers.IntegerField()
    after = serializers.IntegerField()


def resource_data(change: ResourceChange) -> dict[str, Any]:
    return {
        "character": change.character_id,
        "pool": change.pool,
        "cost": change.cost or None,
        "amount": change.amount,
        "before": change.before,
        "after": change.after,
    }
