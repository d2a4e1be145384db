"""What the combat API views share: the 409 and 400 errors, running a service, who may change
an encounter, hidden participants, documented responses."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse
from rest_framework import permissions, status
from rest_framework.exceptions import APIException
from rest_framework.request import Request

from combat import access, services
from combat.models import Encounter

# --- Errors --------------------------------------------------------------------------------


class Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "Someone else acted first."
    default_code = "conflict"


class NotAllowedNow(APIException):
    status_code = status.HTTP_400_BAD_REQUEST
    default_detail = "The fight does not allow this now."
    default_code = "invalid"


def run_service(fn: Any, **kwargs: Any) -> Any:
    try:
        return fn(**kwargs)
    except services.CombatConflict as exc:
        raise Conflict(str(exc)) from exc
    except services.CombatError as exc:
        raise NotAllowedNow(str(exc)) from exc


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


# --- Views ---------------------------------------------------------------------------------


class IsGMOrReadOnly(permissions.BasePermission):
    message = "Only the campaign's GM can change this encounter."

    def has_object_permission(self, request: Request, view: Any, obj: Encounter) -> bool:
        return request.method in permissions.SAFE_METHODS or obj.campaign.is_gm(request.user)
