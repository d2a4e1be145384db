"""Argument checks for the OMG engine's public functions.

The engine is total: a wrong-shaped argument (``None`` for a mapping, a list for a name, a
string for a flag) is answered with a :class:`~rules.engine.errors.RulesError` that names it, never
with whatever ``AttributeError`` or ``TypeError`` Python would raise deep inside. Integers are
checked by :func:`rules.engine.dice.require_int`; these helpers cover the other shapes.

>>> require_flag("fast", True)
True
>>> require_flag("fast", "yes")
Traceback (most recent call last):
...
rules.engine.errors.InvalidChoice: fast must be True or False, got 'yes'
"""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping, Sequence

from rules.engine.errors import InvalidChoice, RulesError

__all__ = [
    "require_flag",
    "require_instance",
    "require_mapping",
    "require_names",
    "require_rng",
    "require_sequence",
    "require_text",
]


def require_flag(name: str, value: object) -> bool:
    """``value`` if it is ``True`` or ``False``; 1, ``"yes"`` and ``None`` are not flags."""
    if not isinstance(value, bool):
        raise InvalidChoice(f"{name} must be True or False, got {value!r}")
    return value


def require_text(name: str, value: object) -> str:
    """``value`` if it is a string (a name, a key); the caller checks which names it knows."""
    if not isinstance(value, str):
        raise InvalidChoice(f"{name} must be text, got {value!r}")
    return value


def require_instance[T](name: str, value: object, kind: type[T]) -> T:
    """``value`` if it is a ``kind``: a zone must be a ``Zone``, a state a ``RestState`` ..."""
    if not isinstance(value, kind):
        raise RulesError(f"{name} must be a {kind.__name__}, got {value!r}")
    return value


def require_rng(rng: object) -> random.Random | None:
    """``None`` or a ``random.Random`` (``SystemRandom`` included) to roll with."""
    if rng is not None and not isinstance(rng, random.Random):
        raise RulesError(f"rng must be a random.Random to roll with, got {rng!r}")
    return rng


def require_mapping(name: str, value: object, error: type[RulesError]) -> Mapping[str, object]:
    """``value`` if it is a mapping whose keys are all strings; else ``error``."""
    if not isinstance(value, Mapping):
        raise error(f"{name} must be a mapping of names to values, got {value!r}")
    for key in value:
        if not isinstance(key, str):
            raise error(f"{name} must be keyed by names (text), got the key {key!r}")
    return value


def require_sequence(name: str, value: object, error: type[RulesError]) -> Sequence[object]:
    """``value`` if it is a list or tuple-like sequence; a string is not a sequence of dice."""
    if not isinstance(value, Sequence) or isinstance(value, str | bytes | bytearray):
        raise error(f"{name} must be a list of values, got {value!r}")
    return value


def require_names(name: str, value: object) -> Collection[str]:
    """``value`` if it is a collection (set, list, tuple ...) of strings, a lone string not
    being one: ``"Juggling"`` would otherwise match every substring of it."""
    if not isinstance(value, Collection) or isinstance(value, str | bytes | bytearray):
        raise InvalidChoice(f"{name} must be a collection of names, got {value!r}")
    for item in value:
        if not isinstance(item, str):
            raise InvalidChoice(f"{name} must hold names (text), got {item!r}")
    return value
