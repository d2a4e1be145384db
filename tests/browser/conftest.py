"""Playwright against Debian's Chromium and pytest-django's live server.

Playwright's sync API runs an event loop in the test thread, so Django's ORM needs
DJANGO_ALLOW_ASYNC_UNSAFE=true here (scripts/test.sh sets it for this process only).
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from tests.servers import start_asgi_server

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


def pytest_configure(config: pytest.Config) -> None:
    # The live server answers each request in a thread with its own SQLite connection; when the
    # browser aborts a request (htmx replacing a superseded one), Python 3.13 reports that
    # thread's connection as garbage-collected unclosed. It is the test server's, not ours.
    config.addinivalue_line(
        "filterwarnings", "ignore:unclosed database in <sqlite3.Connection:ResourceWarning"
    )
    config.addinivalue_line(
        "filterwarnings",
        "ignore:Exception ignored in. <sqlite3.Connection:pytest.PytestUnraisableExceptionWarning",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # This hook sees the whole session's items: mark only the ones in this folder.
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.path).startswith(here):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "args": [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-quic",
        ],
    }


@pytest.fixture
def context(context: Any) -> Any:
    context.set_default_timeout(10_000)
    return context


@pytest.fixture
def asgi_server(transactional_db: None):
    """An ASGI (uvicorn) server on the test database, for pages that stream live events.
    The test is over when it stops: its pages' open streams are cut at once, not after 2 s
    (waited out at every teardown while a page was still open)."""
    server = start_asgi_server(graceful=0)
    yield server
    server.stop()
