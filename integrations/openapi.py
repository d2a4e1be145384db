"""The webhooks in the OpenAPI schema (its ``webhooks`` section): one per event type, the
signed JSON body each sends (the chat format is documented in docs/integrations.md)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, OpenApiWebhook, extend_schema
from rest_framework import serializers

from integrations.models import EVENT_TYPES


class NamedSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    name = serializers.CharField()


class EncounterRefSerializer(NamedSerializer):
    round = serializers.IntegerField()


class EntryRefSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField(help_text="The combat log entry (as in /events/).")
    seq = serializers.IntegerField()
    kind = serializers.CharField()


class RollResultSerializer(serializers.Serializer[Any]):
    pro = serializers.IntegerField()
    dif = serializers.IntegerField()
    pvd = serializers.CharField(help_text='"70v20"')
    roll = serializers.IntegerField()
    degree = serializers.CharField()
    abbr = serializers.CharField(
        allow_null=True, help_text="DrS, DrF, EpS, EpF or SwS; null for a plain result."
    )
    success = serializers.BooleanField()
    maneuver = serializers.CharField(required=False)
    hits = serializers.ListField(child=serializers.IntegerField(), help_text="Damage per hit.")
    damage = serializers.IntegerField(help_text="Total damage of the hits.")


class WoundsSerializer(serializers.Serializer[Any]):
    vit_loss = serializers.IntegerField()
    vitality = serializers.IntegerField()
    grievous = serializers.BooleanField()
    down = serializers.BooleanField()


class CombatDataSerializer(serializers.Serializer[Any]):
    campaign = NamedSerializer()
    encounter = EncounterRefSerializer()
    entry = EntryRefSerializer()
    actor = serializers.CharField(allow_null=True, help_text="Username of who acted.")
    text = serializers.CharField(help_text="The log line as a player reads it.")
    redacted = serializers.BooleanField(
        help_text="A hidden participant is involved: only the public text, no numbers."
    )
    participant = serializers.CharField(allow_null=True, help_text="Who acted (attacker).")
    target = serializers.CharField(allow_null=True, help_text="Against whom.")
    action = serializers.CharField(required=False)
    defense = serializers.CharField(required=False, allow_null=True)
    turn_of = serializers.CharField(required=False, allow_null=True)
    result = RollResultSerializer(required=False, help_text="Absent when redacted.")
    wounds = WoundsSerializer(required=False, help_text="Absent when redacted.")
    physical = serializers.BooleanField(required=False, help_text="Dice typed in at the table.")
    state = serializers.CharField(required=False, help_text="participant.down: down, out, ...")


class CharacterRefSerializer(NamedSerializer):
    player = serializers.CharField()
    npc = serializers.BooleanField()
    version = serializers.IntegerField()


class CharacterDataSerializer(serializers.Serializer[Any]):
    campaign = NamedSerializer()
    character = CharacterRefSerializer()


def _webhook(event_type: str) -> OpenApiWebhook:
    data: type[serializers.Serializer[Any]] = (
        CharacterDataSerializer if event_type.startswith("character.") else CombatDataSerializer
    )
    if event_type.startswith("check."):
        from integrations.check_events import CheckDataSerializer

        data = CheckDataSerializer
    name = "".join(part.title() for part in event_type.split(".")) + "Event"
    body = type(
        name,
        (serializers.Serializer,),
        {
            "type": serializers.ChoiceField(choices=[event_type]),
            "timestamp": serializers.DateTimeField(),
            "data": data(),
        },
    )
    return OpenApiWebhook(
        name=event_type,
        decorator=extend_schema(
            summary=EVENT_TYPES[event_type],
            description=(
                "POSTed to each endpoint that asked for it, signed per Standard Webhooks "
                "(`webhook-id`, the same on every retry; `webhook-timestamp`; "
                "`webhook-signature`). Answer 2xx within 10 s; anything else is retried "
                "with exponential backoff for about a day. See docs/integrations.md."
            ),
            request=body,
            responses={200: OpenApiResponse(description="Received (any 2xx).")},
        ),
    )


ROLL_RESOLVED = _webhook("roll.resolved")
DAMAGE_APPLIED = _webhook("damage.applied")
PARTICIPANT_DOWN = _webhook("participant.down")
TURN_PASSED = _webhook("turn.passed")
ENCOUNTER_STARTED = _webhook("encounter.started")
ENCOUNTER_FINISHED = _webhook("encounter.finished")
CHARACTER_CREATED = _webhook("character.created")
CHARACTER_CHANGED = _webhook("character.changed")
CHARACTER_RESTED = _webhook("character.rested")
CHECK_RESOLVED = _webhook("check.resolved")


#: The nine event bodies, by the names drf-spectacular gives their components.
EVENT_COMPONENTS = [
    "".join(part.title() for part in event_type.split(".")) + "Event" for event_type in EVENT_TYPES
]

_STR = {"type": "string"}
CHAT_MESSAGE = {
    "type": "object",
    "description": "The chat format's body: `content` for Discord, `text` for Slack and "
    "Mattermost, one embed, and no mentions.",
    "properties": {
        "content": _STR,
        "text": _STR,
        "embeds": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "title": _STR,
                    "description": _STR,
                    "fields": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "name": _STR,
                                "value": _STR,
                                "inline": {"type": "boolean"},
                            },
                            "required": ["name", "value", "inline"],
                        },
                    },
                    "timestamp": {"type": "string", "format": "date-time"},
                },
                "required": ["title", "description", "fields", "timestamp"],
            },
        },
        "allowed_mentions": {
            "type": "object",
            "properties": {"parse": {"type": "array", "items": _STR, "maxItems": 0}},
            "required": ["parse"],
        },
    },
    "required": ["content", "text", "embeds", "allowed_mentions"],
}

DELIVERY_PAYLOAD = {
    "oneOf": [
        *({"$ref": f"#/components/schemas/{name}"} for name in EVENT_COMPONENTS),
        {"$ref": "#/components/schemas/ChatMessage"},
    ],
    "description": "The body sent (before serialization): the event (its `type` says which) "
    "or, for a chat endpoint, the chat message.",
}


def components(existing: dict[str, Any]) -> dict[str, Any]:
    return {"ChatMessage": CHAT_MESSAGE, "DeliveryPayload": DELIVERY_PAYLOAD}
