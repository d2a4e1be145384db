"""The server's dice: every die the server rolls comes from :func:`server_rng` (the sheets'
rolls, the fights', the checks', the rules API's and the dice pages'). A service takes
``rng=`` and falls back on it when given none, so a test can pass a seeded ``random.Random``
to one call, or seed all the server's dice at once with
``monkeypatch.setattr(sheets.randomness, "RNG", random.Random(7))``.
tests/sheets/test_server_rng.py holds that nothing else rolls."""

from __future__ import annotations

import random

#: The generator behind every server-side roll; tests swap in a seeded one.
RNG: random.Random = random.SystemRandom()


def server_rng() -> random.Random:
    """The server's dice, read at each call (so a swapped ``RNG`` counts everywhere)."""
    return RNG
