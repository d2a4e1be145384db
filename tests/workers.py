"""What a test shares with the other pytest-xdist workers of the same run, kept apart.

Each worker has its own test database already (pytest-django names it after the worker); the
Redis that scripts/test.sh starts is one server for all of them, so each worker takes a
database number of its own there: two workers' encounters with the same id never share a
channel-layer group or a cache key.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit


def worker_index() -> int:
    """0, 1, ... for xdist's gw0, gw1, ...; 0 when the tests run in one process."""
    return int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)


def worker_redis_url() -> str:
    """TEST_REDIS_URL with this worker's own database number ("" when it is not set)."""
    url = os.environ.get("TEST_REDIS_URL", "")
    if not url:
        return ""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{worker_index()}"))
