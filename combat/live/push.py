"""Telling an encounter's broadcasters that something happened: after a log entry commits
(:func:`push`), or when access changed (:func:`wake`). The channel layer's sends go out off
the caller's thread and in order (live.pusher.Pusher)."""

from __future__ import annotations

from collections.abc import Callable

from channels.layers import get_channel_layer

from combat import events
from combat.models import CombatLogEntry
from live.pusher import pusher

ENTRY = "encounter.entry"  # channel-layer message: a log entry was committed
PRESENCE = "encounter.presence"  # channel-layer message: a viewer connected or left


def group_name(encounter_id: int) -> str:
    return f"encounter-{encounter_id}"


def presence_group_name(encounter_id: int) -> str:
    """The streams that show who is connected (the GM's): a viewer coming or going is news
    to them only, so a table of n phones costs n messages to connect, not n squared."""
    return f"encounter-{encounter_id}-presence"


def push(entry: CombatLogEntry) -> None:
    """events listener: tell every stream of the encounter that an entry was committed.

    Runs after the commit (events.publish), and only hands the message over: the channel
    layer's send happens off the request's thread (:class:`Pusher`)."""
    if get_channel_layer() is None:
        return
    pusher.send(group_name(entry.encounter_id), {"type": ENTRY, "id": entry.pk})


def wake(encounter_id: int) -> None:
    """Ask the encounter's broadcasters for a pass now, with no new entry: each checks access
    again (a revoked table display's streams end at once, not at the next heartbeat)."""
    if get_channel_layer() is None:
        return
    pusher.send(group_name(encounter_id), {"type": "encounter.wake"})


def connect_push() -> Callable[[], None]:
    """Subscribe :func:`push` to the combat events (done once, in CombatConfig.ready)."""
    return events.subscribe(push)
