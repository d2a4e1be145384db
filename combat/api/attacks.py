"""An open attack (defense, roll, cancel) and a roll's Fate (re-roll, revoke)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db.models import QuerySet
from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, permissions, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied as DRFPermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response

from combat import services
from combat.api.base import documented_responses
from combat.api.serializers import (
    DeclarationSerializer,
    DefenseSerializer,
    FateResultSerializer,
    FateSerializer,
    LogEntrySerializer,
    RollSerializer,
)
from combat.models import (
    CombatLogEntry,
    Declaration,
    Encounter,
)
from sheets.ids import parse_id

NOT_FOUND = "No Declaration matches the given query."


class AttackViewSet(mixins.RetrieveModelMixin, viewsets.GenericViewSet[Any]):
    """A declared attack: its defense, its roll, calling it off."""

    serializer_class = DeclarationSerializer
    permission_classes = [permissions.IsAuthenticated]

    def get_queryset(self) -> QuerySet[Declaration]:
        return Declaration.objects.filter(
            encounter__in=Encounter.objects.for_user(self.request.user)
        ).select_related(
            "zone", "weapon", "attacker__character", "target__character", "encounter__campaign"
        )

    def _entry(self, entry: CombatLogEntry) -> Response:
        return Response(LogEntrySerializer(entry, context={"request": self.request}).data)

    def _act(
        self,
        fn: Any,
        body: type[serializers.Serializer[Any]] | None = None,
        args: Callable[[dict[str, Any]], dict[str, Any]] = lambda _: {},
    ) -> Any:
        """Run ``fn`` on this attack by its id: the service finds it, in the user's campaigns
        only, under its lock (one read, no second one here). A bad body is a 400 for those
        who may see the attack, a 404 for the others, as when the attack was read first."""
        pk = parse_id(str(self.kwargs["pk"]))
        if pk is None:
            raise Http404(NOT_FOUND)
        data: dict[str, Any] = {}
        if body is not None:
            checked = body(data=self.request.data)
            if not checked.is_valid():
                self.get_object()  # 404 first
                raise serializers.ValidationError(checked.errors)
            data = dict(checked.validated_data)
        try:
            return fn(declaration=pk, actor=self.request.user, **args(data))
        except Declaration.DoesNotExist as exc:
            raise Http404(NOT_FOUND) from exc

    @extend_schema(request=DefenseSerializer, responses=documented_responses(LogEntrySerializer))
    @action(detail=True, methods=["post"])
    def defense(self, request: Request, pk: str) -> Response:
        """Dodge, parry or block: the target's player, or the GM."""
        return self._entry(
            self._act(
                services.declare_defense, DefenseSerializer, lambda d: {"defense": d["defense"]}
            )
        )

    @extend_schema(request=RollSerializer, responses=documented_responses(LogEntrySerializer))
    @action(detail=True, methods=["post"])
    def roll(self, request: Request, pk: str) -> Response:
        """Roll and resolve: server dice, or the typed value of physical dice. Resolves
        once: a second call answers 409."""
        return self._entry(
            self._act(services.resolve, RollSerializer, lambda d: {"roll": d.get("roll")})
        )

    @extend_schema(request=None, responses=documented_responses(LogEntrySerializer))
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: str) -> Response:
        """Call the attack off (its attacker's player, or the GM)."""
        return self._entry(self._act(services.cancel_declaration))


class RollViewSet(mixins.RetrieveModelMixin, viewsets.GenericViewSet[Any]):
    """Rolls (combat log entries with dice); Fate re-rolls or revokes the latest one."""

    serializer_class = LogEntrySerializer
    permission_classes = [permissions.IsAuthenticated]

    def get_queryset(self) -> QuerySet[CombatLogEntry]:
        return CombatLogEntry.objects.filter(
            encounter__in=Encounter.objects.for_user(self.request.user), roll__isnull=False
        ).select_related("encounter__campaign", "actor", "declaration")

    @extend_schema(request=FateSerializer, responses=documented_responses(FateResultSerializer))
    @action(detail=True, methods=["post"])
    def fate(self, request: Request, pk: str) -> Response:
        """Spend 1 Fate of your character to re-roll or revoke this roll, while no later
        roll exists: its effects are undone exactly, then the re-roll is applied."""
        entry = self.get_object()
        body = FateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        mine = services.fate_spenders(entry, request.user)
        if "spender" in data:
            spender = next((p for p in mine if p.pk == data["spender"]), None)
            if spender is None:
                raise DRFPermissionDenied("Spend the Fate of your own character.")
        elif len(mine) == 1:
            spender = mine[0]
        else:
            raise serializers.ValidationError(
                {"spender": "Say whose Fate to spend." if mine else "You have no one here."}
            )
        spender.encounter = entry.encounter
        fate_entry, new = services.spend_fate(
            entry=entry,
            spender=spender,
            action=data["action"],
            roll=data.get("roll"),
            actor=request.user,
        )
        context = {"request": request}
        return Response(
            {
                "fate": LogEntrySerializer(fate_entry, context=context).data,
                "reroll": LogEntrySerializer(new, context=context).data if new else None,
            }
        )
