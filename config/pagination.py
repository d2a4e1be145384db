"""The API's pagination: DRF's ``limit`` and ``offset``, read strictly.

DRF reads them leniently: a limit it cannot read (``ten``, ``0``, ``²``) falls back to the page
size, and any other number is used as it is, so ``limit=9223372036854775808`` reached the
database as ``LIMIT`` and answered 500 ("bigint out of range" on PostgreSQL). Here either is a
plain whole number within the range the schema documents, or the answer is a 400 saying so.
"""

from __future__ import annotations

import re
from typing import Any

from rest_framework import pagination, serializers
from rest_framework.request import Request

MAX_LIMIT = 1000
#: Far past any list's length (a later page is empty), far below 2**63.
MAX_OFFSET = 1_000_000_000

_WHOLE = re.compile(r"[0-9]{1,10}")  # ASCII digits: str.isdigit() also takes '²'


def _read(request: Request, name: str, low: int, high: int, default: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    if _WHOLE.fullmatch(raw) and low <= int(raw) <= high:
        return int(raw)
    raise serializers.ValidationError({name: [f"Give a whole number from {low} to {high}."]})


class LimitOffsetPagination(pagination.LimitOffsetPagination):
    max_limit = MAX_LIMIT

    def get_limit(self, request: Request) -> int:
        return _read(request, self.limit_query_param, 1, MAX_LIMIT, self.default_limit)  # type: ignore[arg-type]  # PAGE_SIZE is set

    def get_offset(self, request: Request) -> int:
        return _read(request, self.offset_query_param, 0, MAX_OFFSET, 0)

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        bounds = {
            self.limit_query_param: (1, MAX_LIMIT),
            self.offset_query_param: (0, MAX_OFFSET),
        }
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            low, high = bounds[parameter["name"]]
            parameter["schema"] = {"type": "integer", "minimum": low, "maximum": high}
        return parameters
