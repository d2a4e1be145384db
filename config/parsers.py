"""The API's JSON parser: DRF's, with one more kind of bad body answered as a 400."""

from __future__ import annotations

from typing import Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError


class JSONParser(parsers.JSONParser):
    """A body nested deeper than Python's recursion limit (a few kilobytes of ``[``) makes
    ``json.loads`` raise RecursionError, which DRF lets through as a server error."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the body is nested too deeply.") from None
