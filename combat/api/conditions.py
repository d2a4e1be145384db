"""A participant's conditions (list, the GM adds or removes one) and the record of a fight
(JSON and Markdown), with the tracker's rules: members read, the GM changes, outsiders 404."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import permissions, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from combat import access, record, services
from combat import conditions as rules_of_conditions
from combat.api.base import documented_responses
from combat.api.serializers import LogEntrySerializer
from combat.api.shapes import ref
from combat.models import Encounter, Participant
from sheets import fields
from sheets.ids import parse_id


class ConditionSerializer(serializers.Serializer[Any]):
    key = serializers.CharField(help_text="What to send to remove it.")
    label = serializers.CharField()  # type: ignore[assignment]  # DRF moves fields off the class
    custom = serializers.BooleanField(help_text="One of the GM's own named conditions.")
    ends = serializers.ChoiceField(
        choices=["turn", "round", "removed", "state"],
        help_text="turn: at the start of the participant's next turn; round: when round "
        "`until` ends; removed: when the GM removes it; state: the participant's state "
        "(unconscious, dying), removed by setting the state back.",
    )
    until = serializers.IntegerField(allow_null=True, help_text="The last round it lasts.")
    rounds_left = serializers.IntegerField(allow_null=True)
    left = serializers.CharField(help_text="What is left of it, in words.")
    stops_acting = serializers.BooleanField()
    by = serializers.IntegerField(allow_null=True, help_text="The participant who caused it.")


class ConditionAddSerializer(fields.StrictSerializer):
    name = fields.CharField(
        max_length=rules_of_conditions.MAX_LABEL,
        help_text="A built-in (stunned, prone or thrown, grappled or held, disarmed, shoved, "
        "unconscious, dying) or the GM's own name.",
    )
    rounds = fields.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=rules_of_conditions.MAX_ROUNDS,
        help_text="How many rounds, counting this one. Leave out for a built-in's own duration.",
    )
    until_removed = fields.BooleanField(default=False, help_text="Lasts until removed.")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs.get("rounds") is not None and attrs.get("until_removed"):
            raise serializers.ValidationError(
                {"rounds": ["Send `rounds` or `until_removed`, not both."]}
            )
        return attrs


class ConditionRemoveSerializer(fields.StrictSerializer):
    key = fields.CharField(max_length=80, help_text="The condition's key, as listed.")


def conditions_of(p: Participant) -> list[dict[str, Any]]:
    """The participant's conditions, its state (unconscious, dying) first."""
    out: list[dict[str, Any]] = []
    state = rules_of_conditions.STATE_CONDITIONS.get(p.state)
    if state is not None:
        out.append(
            {
                "key": state,
                "label": state.capitalize(),
                "custom": False,
                "ends": "state",
                "until": None,
                "rounds_left": None,
                "left": "until removed",
                "stops_acting": True,
                "by": None,
            }
        )
    out += [
        {
            "key": s.key,
            "label": s.label,
            "custom": s.custom,
            "ends": s.ends,
            "until": s.until,
            "rounds_left": s.rounds_left,
            "left": s.left,
            "stops_acting": s.stops_acting,
            "by": s.by,
        }
        for s in p.shown_conditions()
    ]
    return out


class ConditionViewSet(viewsets.GenericViewSet[Any]):
    """A participant's conditions with what is left of each (visible to every member of the
    campaign, hidden NPCs included: docs/rules.md, "Conditions"); the GM adds and removes."""

    permission_classes = [permissions.IsAuthenticated]
    serializer_class = ConditionSerializer
    pagination_class = None  # a handful at most (MAX_CONDITIONS)

    def get_queryset(self) -> QuerySet[Participant]:
        return Participant.objects.filter(
            encounter__in=Encounter.objects.for_user(self.request.user)
        ).select_related("character", "encounter__campaign")

    def _participant(self) -> Participant:
        pk = parse_id(str(self.kwargs["participant_pk"]))  # None (no id) matches no row
        return get_object_or_404(self.get_queryset(), pk=pk)

    @extend_schema(responses=documented_responses(ConditionSerializer(many=True)))
    def list(self, request: Request, participant_pk: str) -> Response:
        return Response(ConditionSerializer(conditions_of(self._participant()), many=True).data)

    @extend_schema(
        request=ConditionAddSerializer, responses=documented_responses(LogEntrySerializer, code=201)
    )
    def create(self, request: Request, participant_pk: str) -> Response:
        """Add a condition (GM only). The same name again replaces it with the new duration."""
        p = self._participant()
        body = ConditionAddSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        entry = services.add_condition(participant=p, actor=request.user, **body.validated_data)
        return Response(LogEntrySerializer(entry, context={"request": request}).data, status=201)

    @extend_schema(
        request=ConditionRemoveSerializer, responses=documented_responses(LogEntrySerializer)
    )
    @action(detail=False, methods=["post"])
    def remove(self, request: Request, participant_pk: str) -> Response:
        """Remove one condition by its key (GM only); "unconscious" or "dying" sets the
        participant's state back to active."""
        p = self._participant()
        body = ConditionRemoveSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        entry = services.remove_condition(
            participant=p,
            key=body.validated_data["key"],
            actor=request.user,
        )
        return Response(LogEntrySerializer(entry, context={"request": request}).data)


class RecordViewSet(viewsets.ViewSet):
    """The record of a fight for the campaign's journal, built as you see the fight: a
    player's carries no hidden NPC's numbers and no log details; the GM's has everything."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        responses={
            200: OpenApiResponse(ref("Record"), description="The record as JSON."),
            404: OpenApiResponse(description="No such encounter, or not in your campaigns."),
        }
    )
    def list(self, request: Request, encounter_pk: str) -> Response:
        encounter = access.get_encounter(request.user, _id(encounter_pk))
        return Response(record.build(encounter, request.user))

    @extend_schema(
        responses={
            (200, "text/markdown"): OpenApiResponse(
                OpenApiTypes.STR, description="The record as Markdown."
            ),
            404: OpenApiResponse(description="No such encounter, or not in your campaigns."),
        }
    )
    @action(detail=False, methods=["get"])
    def markdown(self, request: Request, encounter_pk: str) -> HttpResponse:
        encounter = access.get_encounter(request.user, _id(encounter_pk))
        body = record.markdown(record.build(encounter, request.user))
        return HttpResponse(body, content_type="text/markdown; charset=utf-8")


def _id(raw: str) -> int:
    pk = parse_id(raw)
    if pk is None:
        raise Http404("No such encounter.")
    return pk
