"""A fight from the seed's numbers (the builders are in tests/factories.py)."""

from __future__ import annotations

from typing import Any

import pytest

from combat import events
from tests.factories import Fight, make_fight


@pytest.fixture
def emitted():
    """Entries emitted to the live layer (after commit)."""
    seen: list[Any] = []
    unsubscribe = events.subscribe(seen.append)
    yield seen
    unsubscribe()


@pytest.fixture
def fight(table: Any) -> Fight:
    """A running encounter: Ysolde (the player's, ITV 14) acts before one thug copy (ITV 9)."""
    return make_fight(table)
