"""OMG Table's rules engine: pure Python, no Django (import-linter holds it, see pyproject.toml).

Each dice system lives in its own module (``omg``, ``ogs``, ``okrpg``, ``ore``, ``sds``);
every error they raise derives from :class:`RulesError`.
"""

from __future__ import annotations

from rules.engine import dice, forecast, odds, ogs, okrpg, omg, ore, sds
from rules.engine.errors import (
    CreationError,
    DiceError,
    FateError,
    InvalidChoice,
    InvalidScore,
    RulesError,
)

__all__ = ["CreationError", "FateError", "InvalidChoice", "InvalidScore", "RulesError"]
__all__ += ["dice", "forecast", "odds", "omg"]
__all__ += ["DiceError", "ogs", "okrpg", "ore", "sds"]
