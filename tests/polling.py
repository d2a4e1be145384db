"""Waiting for a condition, never for a fixed time: a test goes on the moment what it waits for
has happened, and fails (or reports what it found) at a deadline far beyond the usual time.

The poll intervals below, and ``nothing_within``, are the only sleeps the suite's own code has
(tests/config/test_test_layout.py holds them to it)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from typing import Any


def wait_for(predicate: Callable[[], bool], seconds: float = 10.0, every: float = 0.05) -> bool:
    """Whether ``predicate()`` came true within ``seconds``, asked every ``every`` seconds."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(every)  # the poll interval
    return predicate()


async def wait_for_async(
    predicate: Callable[[], bool], seconds: float = 10.0, every: float = 0.01
) -> bool:
    """``wait_for`` inside an event loop: the loop's other tasks run between two asks."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while loop.time() < deadline:
        if predicate():
            return True
        await asyncio.sleep(every)  # the poll interval
    return predicate()


async def waiting_inside(generator: AsyncIterator[Any], seconds: float = 5.0) -> None:
    """Returns once ``generator`` (an async generator a task of its own steps on) is inside,
    waiting on something (a stream waiting for news, say) rather than at a ``yield``:
    cancelling that task then cancels the wait, not a step that never began."""

    def inside() -> bool:
        return bool(getattr(generator, "ag_running", False))

    assert await wait_for_async(inside, seconds, every=0), f"{generator!r} never went on"


async def nothing_within(seconds: float) -> None:
    """Lets ``seconds`` of real time pass: the one way to see that something does *not*
    happen (a message no one should hear, a pass that should not come again) is to give it the
    time it would have taken."""
    await asyncio.sleep(seconds)
