"""The API's JSON parser: DRF's, with two more kinds of bad body answered as a 400."""

from __future__ import annotations

from typing import Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError

from sheets.text import has_lone_surrogate


class JSONParser(parsers.JSONParser):
    """Two bodies DRF lets through as server errors:

    * nested deeper than Python's recursion limit (a few kilobytes of ``[``): ``json.loads``
      raises RecursionError;
    * a lone surrogate escaped in a string (``"\\ud800"``): valid JSON, but no text, so it
      cannot be encoded: the 400 that quotes it back fails, and so does PostgreSQL.
      Refused here, no view ever sees one.
    """

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the body is nested too deeply.") from None
        if has_lone_surrogate(data):
            raise ParseError(
                "JSON parse error - the body is not valid UTF-8 text: it contains a lone "
                "surrogate (a \\ud800-\\udfff escape that is not half of a pair)."
            )
        return data
