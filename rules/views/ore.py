"""The ORE dice page."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from django import forms

from rules.api.base import server_rng
from rules.engine import RulesError, ore
from rules.views.base import DiceForm, Tool, bar_chart, parse_numbers, shown_prob

# ---------------------------------------------------------------------------------------------
# ORE


class OreForm(DiceForm):
    defaults = {"pool": "7", "penalty": "0", "difficulty": "0"}

    pool = forms.IntegerField(
        label="Pool", min_value=0, max_value=100, help_text="Every die, a special die included."
    )
    penalty = forms.IntegerField(label="Penalty dice", min_value=0, max_value=100)
    expert = forms.IntegerField(label="Expert die face", min_value=1, max_value=10, required=False)
    master = forms.BooleanField(label="Master die", required=False)
    difficulty = forms.IntegerField(label="Difficulty (lowest height)", min_value=0, max_value=10)
    dice = forms.CharField(
        label="Your d10s",
        required=False,
        max_length=200,
        help_text="Only the normal dice (10 for a 0), e.g. 3 4 4 4 6 8 10.",
    )

    def clean_dice(self) -> list[int] | None:
        return parse_numbers(self.cleaned_data["dice"], "dice")


def _ore_build(data: Mapping[str, Any], action: str) -> dict[str, Any]:
    pool = ore.OrePool(data["pool"], data["penalty"], data["expert"], data["master"])
    resolved = pool.resolve()
    pool_odds = ore.pool_odds(pool, data["difficulty"])
    widths: dict[str, Fraction] = {"no set": pool_odds.best.get(None, Fraction(0))}
    for width, p in pool_odds.width.items():
        widths[f"{width} wide"] = p
    context: dict[str, Any] = {
        "resolved": resolved,
        "success": shown_prob(pool_odds.success),
        "locations": [(loc, shown_prob(p)) for loc, p in pool_odds.location.items()],
        "chart": bar_chart(
            (label, p, "bar-miss" if label == "no set" else "bar-hit")
            for label, p in widths.items()
        ),
    }
    if action:
        if action == "read" and data["dice"] is None:
            raise RulesError("Type the faces you rolled, or let the server roll.")
        result = ore.roll(
            pool,
            difficulty=data["difficulty"],
            dice=data["dice"] if action == "read" else None,
            rng=server_rng(),
        )
        context["result"] = result
        best = result.best
        context["result_faces"] = [
            (f, best is not None and f == best.height, sum(1 for s in result.sets if s.height == f))
            for f in result.faces
        ]
    return context


ORE = Tool(
    "ore",
    "rules/dice_ore.html",
    OreForm,
    _ore_build,
    rolled=lambda c: c.get("result"),
    replay=lambda r: {"dice": " ".join(map(str, r.dice))},
)
