"""The OGS dice page."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from django import forms

from rules.api.base import server_rng
from rules.engine import RulesError, ogs
from rules.views.base import DiceForm, Tool, bar_chart, parse_numbers, shown_prob

# ---------------------------------------------------------------------------------------------
# OGS


class OgsForm(DiceForm):
    defaults = {"dice": "d4 d8 d8", "flat": "0", "difficulty": "8"}

    dice = forms.CharField(
        label="Dice",
        max_length=200,
        help_text="Stat die, skill die, then enhancement dice, e.g. d4 d8 d8.",
    )
    flat = forms.IntegerField(label="Flat bonus", min_value=-100, max_value=100)
    difficulty = forms.IntegerField(label="Difficulty", min_value=0, max_value=1000, required=False)
    reroll_ones = forms.BooleanField(label="Re-roll enhancement ones", required=False)
    values = forms.CharField(
        label="Your dice", required=False, max_length=200, help_text="One face per die, in order."
    )
    rerolls = forms.CharField(
        label="Re-rolled ones",
        required=False,
        max_length=200,
        help_text="New faces of enhancement dice that showed 1.",
    )

    def clean_dice(self) -> tuple[int, ...]:
        parts = [p for p in re.split(r"[\s,+]+", self.cleaned_data["dice"]) if p]
        try:
            return ogs.parse_dice(parts)
        except RulesError as exc:
            raise forms.ValidationError(str(exc)) from exc

    def clean_values(self) -> list[int] | None:
        return parse_numbers(self.cleaned_data["values"], "dice")

    def clean_rerolls(self) -> list[int] | None:
        return parse_numbers(self.cleaned_data["rerolls"], "re-rolls")


def _ogs_build(data: Mapping[str, Any], action: str) -> dict[str, Any]:
    check = ogs.ActionCheck(data["dice"], data["flat"], data["reroll_ones"])
    difficulty = data["difficulty"]
    check_odds = ogs.check_odds(check, difficulty)
    context: dict[str, Any] = {
        "dice_names": " + ".join(ogs.dice_names(check.dice)),
        "difficulty": difficulty,
        "success": shown_prob(check_odds.success),
        "stages": [(n, shown_prob(p)) for n, p in check_odds.stages.items()],
        "chart": bar_chart(
            (
                str(total),
                p,
                "bar-plain"
                if difficulty is None
                else "bar-hit"
                if total >= difficulty
                else "bar-miss",
            )
            for total, p in check_odds.totals.items()
        ),
    }
    if action:
        if action == "read" and data["values"] is None:
            raise RulesError("Type the faces you rolled, or let the server roll.")
        result = ogs.roll_check(
            check,
            difficulty=difficulty,
            values=data["values"] if action == "read" else None,
            rerolls=data["rerolls"] if action == "read" else None,
            rng=server_rng(),
        )
        context["result"] = result
        context["result_dice"] = list(zip(ogs.dice_names(check.dice), result.values, strict=True))
        if difficulty is not None and result.success:
            context["over"] = result.total - difficulty
    return context


def _ogs_replay(result: ogs.CheckResult) -> dict[str, str]:
    first = list(result.values)
    for i, face in zip(result.rerolled, result.first_faces, strict=True):
        first[i] = face
    return {
        "values": " ".join(map(str, first)),
        "rerolls": " ".join(str(result.values[i]) for i in result.rerolled),
    }


OGS = Tool(
    "ogs",
    "rules/dice_ogs.html",
    OgsForm,
    _ogs_build,
    rolled=lambda c: c.get("result"),
    replay=_ogs_replay,
)
