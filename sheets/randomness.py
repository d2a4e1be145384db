"""The server's dice. Everything that rolls on the server asks for this generator, so tests can
replace it with a seeded ``random.Random`` (monkeypatch ``sheets.randomness.server_rng``)."""

from __future__ import annotations

import random

_SYSTEM = random.SystemRandom()


def server_rng() -> random.Random:
    return _SYSTEM
