"""REST API for the combat tracker: everything the encounter page does, with the same rules
(outsiders 404, players act for their own characters, the GM for anyone and for the
encounter itself) and the same per-viewer view (hidden NPC numbers are null for players).

Actions answer with the combat log entry they wrote, the same object the live feed sends.
409 means someone else acted first (the attack is already rolled, a value changed since);
400 says why the fight does not allow the action.

``base`` holds what the views share, ``serializers`` every body in and out; one module per
resource: ``encounters``, ``participants``, ``attacks`` (open attacks and a roll's Fate),
``conditions`` (a participant's conditions, and the record of a fight).
"""

from __future__ import annotations

from typing import Any

from combat.api.attacks import AttackViewSet, RollViewSet
from combat.api.conditions import ConditionViewSet, RecordViewSet
from combat.api.encounters import EncounterViewSet
from combat.api.participants import ParticipantViewSet

__all__ = [
    "AttackViewSet",
    "ConditionViewSet",
    "EncounterViewSet",
    "ParticipantViewSet",
    "RecordViewSet",
    "RollViewSet",
    "register",
]


def register(router: Any) -> None:
    """Add the combat endpoints to the API router (config/api_urls.py)."""
    router.register("encounters", EncounterViewSet, basename="encounter")
    router.register("participants", ParticipantViewSet, basename="participant")
    router.register("attacks", AttackViewSet, basename="attack")
    router.register("rolls", RollViewSet, basename="roll")
    router.register(
        r"participants/(?P<participant_pk>[0-9]+)/conditions",
        ConditionViewSet,
        basename="condition",
    )
    router.register(r"encounters/(?P<encounter_pk>[0-9]+)/record", RecordViewSet, basename="record")
