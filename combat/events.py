"""The hook point for the live feed: every combat log entry is emitted once its
transaction commits, never when it rolls back.

Services call :func:`publish`; the live layer registers a listener with :func:`subscribe`
(for example one that renders the entry for each connected viewer and sends it over
Channels). Tests subscribe a list's ``append``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from django.db import transaction

if TYPE_CHECKING:
    from combat.models import CombatLogEntry

logger = logging.getLogger(__name__)
Listener = Callable[["CombatLogEntry"], None]
_listeners: list[Listener] = []


def subscribe(listener: Listener) -> Callable[[], None]:
    """Call ``listener(entry)`` after each committed entry; returns the unsubscribe function."""
    _listeners.append(listener)
    return partial(_listeners.remove, listener)


def emit(entry: CombatLogEntry) -> None:
    """Send one committed entry to every listener (a failing listener does not stop the
    others, nor the request: the log already holds the entry, and clients catch up from it)."""
    for listener in list(_listeners):
        try:
            listener(entry)
        except Exception:  # a live push must never break the action that was committed
            logger.exception("combat event listener failed")


def publish(entry: CombatLogEntry) -> None:
    """Emit ``entry`` when the current transaction commits (at once outside a transaction)."""
    transaction.on_commit(partial(emit, entry), robust=True)
