"""The caller's own API tokens: /api/tokens/. List, create (the key is in that one answer
only: only its hash is stored) and revoke. A session or a token is needed; nobody sees or
revokes another user's tokens (they are 404 to them)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import exceptions, mixins, serializers, status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.throttling import UserRateThrottle

from config.throttling import FailOpenThrottleMixin
from sheets.fields import StrictModelSerializer
from sheets.http import signed_in
from sheets.models import ApiToken, TokenRevoked


class ApiTokenSerializer(StrictModelSerializer):
    prefix = serializers.CharField(
        read_only=True, help_text="The key's first 8 characters, to tell keys apart."
    )

    class Meta:
        model = ApiToken
        fields = ["id", "name", "prefix", "created_at", "last_used_at"]
        read_only_fields = ["id", "prefix", "created_at", "last_used_at"]


class NewApiTokenSerializer(ApiTokenSerializer):
    key = serializers.CharField(
        read_only=True,
        help_text="Send as `Authorization: Bearer <key>` (or `Token <key>`). Shown in this "
        "answer only: it cannot be read again, only revoked.",
    )

    class Meta(ApiTokenSerializer.Meta):
        fields = [*ApiTokenSerializer.Meta.fields, "key"]


class TokenCreateThrottle(FailOpenThrottleMixin, UserRateThrottle):
    """New keys per user: a script that loops on creation is stopped early (revoking and
    listing are not counted); let through while the cache is down, like every throttle."""

    scope = "token_create"

    def get_rate(self) -> str | None:
        # Read at request time so a changed setting (tests, a reload) takes effect.
        rate = api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)
        return None if rate is None else str(rate)

    def allow_request(self, request: Request, view: Any) -> bool:
        if request.method != "POST":
            return True
        return super().allow_request(request, view)


@extend_schema_view(
    list=extend_schema(summary="Your API tokens (never their keys)"),
    create=extend_schema(
        summary="Create an API token; its key is in this answer only",
        responses={
            201: NewApiTokenSerializer,
            429: OpenApiResponse(description="Too many new tokens in a short time; wait."),
        },
    ),
    destroy=extend_schema(summary="Revoke one of your API tokens, at once"),
)
class ApiTokenViewSet(
    mixins.ListModelMixin,
    mixins.CreateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet[Any],
):
    """The caller's own API tokens, as on the API tokens page."""

    serializer_class = ApiTokenSerializer
    throttle_classes = [TokenCreateThrottle]

    def get_queryset(self) -> QuerySet[ApiToken]:
        if getattr(self, "swagger_fake_view", False):
            return ApiToken.objects.none()
        return ApiToken.objects.filter(user=signed_in(self.request.user))

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = ApiTokenSerializer(data=request.data, context={"request": request})
        serializer.is_valid(raise_exception=True)
        # A token minted by a token stops with it: revoked meanwhile, it mints nothing.
        minted_by = request.auth if isinstance(request.auth, ApiToken) else None
        try:
            token, key = ApiToken.objects.create_token(
                user=signed_in(request.user),
                name=serializer.validated_data["name"],
                minted_by=minted_by,
            )
        except TokenRevoked as exc:
            raise exceptions.AuthenticationFailed(str(exc)) from exc
        body = {**NewApiTokenSerializer(token).data, "key": key}
        # The key is in this answer only: no cache, and no Idempotency-Key record, keeps it.
        return Response(body, status=status.HTTP_201_CREATED, headers={"Cache-Control": "no-store"})
