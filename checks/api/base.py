"""What the checks API views share: a service's refusals as the API's answers, the documented
error answers, and an id read from the path."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from drf_spectacular.utils import OpenApiResponse
from rest_framework import status
from rest_framework.exceptions import APIException, NotFound
from rest_framework.exceptions import PermissionDenied as DRFPermissionDenied
from rest_framework.exceptions import ValidationError as DRFValidationError

from checks.services import CheckConflict
from sheets.ids import parse_id


class Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The table moved on; nothing was done."
    default_code = "conflict"


def run[**P, T](fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """A service call, its errors as the API's."""
    try:
        return fn(*args, **kwargs)
    except DjangoValidationError as exc:
        detail = exc.message_dict if hasattr(exc, "error_dict") else exc.messages
        raise DRFValidationError(detail) from exc
    except DjangoPermissionDenied as exc:
        raise DRFPermissionDenied(str(exc) or None) from exc
    except Http404 as exc:
        raise NotFound() from exc
    except CheckConflict as exc:
        raise Conflict(str(exc)) from exc


def responses(ok: Any, code: int = 200) -> dict[int, Any]:
    """The success answer ``ok`` (a serializer: its shape in the schema) and the errors."""
    return {
        code: ok,
        400: OpenApiResponse(description="Invalid input, with the field and the reason."),
        403: OpenApiResponse(description="Not yours to do (players act for their own)."),
        404: OpenApiResponse(description="No such object, or not in your campaigns."),
        409: OpenApiResponse(description="The table moved on; nothing was done."),
    }


def path_id(raw: object) -> int:
    """The id in a path: a number past any row (5,000 digits, past a bigint) or another
    script's digits are the 404 of a missing id."""
    pk = parse_id(str(raw))
    if pk is None:
        raise NotFound()
    return pk
