"""Ids typed into query strings, forms and headers."""

from __future__ import annotations

import re

# ASCII digits only: str.isdigit() also takes '²' (which int() then refuses: a server error)
# and the digits of other scripts (which int() reads, so '٧' passed as 7). Eighteen digits
# stay below 2**63 - 1, the largest id either database stores; a longer number is no id, and
# SQLite's driver would raise OverflowError on it.
_ID = re.compile(r"[0-9]{1,18}")


def parse_id(raw: str | None) -> int | None:
    """The id in ``raw``, or None when it is not one.

    >>> parse_id("42"), parse_id("\\u00b2"), parse_id(" 42"), parse_id(None)
    (42, None, None, None)
    """
    if raw is None or not _ID.fullmatch(raw):
        return None
    return int(raw)
