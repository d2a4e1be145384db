"""Small helpers shared by the sibling dice systems (OGS, OK RPG, ORE, Simple Die System).

Private to ``rules``: validation of whole numbers and of dice typed in at the table, and the
"given value, else roll it" step every roll function takes.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from types import MappingProxyType

from rules.engine.errors import DiceError, InvalidScore


def whole(name: str, value: object, low: int | None = None, high: int | None = None) -> int:
    """Return ``value`` if it is an int within the bounds, else raise :class:`InvalidScore`.

    >>> whole("pool", 7, 0)
    7
    >>> whole("pool", True)
    Traceback (most recent call last):
    ...
    rules.engine.errors.InvalidScore: pool must be a whole number, got True
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidScore(f"{name} must be a whole number, got {value!r}")
    if low is not None and value < low:
        if high is None:
            raise InvalidScore(f"{name} must be at least {low}, got {value}")
        raise InvalidScore(f"{name} must be between {low} and {high}, got {value}")
    if high is not None and value > high:
        if low is None:
            raise InvalidScore(f"{name} must be at most {high}, got {value}")
        raise InvalidScore(f"{name} must be between {low} and {high}, got {value}")
    return value


def face(name: str, value: object, sides: int) -> int:
    """Validate one die face typed in at the table (1..sides); raise :class:`DiceError`."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise DiceError(f"{name} must be a whole number, got {value!r}")
    if not 1 <= value <= sides:
        raise DiceError(f"{name} must be between 1 and {sides} on a d{sides}, got {value}")
    return value


def faces(name: str, values: Sequence[object], sides: Sequence[int]) -> tuple[int, ...]:
    """Validate a list of faces against the dice they were rolled on (same count, same order)."""
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise DiceError(f"{name} must be a list of dice values, got {values!r}")
    if len(values) != len(sides):
        raise DiceError(f"{name}: expected {len(sides)} value(s), one per die, got {len(values)}")
    return tuple(
        face(f"{name}[{i}]", value, size)
        for i, (value, size) in enumerate(zip(values, sides, strict=True))
    )


def given_or_rolled(
    name: str, values: Sequence[object] | None, sides: Sequence[int], rng: random.Random | None
) -> tuple[int, ...]:
    """The faces typed in (validated), else faces rolled with ``rng``; one of the two is needed."""
    if values is not None:
        return faces(name, values, sides)
    if rng is None:
        raise DiceError(f"{name}: give the dice values or a random generator to roll them")
    return tuple(rng.randint(1, size) for size in sides)


def frozen_map[K, V](items: Mapping[K, V] | Iterable[tuple[K, V]]) -> Mapping[K, V]:
    """A read-only mapping, so memoised odds can be shared without being changed by callers."""
    return MappingProxyType(dict(items))


def probability(p: Fraction, exact: bool) -> float | str:
    """A probability for JSON: a float, or the exact fraction as ``"n/d"``.

    >>> probability(Fraction(1, 8), False), probability(Fraction(1, 8), True)
    (0.125, '1/8')
    """
    return f"{p.numerator}/{p.denominator}" if exact else float(p)


def probabilities[K](dist: Mapping[K, Fraction], exact: bool) -> dict[K, float | str]:
    """:func:`probability` over a distribution, keys unchanged."""
    return {k: probability(p, exact) for k, p in dist.items()}
