"""One participant: read it, the GM's changes, Stamina tests."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, permissions, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from combat import services
from combat.api.base import documented_responses
from combat.api.serializers import (
    LogEntrySerializer,
    ParticipantSerializer,
    ParticipantUpdateSerializer,
    StaminaSerializer,
)
from combat.models import (
    Encounter,
    Participant,
)


class ParticipantViewSet(mixins.RetrieveModelMixin, viewsets.GenericViewSet[Any]):
    """One participant of an encounter; the GM changes its switches."""

    serializer_class = ParticipantSerializer
    permission_classes = [permissions.IsAuthenticated]
    lookup_value_regex = r"[0-9]+"  # anything else ('٧', read as 7 by int()) is no id

    def get_queryset(self) -> QuerySet[Participant]:
        return Participant.objects.filter(
            encounter__in=Encounter.objects.for_user(self.request.user)
        ).select_related("character__owner", "encounter__campaign")

    @extend_schema(
        request=ParticipantUpdateSerializer, responses=documented_responses(LogEntrySerializer)
    )
    @action(detail=True, methods=["post"], url_path="update")
    def update_state(self, request: Request, pk: str) -> Response:
        """Hide or show numbers, on alert, tie-break order, ITV, state, clear conditions.
        GM only."""
        participant = self.get_object()
        body = ParticipantUpdateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        entry = services.update_participant(
            participant=participant,
            actor=request.user,
            **body.validated_data,
        )
        return Response(LogEntrySerializer(entry, context={"request": request}).data)

    @extend_schema(request=StaminaSerializer, responses=documented_responses(LogEntrySerializer))
    @action(detail=True, methods=["post"])
    def stamina(self, request: Request, pk: str) -> Response:
        """The Stamina test a grievous wound or a stun calls for (failure: unconscious),
        against the GM's ``difficulty`` (Moderate 20 when left out)."""
        participant = self.get_object()
        body = StaminaSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        # A field at fault (a player naming a difficulty) is a 400 that names it.
        entry = services.stamina_check(
            participant=participant,
            roll=body.validated_data.get("roll"),
            difficulty=body.validated_data.get("difficulty"),
            actor=request.user,
        )
        return Response(LogEntrySerializer(entry, context={"request": request}).data)
