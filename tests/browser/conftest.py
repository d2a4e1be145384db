"""Playwright against Debian's Chromium and pytest-django's live server.

Playwright's sync API runs an event loop in the test thread, so Django's ORM needs
DJANGO_ALLOW_ASYNC_UNSAFE=true here (scripts/test.sh sets it for this process only).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser

from combat import services
from combat.models import Participant
from tests.factories import make_campaign, make_thug, make_user, make_ysolde
from tests.security.pages import DemoTable
from tests.security.pages import demo_table as build_demo_table
from tests.servers import AsgiServer, start_asgi_server

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


@pytest.fixture(scope="session")
def shared_asgi_server(django_db_setup: None) -> Iterator[AsgiServer]:
    """One uvicorn for the whole browser session, on the test database (started once: a start
    per test cost about 1.4 s each, 40 s of the leg). Nothing a test leaves behind reaches the
    next one: ``asgi_server`` closes the test's pages first, then its data is flushed. The
    server's cache outlives a test: who is watching is kept by encounter id, which SQLite never
    hands out twice; the login throttle counts failed logins only; the display's request rate
    per address (60 a minute) is shared, and the suite stays far below it."""
    server = start_asgi_server(graceful=0)
    yield server
    server.stop()


@pytest.fixture
def asgi_server(
    transactional_db: None, shared_asgi_server: AsgiServer, browser: Browser
) -> Iterator[AsgiServer]:
    """The ASGI (uvicorn) server, for pages that stream live events. When the test is over,
    every browser context it opened is closed before its data is flushed, so none of its open
    pages (their live streams, their pending requests) outlives it."""
    if shared_asgi_server.process.poll() is not None:
        pytest.fail(f"the ASGI server exited with {shared_asgi_server.process.returncode}")
    before = set(browser.contexts)
    yield shared_asgi_server
    for context in browser.contexts:
        if context not in before:
            context.close()


@pytest.fixture
def demo_table() -> DemoTable:
    """The demo table (tests/security/pages.py): Ysolde's player alice, the GM gm, their
    campaign, a running encounter; its users log in with ``helpers.open_as``."""
    return build_demo_table()


@pytest.fixture
def fight(transactional_db: None) -> dict[str, Any]:
    """A fight of the factories' users: the thug (the GM's) acts, Ysolde (pat's) is his target;
    they log in with ``helpers.log_in``."""
    gm, player = make_user("gm"), make_user("pat")
    campaign = make_campaign(gm, players=(player,))
    ysolde = make_ysolde(campaign, player)
    thug = make_thug(campaign, gm)
    encounter, _ = services.create_encounter(campaign=campaign, name="Ambush", actor=gm)
    services.add_participants(encounter=encounter, characters=[ysolde, thug], actor=gm)
    services.start_encounter(encounter=encounter, actor=gm)
    thug_p = Participant.objects.get(encounter=encounter, character=thug)
    services.set_turn(encounter=encounter, participant=thug_p, actor=gm)
    return {
        "encounter": encounter,
        "thug": thug_p,
        "ysolde": Participant.objects.get(encounter=encounter, character=ysolde),
        "chest": ysolde.zones.get(name="chest"),
        "hatchet": thug.weapons.get(),
    }
