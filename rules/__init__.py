"""The rules app: the pure-Python engine (``rules.engine``) and its web layer.

``rules.engine`` resolves dice and knows nothing of Django; ``rules.api`` is the public rules API
under /api/rules/, ``rules.views`` the dice pages under /dice/, ``rules.models`` the campaign
roll log. The engine's public names are re-exported here, so ``from rules import omg, RulesError``
works without Django (see docs/architecture.md).
"""

from __future__ import annotations

from rules.engine import (
    CreationError,
    DiceError,
    FateError,
    InvalidChoice,
    InvalidScore,
    RulesError,
    dice,
    forecast,
    odds,
    ogs,
    okrpg,
    omg,
    ore,
    sds,
)

__all__ = ["CreationError", "DiceError", "FateError", "InvalidChoice", "InvalidScore"]
__all__ += ["RulesError", "dice", "forecast", "odds", "ogs", "okrpg", "omg", "ore", "sds"]
