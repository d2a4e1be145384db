"""What the combat API views share: who may change an encounter, hidden participants,
documented responses, serializers whose fields are built once. The services' refusals are
answered by the API's one exception handler (config.api_errors)."""

from __future__ import annotations

import copy
from typing import Any

from django.db.models import Model
from drf_spectacular.utils import OpenApiResponse
from rest_framework import permissions, serializers
from rest_framework.request import Request

from combat import access
from combat.models import Encounter


def hidden_for(request: Request, encounter: Encounter) -> set[int]:
    cache: dict[int, set[int]] = request.__dict__.setdefault("_combat_hidden", {})
    if encounter.pk not in cache:
        cache[encounter.pk] = access.hidden_ids(encounter, request.user)
    return cache[encounter.pk]


def documented_responses(ok: Any, code: int = 200) -> dict[int, Any]:
    return {
        code: ok,
        400: OpenApiResponse(description="Not possible now, or invalid input (with the reason)."),
        403: OpenApiResponse(description="Not yours to do (players act for their own)."),
        404: OpenApiResponse(description="No such object, or not in your campaigns."),
        409: OpenApiResponse(description="Someone else acted first; nothing was done."),
    }


# --- Serializers ---------------------------------------------------------------------------


# A ModelSerializer whose fields are built from its model once per class, not once per
# instance: DRF reads the model's fields and builds every serializer field again for each
# object answered, most of the cost of answering a log entry or an attack (each step of a
# strike answers one). For serializers whose fields depend on their Meta alone (not on the
# request or the instance) and are flat (no nested serializer or list): each instance gets a
# shallow copy of every field, which binding to it (its name, its parent) only sets
# attributes on. Comments, not a docstring: the schema would take a docstring as the
# description of every serializer built on it.
class FieldsBuiltOnce[M: Model](serializers.ModelSerializer[M]):
    _built_fields: dict[str, serializers.Field[Any, Any, Any, Any]]

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        cls = type(self)
        built = cls.__dict__.get("_built_fields")
        if built is None:
            built = super().get_fields()
            cls._built_fields = built
        return {name: copy.copy(field) for name, field in built.items()}


# --- Views ---------------------------------------------------------------------------------


class IsGMOrReadOnly(permissions.BasePermission):
    message = "Only the campaign's GM can change this encounter."

    def has_object_permission(self, request: Request, view: Any, obj: Encounter) -> bool:
        return request.method in permissions.SAFE_METHODS or obj.campaign.is_gm(request.user)
