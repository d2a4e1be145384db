"""Shared dice helpers: reading a d100 as two d10s, validation, injected rolling.

A d100 roll is a number 1..100 where the "00" face pair reads 100. The helpers here read it as
the two d10 faces the players actually see, which the OMG System needs for the digit SUM, for
doubles and for the fast strike's reversed reading.

>>> digit_sum(43), digit_sum(70), digit_sum(5), digit_sum(100)
(7, 17, 15, 20)
>>> reverse(43), reverse(70), reverse(10), reverse(5), reverse(100)
(34, 7, 1, 50, 100)
"""

from __future__ import annotations

import random

from rules.engine.errors import InvalidScore

__all__ = [
    "D100_FACES",
    "digit_sum",
    "digits",
    "from_faces",
    "is_doubles",
    "require_int",
    "require_roll",
    "reverse",
    "roll_d6",
    "roll_d10",
    "roll_d100",
]

#: Every value a d100 can show, in order.
D100_FACES: tuple[int, ...] = tuple(range(1, 101))


def require_int(name: str, value: object, low: int, high: int) -> int:
    """Return ``value`` if it is an integer in ``low..high``, else raise :class:`InvalidScore`.

    Booleans are refused even though Python counts them as integers: ``True`` is never a score.

    >>> require_int("DSC", 3, 0, 5)
    3
    >>> require_int("DSC", 6, 0, 5)
    Traceback (most recent call last):
    ...
    rules.engine.errors.InvalidScore: DSC must be between 0 and 5, got 6
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidScore(f"{name} must be a whole number, got {value!r}")
    if not low <= value <= high:
        raise InvalidScore(f"{name} must be between {low} and {high}, got {value}")
    return value


def require_roll(roll: object, name: str = "roll") -> int:
    """Validate a d100 result (1..100; the "00" pair is 100)."""
    return require_int(name, roll, 1, 100)


def digits(roll: int) -> tuple[int, int]:
    """The two d10 faces of a d100 roll, each read 1..10 (a face of 0 counts as 10).

    >>> digits(43), digits(70), digits(5), digits(100)
    ((4, 3), (7, 10), (10, 5), (10, 10))
    """
    roll = require_roll(roll)
    tens, units = divmod(roll % 100, 10)
    return (tens or 10, units or 10)


def digit_sum(roll: int) -> int:
    """SUM of the two d10 faces, a 0 face counting 10 (2..20). Drives OMG damage."""
    tens, units = digits(roll)
    return tens + units


def reverse(roll: int) -> int:
    """Read a d100 roll with the two dice swapped: 43 -> 34, 70 -> 07, 05 -> 50, 00 -> 00."""
    roll = require_roll(roll)
    tens, units = divmod(roll % 100, 10)
    return (units * 10 + tens) or 100


def is_doubles(roll: int) -> bool:
    """True for 11, 22, ..., 99 and 100 (both dice showing 0)."""
    roll = require_roll(roll)
    return roll == 100 or roll % 11 == 0


def from_faces(tens: int, units: int) -> int:
    """The d100 value of two d10 faces as printed (0..9 each); 0 and 0 read 100.

    >>> from_faces(4, 3), from_faces(0, 5), from_faces(7, 0), from_faces(0, 0)
    (43, 5, 70, 100)
    """
    tens = require_int("tens die", tens, 0, 9)
    units = require_int("units die", units, 0, 9)
    return (tens * 10 + units) or 100


def roll_d100(rng: random.Random) -> int:
    """Roll 1..100 with the injected generator."""
    return rng.randint(1, 100)


def roll_d10(rng: random.Random) -> int:
    """Roll 1..10 with the injected generator."""
    return rng.randint(1, 10)


def roll_d6(rng: random.Random) -> int:
    """Roll 1..6 with the injected generator."""
    return rng.randint(1, 6)
