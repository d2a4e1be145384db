"""The bodies the checks API reads: what to roll (a target), a roll, a call, an answer, a
Fate spend, Mana or Chi. They parse and bound what is sent (a 400 naming the field); the
rules (which kind, which aptitude, which DIF) are judged by the services, as for the pages."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from checks import services
from checks.services import Target
from rules.engine import omg
from sheets import fields

#: What ``against`` takes by name: a Difficulty Category (a test) or a proficiency tier (a save).
AGAINST_NAMES = (
    *(c.name for c in omg.DIFFICULTY_CATEGORIES),
    *(t.name for t in omg.PROFICIENCY_TIERS),
)


@extend_schema_field(
    {
        "oneOf": [
            {"type": "integer", "minimum": 5, "maximum": 100},
            {"type": "string", "enum": list(AGAINST_NAMES)},
        ]
    }
)
class AgainstField(serializers.Field[Any, Any, Any, Any]):
    """A whole number, or a Difficulty Category (a test) / proficiency tier (a save) by name.

    A string is a name, never a number, as the schema says: "20", "²", 5,000 digits or a NUL
    character are refused here, naming the field; the rules then judge the number's range and
    whether the name fits the kind (``services.parse_target``)."""

    default_error_messages = {
        "invalid": "A number, or one of: {names}.".format(names=", ".join(AGAINST_NAMES)),
    }

    def to_internal_value(self, data: Any) -> int | str:
        if isinstance(data, bool) or not isinstance(data, int | str):
            self.fail("invalid")
        if isinstance(data, str) and data not in AGAINST_NAMES:
            self.fail("invalid")
        return data

    def to_representation(self, value: Any) -> Any:
        return value


class TargetSerializer(fields.StrictSerializer):
    kind = serializers.ChoiceField(choices=[k.value for k in omg.CheckKind])
    aptitude = fields.CharField(required=False, allow_blank=True, max_length=3, default="")
    discipline = fields.CharField(required=False, allow_blank=True, max_length=120, default="")
    composite = fields.CharField(required=False, allow_blank=True, max_length=3, default="")
    against = AgainstField(
        help_text="A test: DIF 5..50 or Casual, Moderate, Ambitious, Formidable, Supreme. "
        "A save: the opposing PRO 55..100 or Inept, Capable, Adept, Expert, Master."
    )


def target_from(data: dict[str, Any]) -> Target:
    """What a body read by a :class:`TargetSerializer` asks to roll (a 400 naming the field
    the rules refuse)."""
    return services.parse_target(
        kind=data["kind"],
        against=data["against"],
        aptitude=data["aptitude"],
        discipline=data["discipline"],
        composite=data["composite"],
    )


class RollBody(TargetSerializer):
    roll = fields.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=100,
        help_text="The d100 rolled at the table (00 is 100); omit for the server's dice.",
    )
    secret = fields.BooleanField(required=False, default=False, help_text="The GM's only.")
    note = fields.CharField(required=False, allow_blank=True, max_length=80, default="")


class CallBody(TargetSerializer):
    campaign = fields.IntegerField()
    characters = serializers.ListField(
        child=fields.IntegerField(), required=False, max_length=100, default=list
    )
    everyone = fields.BooleanField(required=False, default=False)
    secret = fields.BooleanField(required=False, default=False)
    note = fields.CharField(required=False, allow_blank=True, max_length=80, default="")


class AnswerBody(fields.StrictSerializer):
    roll = fields.IntegerField(required=False, allow_null=True, min_value=1, max_value=100)
    aptitude = fields.CharField(required=False, allow_blank=True, max_length=3, default="")


class FateBody(fields.StrictSerializer):
    action = serializers.ChoiceField(choices=[a.value for a in omg.FateAction])
    spender = fields.IntegerField(help_text="The character whose Fate is spent (yours).")
    roll = fields.IntegerField(required=False, allow_null=True, min_value=1, max_value=100)


class EmptyBody(fields.StrictSerializer):
    """No fields: a key sent anyway is refused rather than ignored."""


class ResourceBody(fields.StrictSerializer):
    pool = serializers.ChoiceField(choices=["mana", "chi"])
    amount = fields.IntegerField(
        min_value=-100, max_value=100, help_text="Negative spends, positive restores."
    )
    cost = serializers.ChoiceField(choices=["", "ARC", "PWR", "PSI", "CHI"], default="")
    note = fields.CharField(required=False, allow_blank=True, max_length=80, default="")
