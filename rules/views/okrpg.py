"""The OK RPG dice page: damage, Tide of Battle, and the action-point round planner."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import forms

from rules.api.base import server_rng
from rules.engine import RulesError, okrpg
from rules.views.base import NUMBERS, DiceForm, Tool, bar_chart, parse_numbers, shown_prob

# ---------------------------------------------------------------------------------------------
# OK RPG

_RANKS = [(f"{name}{plus}", f"{name}{plus}") for name in okrpg.RANK_NAMES for plus in ("", "+")]


class OkrpgForm(DiceForm):
    defaults = {"damage": "Grt", "dr": "Avg+", "lethality": "cutting", "tide": "normal"}

    damage = forms.ChoiceField(label="Damage rank", choices=_RANKS)
    dr = forms.ChoiceField(label="Damage resistance", choices=_RANKS)
    lethality = forms.ChoiceField(
        label="Lethality",
        choices=[(k, k.replace("_", " ").capitalize()) for k in okrpg.LETHALITY],
    )
    tide = forms.ChoiceField(
        label="Tide of Battle",
        choices=[
            ("normal", "Normal (one d6)"),
            ("worse", "Cursed (two d6, worse)"),
            ("better", "Blessed (two d6, better)"),
        ],
    )
    tide_dice = forms.CharField(
        label="Your Tide d6(s)",
        required=False,
        max_length=20,
        help_text="Two for cursed or blessed.",
    )

    def clean_tide_dice(self) -> list[int] | None:
        return parse_numbers(self.cleaned_data["tide_dice"], "Tide dice")


def _okrpg_build(data: Mapping[str, Any], action: str) -> dict[str, Any]:
    tide_odds = okrpg.tide_odds(data["tide"])
    context: dict[str, Any] = {
        "damage": okrpg.damage(data["damage"], data["dr"], data["lethality"]),
        "edge": shown_prob(tide_odds.edge),
        "setback": shown_prob(tide_odds.setback),
        "chart": bar_chart(
            (str(v), p, "bar-miss" if v == 1 else "bar-epic-hit" if v == 6 else "bar-plain")
            for v, p in tide_odds.values.items()
        ),
    }
    if action:
        if action == "read" and data["tide_dice"] is None:
            raise RulesError("Type the Tide die you rolled, or let the server roll.")
        context["tide"] = okrpg.roll_tide(
            data["tide"], dice=data["tide_dice"] if action == "read" else None, rng=server_rng()
        )
    return context


OKRPG = Tool(
    "okrpg",
    "rules/dice_okrpg.html",
    OkrpgForm,
    _okrpg_build,
    rolled=lambda c: c.get("tide"),
    replay=lambda r: {"tide_dice": " ".join(map(str, r.dice))},
)


# ---------------------------------------------------------------------------------------------
# OK RPG: the action-point round planner

_LINE = "Line {n}: "


class RoundForm(forms.Form):
    """Combatants typed one per line, so that any number fits without JavaScript."""

    default = "Aria, 7, 0\nBrute, 4, 2\nCutter, 2"

    combatants = forms.CharField(
        label="Combatants",
        widget=forms.Textarea(attrs={"rows": 6}),
        max_length=4000,
        help_text="One per line: name, initiative successes, points carried from last round "
        "(leave the carry out for 0; a negative carry is last round's debt). Add ', down' "
        "for someone who is Down.",
    )

    def __init__(self, query: Mapping[str, str]) -> None:
        super().__init__({"combatants": query.get("combatants", self.default)})

    def clean_combatants(self) -> list[okrpg.Combatant]:
        lines = [line.strip() for line in self.cleaned_data["combatants"].splitlines()]
        rows = [(n, line) for n, line in enumerate(lines, 1) if line]
        if not rows:
            raise forms.ValidationError("List at least one combatant.")
        if len(rows) > 50:
            raise forms.ValidationError("Plan a round for at most 50 combatants.")
        errors: list[str] = []
        combatants: list[okrpg.Combatant] = []
        for n, line in rows:
            try:
                combatants.append(_combatant(line))
            except (ValueError, RulesError) as exc:
                errors.append(_LINE.format(n=n) + str(exc))
        if errors:
            raise forms.ValidationError(errors)
        return combatants


def _combatant(line: str) -> okrpg.Combatant:
    parts = [p.strip() for p in line.split(",")]
    down = len(parts) > 2 and parts[-1].lower() == "down"
    if down:
        parts.pop()
    if len(parts) not in (2, 3) or not parts[0]:
        raise ValueError("write a name, the successes and the carry, separated by commas.")
    if len(parts[0]) > 80:
        raise ValueError("keep the name to 80 characters.")
    numbers = parts[1:]
    if not all(NUMBERS.fullmatch(p) for p in numbers):
        raise ValueError("successes and carry are whole numbers, such as 7 or -2.")
    successes, carry = int(numbers[0]), int(numbers[1]) if len(numbers) > 1 else 0
    return okrpg.Combatant(parts[0], successes, carry, down)


def round_context(query: Mapping[str, str]) -> dict[str, Any]:
    form = RoundForm(query)
    context: dict[str, Any] = {"round_form": form}
    if form.is_valid():
        combatants = form.cleaned_data["combatants"]
        try:
            plan = okrpg.run_round(combatants)
        except RulesError as exc:
            form.add_error(None, str(exc))
        else:
            context["plan"] = plan
            context["plan_rows"] = [
                (c.name, c.down, plan.start[c.name], plan.order.count(c.name), plan.carry[c.name])
                for c in combatants
            ]
    return context
