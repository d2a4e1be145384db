"""Ids typed into query strings, forms and headers."""

from __future__ import annotations

import re

# ASCII digits only: str.isdigit() also takes '²' (which int() then refuses: a server error)
# and the digits of other scripts (which int() reads, so '٧' passed as 7).
_ID = re.compile(r"[0-9]{1,19}")
#: The largest id either database stores (a bigint); a larger number is no id, and SQLite's
#: driver raises OverflowError on it.
MAX_ID = 2**63 - 1
#: How the schema documents an id in a query string.
ID_SCHEMA = {"type": "integer", "minimum": 0, "maximum": MAX_ID}


def parse_id(raw: str | None) -> int | None:
    """The id in ``raw``, or None when it is not one.

    >>> parse_id("42"), parse_id("\\u00b2"), parse_id(" 42"), parse_id(str(2**63)), parse_id(None)
    (42, None, None, None, None)
    """
    if raw is None or not _ID.fullmatch(raw) or int(raw) > MAX_ID:
        return None
    return int(raw)
