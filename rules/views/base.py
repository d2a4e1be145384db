"""What every dice page shares: bar charts drawn as SVG on the server, form helpers, and
:class:`Tool`, one system's page.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from django import forms

#: How many of a campaign's rolls its dice pages show.
LOG_LENGTH = 30
SYSTEMS = ("omg", "ogs", "okrpg", "ore", "sds")

# ---------------------------------------------------------------------------------------------
# Bar charts, drawn as SVG on the server

CHART_WIDTH, CHART_HEIGHT, LABEL_SPACE = 600, 180, 36


@dataclass(frozen=True)
class Bar:
    label: str
    value: str
    x: float
    y: float
    width: float
    height: float
    css: str
    text_x: float
    value_y: float
    #: Crowded charts label every few bars and leave the values to the tooltips.
    show_label: bool
    show_value: bool


def bar_chart(items: Iterable[tuple[str, Fraction, str]]) -> list[Bar]:
    """Lay out ``(label, probability, css class)`` items as bars scaled to the tallest."""
    rows = list(items)
    if not rows:
        return []
    tallest = max(p for _, p, _ in rows) or Fraction(1)
    slot = CHART_WIDTH / len(rows)
    every = -(-len(rows) // 24)
    bars = []
    for i, (label, p, css) in enumerate(rows):
        height = float(p / tallest) * (CHART_HEIGHT - LABEL_SPACE)
        bars.append(
            Bar(
                label=label,
                value=_percent(p),
                x=round(i * slot + slot * 0.1, 2),
                y=round(CHART_HEIGHT - LABEL_SPACE / 2 - height, 2),
                width=round(slot * 0.8, 2),
                height=round(height, 2),
                css=css,
                text_x=round(i * slot + slot / 2, 2),
                value_y=round(CHART_HEIGHT - LABEL_SPACE / 2 - height - 4, 2),
                show_label=i % every == 0,
                show_value=len(rows) <= 12,
            )
        )
    return bars


def _percent(p: Fraction) -> str:
    value = float(p) * 100
    if value.is_integer() or value >= 10:
        return f"{value:.0f}%"
    return f"{value:.1f}%" if value >= 0.1 else f"{value:.2g}%"


def _fraction(p: Fraction) -> str:
    return f"{p.numerator}/{p.denominator}"


def shown_prob(p: Fraction | None) -> dict[str, str] | None:
    """A probability for the page: a percentage and the exact fraction."""
    return None if p is None else {"percent": _percent(p), "exact": _fraction(p)}


# ---------------------------------------------------------------------------------------------
# Form helpers

# ASCII digits: \d also matches other scripts' digits, which int() would quietly read.
NUMBERS = re.compile(r"-?[0-9]+")


def parse_numbers(text: str, field: str) -> list[int] | None:
    """Dice typed in as "1 4 6" or "1, 4, 6"; None when left empty."""
    text = text.strip()
    if not text:
        return None
    parts = re.split(r"[\s,]+", text)
    if len(parts) > 20 or not all(NUMBERS.fullmatch(p) for p in parts):
        raise forms.ValidationError(f"Type the {field} as whole numbers separated by spaces.")
    return [int(p) for p in parts]


class DiceForm(forms.Form):
    """A page's form: bound to the defaults, overridden by whatever the query string gives."""

    defaults: Mapping[str, str] = {}

    def __init__(self, query: Mapping[str, str]) -> None:
        data = {**self.defaults, **{k: v for k, v in query.items() if k != "action"}}
        super().__init__(data)


class NoteForm(forms.Form):
    """On a campaign's pages: what a roll is for, shown beside it in the log."""

    note = forms.CharField(
        label="What for? (optional)",
        max_length=80,
        required=False,
        help_text="A word or two for the log, such as the skill or the target.",
    )


@dataclass(frozen=True)
class Tool:
    """One system's page: its form, how to fill the context, and how to log a roll."""

    system: str
    template: str
    form: type[DiceForm]
    build: Callable[[Mapping[str, Any], str], dict[str, Any]]
    #: The engine result of a roll in a built context, or None when nothing was rolled.
    rolled: Callable[[Mapping[str, Any]], object | None]
    #: The form fields that type in the dice of that result: a server roll read back.
    replay: Callable[[Any], dict[str, str]]
