"""A hidden fighter's wounds told in words, for the players of a fight whose GM chose to tell
them: unhurt, hurt, badly hurt or down. The thresholds are in docs/rules.md ("Wounds in words
for hidden foes"); only the word leaves the server, never a number."""

from __future__ import annotations

from collections.abc import Iterable

UNHURT, HURT, BADLY_HURT, DOWN = "unhurt", "hurt", "badly hurt", "down"
WORDS = (UNHURT, HURT, BADLY_HURT, DOWN)


def wounds_in_words(
    *, state: str, vitality: int, vit_max: int, zones: Iterable[tuple[int, int]]
) -> str:
    """The word for a fighter in ``state`` with ``vitality`` of ``vit_max`` left and
    ``(wounds, bzf)`` for each body zone.

    >>> wounds_in_words(state="active", vitality=9, vit_max=9, zones=[(0, 12)])
    'unhurt'
    >>> wounds_in_words(state="active", vitality=9, vit_max=9, zones=[(3, 12)])
    'hurt'
    >>> wounds_in_words(state="active", vitality=4, vit_max=9, zones=[(14, 12)])
    'badly hurt'
    >>> wounds_in_words(state="unconscious", vitality=4, vit_max=9, zones=[])
    'down'
    """
    if state != "active" or vitality <= 0:
        return DOWN
    zones = list(zones)
    if 2 * vitality <= vit_max or any(wounds > bzf for wounds, bzf in zones):
        return BADLY_HURT
    if vitality < vit_max or any(wounds for wounds, _ in zones):
        return HURT
    return UNHURT
