"""REST API for campaigns. Same rules as the pages: outsiders 404, only the GM changes."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import exceptions, permissions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response

from rules.engine import RulesError
from sheets import fields, limits, randomness, services
from sheets.api.characters import RestResultSerializer, rest_payload
from sheets.http import signed_in
from sheets.models import Campaign
from sheets.refusals import Refused


class PlayerSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField(read_only=True)
    username = serializers.CharField(read_only=True)


class CampaignSerializer(fields.StrictModelSerializer):
    gm = serializers.CharField(source="gm.username", read_only=True)
    is_gm = serializers.SerializerMethodField()
    players = serializers.SerializerMethodField()
    join_code = serializers.SerializerMethodField(
        help_text="Only the GM sees the join code; null for players."
    )

    class Meta:
        model = Campaign
        fields = [
            "id",
            "name",
            "description",
            "gm",
            "is_gm",
            "players",
            "join_code",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["id", "created_at", "updated_at"]

    def _user(self) -> Any:
        return self.context["request"].user

    @extend_schema_field(OpenApiTypes.BOOL)
    def get_is_gm(self, obj: Campaign) -> bool:
        return bool(obj.gm_id == self._user().pk)

    @extend_schema_field(PlayerSerializer(many=True))
    def get_players(self, obj: Campaign) -> list[dict[str, Any]]:
        return [{"id": m.user.pk, "username": m.user.username} for m in obj.memberships.all()]

    @extend_schema_field({"type": "string", "nullable": True})
    def get_join_code(self, obj: Campaign) -> str | None:
        return obj.join_code if obj.gm_id == self._user().pk else None


class JoinSerializer(fields.StrictSerializer):
    code = fields.CharField(max_length=32)


class RemovePlayerSerializer(fields.StrictSerializer):
    user_id = fields.IntegerField(min_value=1)


class CampaignRestSerializer(RestResultSerializer):
    """One character's part of the campaign's rest."""

    character = serializers.IntegerField(help_text="The character's id.")
    name = serializers.CharField()


class IsCampaignGMOrReadOnly(permissions.BasePermission):
    message = "Only the campaign's GM can change it."

    def has_object_permission(self, request: Request, view: Any, obj: Campaign) -> bool:
        if request.method in permissions.SAFE_METHODS:
            return True
        return obj.gm_id == request.user.pk


class CampaignViewSet(viewsets.ModelViewSet[Any]):
    """Campaigns I run or play in. Create makes me the GM; only the GM updates or deletes."""

    serializer_class = CampaignSerializer
    permission_classes = [permissions.IsAuthenticated, IsCampaignGMOrReadOnly]

    def get_queryset(self) -> QuerySet[Campaign]:
        return (
            Campaign.objects.for_user(self.request.user)
            .select_related("gm")
            .prefetch_related("memberships__user")
        )

    def perform_create(self, serializer: serializers.BaseSerializer[Campaign]) -> None:
        serializer.save(gm=self.request.user)

    def perform_destroy(self, instance: Campaign) -> None:
        # With its fights, which may be played right now: the service locks them first.
        if not services.delete_campaign(user=signed_in(self.request.user), campaign=instance):
            raise NotFound("No such campaign: it was deleted meanwhile.")

    @extend_schema(
        request=JoinSerializer,
        responses={
            200: OpenApiResponse(CampaignSerializer, description="Already a member."),
            201: OpenApiResponse(CampaignSerializer, description="Joined."),
            400: OpenApiResponse(description="Unknown or missing join code."),
            429: OpenApiResponse(
                description="Too many join codes tried, by this user or from this address "
                "(THROTTLE_JOIN); wait for Retry-After seconds."
            ),
        },
    )
    @action(detail=False, methods=["post"], url_path="join")
    def join(self, request: Request) -> Response:
        """Join a campaign as a player with the code the GM shared. Attempts are limited per
        user and per client address, like the join page's."""
        payload = JoinSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        user = signed_in(request.user)
        try:
            limits.check_join(request, user)
        except limits.RateLimited as exc:
            # DRF adds "Expected available in N seconds."
            raise exceptions.Throttled(wait=exc.wait, detail="Too many join codes tried.") from exc
        try:
            campaign, created = services.join_campaign(
                user=user, code=payload.validated_data["code"]
            )
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from exc
        data = self.get_serializer(self.get_queryset().get(pk=campaign.pk)).data
        return Response(data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    @extend_schema(request=None, responses={200: CampaignSerializer})
    @action(detail=True, methods=["post"], url_path="regenerate-code")
    def regenerate_code(self, request: Request, pk: str | None = None) -> Response:
        """Replace the join code; the old one stops working at once."""
        campaign = self.get_object()
        campaign.regenerate_join_code()
        return Response(self.get_serializer(campaign).data)

    @extend_schema(
        request=None,
        responses={
            200: OpenApiResponse(
                CampaignRestSerializer(many=True),
                description="Each character's rest, in id order: raised disciplines, ITV, "
                "MNA, CHI.",
            ),
            400: OpenApiResponse(
                description="The rules refuse one sheet's stored data (`detail` names it and "
                "says what): nobody rested."
            ),
        },
    )
    # The whole table's rest in one answer: a list, not a page of one.
    @action(detail=True, methods=["post"], pagination_class=None)
    def rest(self, request: Request, pk: str | None = None) -> Response:
        """The daily rest for every character of the campaign (GM only), all or nothing."""
        campaign = self.get_object()
        try:
            results = services.rest_campaign(
                user=signed_in(request.user), campaign=campaign, rng=randomness.server_rng()
            )
        except RulesError as exc:
            raise Refused(f"No one rested. {exc}") from exc
        return Response(
            [
                {"character": character.pk, "name": character.name, **rest_payload(result)}
                for character, result in results
            ]
        )

    @extend_schema(
        request=RemovePlayerSerializer,
        responses={
            200: CampaignSerializer,
            400: OpenApiResponse(description="That user is not a player of the campaign."),
        },
    )
    @action(detail=True, methods=["post"], url_path="remove-player")
    def remove_player(self, request: Request, pk: str | None = None) -> Response:
        """Remove a player from the campaign (GM only)."""
        campaign = self.get_object()
        payload = RemovePlayerSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        if not services.remove_player(
            user=signed_in(request.user),
            campaign=campaign,
            user_id=payload.validated_data["user_id"],
        ):
            raise serializers.ValidationError({"user_id": ["That user is not in this campaign."]})
        return Response(self.get_serializer(self.get_queryset().get(pk=campaign.pk)).data)
