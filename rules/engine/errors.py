"""The one exception hierarchy of the rules engine."""

from __future__ import annotations


class RulesError(ValueError):
    """Any input the rules cannot resolve. The message says what is wrong and why."""


class InvalidScore(RulesError):
    """A score, aptitude, rank or dice value outside its allowed range."""


class InvalidChoice(RulesError):
    """A name (mode, category, discipline, archetype ...) the rules do not know."""


class CreationError(RulesError):
    """A character build that breaks the creation rules."""


class FateError(RulesError):
    """A Fate spend that the rules do not allow (no Fate left, not the latest roll ...)."""


class DiceError(InvalidScore):
    """Dice values that do not fit the roll: wrong count, impossible face, missing re-roll."""
