"""What the checks API views share: a service's refusals as the API's answers, the documented
error answers, and an id read from the path."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse
from rest_framework.exceptions import NotFound

from sheets.ids import parse_id


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
