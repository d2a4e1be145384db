"""Text typed by users that no database can store."""

from __future__ import annotations

import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def has_lone_surrogate(data: Any) -> bool:
    """Whether any string in parsed JSON (keys included) holds a lone surrogate, walked
    without recursion. A pair (``"\\ud83d\\udc09"``) is read as the one character it spells;
    only a half of one is left as a surrogate."""
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            if _SURROGATE.search(value):
                return True
        elif isinstance(value, dict):
            stack.extend(value)
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return False
