"""The webhook API: /api/campaigns/<id>/webhooks/ (the campaign's GM only; players 403,
outsiders 404), its delivery log and "send again"."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import BaseRouter

from integrations import delivery
from integrations.delivery import RefusedURL, check_url
from integrations.models import EVENT_TYPES, WebhookDelivery, WebhookEndpoint
from sheets.fields import StrictModelSerializer
from sheets.ids import parse_id
from sheets.models import Campaign
from sheets.services import lock_campaign


class WebhookSerializer(StrictModelSerializer):
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=list(EVENT_TYPES)),
        min_length=1,
        help_text="Event types wanted.",
    )

    class Meta:
        model = WebhookEndpoint
        fields = [
            "id",
            "url",
            "description",
            "events",
            "format",
            "active",
            "paused_reason",
            "consecutive_failures",
            "created_at",
            "updated_at",
        ]
        read_only_fields = [
            "id",
            "paused_reason",
            "consecutive_failures",
            "created_at",
            "updated_at",
        ]

    def validate_url(self, url: str) -> str:
        try:
            check_url(url)
        except RefusedURL as exc:
            raise serializers.ValidationError(str(exc)) from exc
        return url

    def validate_events(self, events: list[str]) -> list[str]:
        return sorted(set(events))


#: The secret is in this answer only: no cache keeps it, and neither does an Idempotency-Key
#: record (config/idempotency.py), where it would sit for a day.
SHOWN_ONCE = {"Cache-Control": "no-store"}


class WebhookWithSecretSerializer(WebhookSerializer):
    secret = serializers.CharField(
        read_only=True, help_text="Shown once: on creation and on rotation."
    )

    class Meta(WebhookSerializer.Meta):
        fields = [*WebhookSerializer.Meta.fields, "secret"]


@extend_schema_field({"$ref": "#/components/schemas/DeliveryPayload"})
class PayloadField(serializers.JSONField):
    """The body a delivery sent (integrations/openapi.py)."""


class DeliverySerializer(serializers.ModelSerializer[WebhookDelivery]):
    payload = PayloadField(read_only=True, help_text="The body sent (before serialization).")
    # A plain string in the schema: an enum named "status" would rename the encounters' one.
    status = serializers.CharField(
        read_only=True, help_text="pending (waiting or retrying), delivered, failed, cancelled"
    )

    class Meta:
        model = WebhookDelivery
        fields = [
            "id",
            "event_type",
            "webhook_id",
            "status",
            "attempts",
            "last_status_code",
            "last_error",
            "next_attempt_at",
            "delivered_at",
            "created_at",
            "updated_at",
            "payload",
        ]
        read_only_fields = fields


@extend_schema_view(
    create=extend_schema(responses={201: WebhookWithSecretSerializer}),
)
class WebhookViewSet(
    mixins.ListModelMixin,
    mixins.CreateModelMixin,
    mixins.RetrieveModelMixin,
    mixins.UpdateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet[Any],
):
    """A campaign's webhook endpoints; its GM only."""

    serializer_class = WebhookSerializer

    def _campaign(self) -> Campaign:
        user = self.request.user
        # An id no row can have (5,000 digits, past a bigint) is None: it matches no row.
        pk = parse_id(str(self.kwargs.get("campaign_pk")))
        campaign = Campaign.objects.for_user(user).filter(pk=pk).first()  # type: ignore[misc]  # None matches no row
        if campaign is None:
            raise NotFound("No such campaign.")
        if not campaign.is_gm(user):
            raise PermissionDenied("Only the campaign's GM manages its webhooks.")
        return campaign

    def get_queryset(self) -> QuerySet[WebhookEndpoint]:
        if getattr(self, "swagger_fake_view", False):
            return WebhookEndpoint.objects.none()
        return WebhookEndpoint.objects.filter(campaign=self._campaign())

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        campaign = self._campaign()
        serializer = WebhookSerializer(data=request.data, context={"request": request})
        serializer.is_valid(raise_exception=True)
        with transaction.atomic():
            # Behind a deletion of the campaign: wait for it, then a 404 (lock_campaign).
            endpoint = serializer.save(campaign=lock_campaign(pk=campaign.pk))
        return Response(
            WebhookWithSecretSerializer(endpoint).data,
            status=status.HTTP_201_CREATED,
            headers=SHOWN_ONCE,
        )

    def perform_update(self, serializer: Any) -> None:
        endpoint = serializer.save()
        if endpoint.active and endpoint.paused_reason:
            endpoint.paused_reason = ""
            endpoint.failed_deliveries = 0
            endpoint.save()

    @extend_schema(request=None, responses={200: WebhookWithSecretSerializer})
    @action(detail=True, methods=["post"], url_path="rotate-secret")
    def rotate_secret(self, request: Request, **kwargs: Any) -> Response:
        """A new signing secret (the old one stops at once), shown in this answer only."""
        endpoint = self.get_object()
        endpoint.rotate_secret()
        return Response(WebhookWithSecretSerializer(endpoint).data, headers=SHOWN_ONCE)

    @extend_schema(responses={200: DeliverySerializer(many=True)})
    @action(detail=True, methods=["get"])
    def deliveries(self, request: Request, **kwargs: Any) -> Response:
        """The delivery log, newest first (paginated): status code, attempts, the body sent."""
        endpoint = self.get_object()
        page = self.paginate_queryset(endpoint.deliveries.all())
        return self.get_paginated_response(DeliverySerializer(page, many=True).data)

    @extend_schema(
        request=None,
        responses={
            202: DeliverySerializer,
            404: OpenApiResponse(description="No such delivery of this webhook."),
        },
    )
    @action(
        detail=True,
        methods=["post"],
        url_path=r"deliveries/(?P<delivery_pk>\d+)/send-again",
        url_name="send-again",
    )
    def send_again(self, request: Request, delivery_pk: str, **kwargs: Any) -> Response:
        """Send a delivery's body again, as a new delivery with a new webhook-id."""
        endpoint = self.get_object()
        d = get_object_or_404(WebhookDelivery, endpoint=endpoint, pk=parse_id(delivery_pk))
        copy = delivery.send_again(d)
        return Response(DeliverySerializer(copy).data, status=status.HTTP_202_ACCEPTED)


def register(router: BaseRouter) -> None:
    router.register(r"campaigns/(?P<campaign_pk>\d+)/webhooks", WebhookViewSet, basename="webhook")
