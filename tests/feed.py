"""What the open pages of an encounter are sent by the live feed, read from the broadcaster's
own pass (combat.live.broadcast.fan_out): the text each stream writes, not a path of its own.
The leak tests read it, so what they check is what a viewer's browser receives."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from combat.live import broadcast
from combat.models import Encounter
from live.sse import Message


def stream_texts(encounter: Encounter, viewers: Sequence[Any], after: int) -> list[str]:
    """The text each of ``viewers``' streams is written by one pass of the encounter's
    broadcaster, for open pages that have seen the entries up to ``after``: the chunks
    ``Broadcaster._deliver`` joins into one write. The viewers share the pass, as a table's
    pages do, so a render one audience shares reaches each of them as it would."""
    subscribers = [broadcast.Subscriber(user, after, asyncio.Queue(), True) for user in viewers]
    out = broadcast.fan_out(encounter, subscribers)
    return ["".join(out[s]) for s in subscribers]


def stream_text(encounter: Encounter, viewer: Any, after: int) -> str:
    """What one viewer's open stream is sent (:func:`stream_texts`)."""
    (text,) = stream_texts(encounter, [viewer], after)
    return text


def events(text: str) -> list[Message]:
    """The server-sent events in a stream's text, as the browser reads them (comments, such
    as the heartbeat, left out)."""
    out = []
    for block in text.split("\n\n"):
        event, id_, data = "message", None, []
        for line in block.split("\n"):
            field, _, value = line.partition(": ")
            if field == "event":
                event = value
            elif field == "id":
                id_ = int(value)
            elif field == "data":
                data.append(value)
        if block and not block.startswith(":"):
            out.append(Message(event, "\n".join(data), id_))
    return out
