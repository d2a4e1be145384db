"""The OMG dice page: the PvD calculator."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from django import forms

from rules.api.base import server_rng
from rules.engine import RulesError, odds, omg
from rules.views.base import DiceForm, Tool, bar_chart, shown_prob

# ---------------------------------------------------------------------------------------------
# OMG: the PvD calculator

_APT = [(n, str(n)) for n in range(1, 6)]
_DSC = [(n, "untrained" if n == 0 else str(n)) for n in range(6)]
_GEAR = [(n, str(n)) for n in range(6)]
_DEGREE_CSS = {
    omg.Degree.EPIC_FAILURE: "bar-epic-miss",
    omg.Degree.DRAMATIC_FAILURE: "bar-miss",
    omg.Degree.FAILURE: "bar-miss",
    omg.Degree.SUCCESS_WITH_SACRIFICE: "bar-hit",
    omg.Degree.SUCCESS: "bar-hit",
    omg.Degree.DRAMATIC_SUCCESS: "bar-hit",
    omg.Degree.EPIC_SUCCESS: "bar-epic-hit",
}


class OmgForm(DiceForm):
    defaults = {
        "use": "scores",
        "strike": "fast",
        "attack_apt": "3",
        "attack_dsc": "3",
        "defense": "dodge",
        "defense_apt": "3",
        "defense_dsc": "2",
        "pro": "70",
        "dif": "20",
        "weapon_dmg": "4",
        "weapon_bonus": "0",
        "arm": "2",
        "arm_bonus": "0",
    }

    use = forms.ChoiceField(
        label="Work from",
        choices=[("scores", "Aptitude + discipline"), ("pvd", "PRO and DIF")],
        widget=forms.RadioSelect,
    )
    strike = forms.ChoiceField(
        label="Strike mode", choices=[(m.value, m.value.capitalize()) for m in omg.StrikeMode]
    )
    attack_apt = forms.TypedChoiceField(label="Attacker aptitude", choices=_APT, coerce=int)
    attack_dsc = forms.TypedChoiceField(label="Weapon discipline", choices=_DSC, coerce=int)
    defense = forms.ChoiceField(
        label="Defense mode", choices=[(m.value, m.value.capitalize()) for m in omg.DefenseMode]
    )
    defense_apt = forms.TypedChoiceField(label="Defender aptitude", choices=_APT, coerce=int)
    defense_dsc = forms.TypedChoiceField(label="Melee Combat", choices=_DSC, coerce=int)
    pro = forms.IntegerField(label="PRO", min_value=omg.PRO_MIN, max_value=omg.PRO_MAX)
    dif = forms.IntegerField(label="DIF", min_value=omg.DIF_MIN, max_value=omg.DIF_MAX)
    fast = forms.BooleanField(
        label="Read as a fast strike (second hit)",
        required=False,
        help_text="With PRO and DIF typed in; from scores, a disciplined fast strike does this.",
    )
    weapon_dmg = forms.TypedChoiceField(label="Weapon DMG", choices=_GEAR, coerce=int)
    weapon_bonus = forms.TypedChoiceField(label="Weapon bonus", choices=_GEAR, coerce=int)
    arm = forms.TypedChoiceField(label="ARM", choices=_GEAR, coerce=int)
    arm_bonus = forms.TypedChoiceField(label="ARM bonus", choices=_GEAR, coerce=int)
    roll = forms.IntegerField(
        label="Your d100 roll",
        min_value=1,
        max_value=100,
        required=False,
        help_text="What the two d10s show; 00 is 100.",
    )


def _omg_build(data: Mapping[str, Any], action: str) -> dict[str, Any]:
    attacker = defender = None
    if data["use"] == "scores":
        attacker = omg.Attacker(
            omg.StrikeMode(data["strike"]),
            data["attack_apt"],
            data["attack_dsc"],
            data["weapon_dmg"],
            data["weapon_bonus"],
        )
        defender = omg.Defender(
            omg.DefenseMode(data["defense"]),
            data["defense_apt"],
            data["defense_dsc"],
            data["arm"],
            data["arm_bonus"],
        )
        pro, dif, fast = attacker.pro, defender.dif, attacker.fast
        # The PRO and DIF fields say what the scores give (an unchecked box is left out).
        shown_fields = {"pro": str(pro), "dif": str(dif), "fast": "on" if fast else None}
    else:
        shown_fields = {}
        pro, dif, fast = data["pro"], data["dif"], data["fast"]
    check_odds = odds.check_odds(pro, dif)
    order = sorted(check_odds.counts, key=lambda d: list(_DEGREE_CSS).index(d))
    context: dict[str, Any] = {
        "shown_fields": shown_fields,
        "pro": pro,
        "dif": dif,
        "fast": fast,
        "tier": omg.proficiency_tier(pro),
        "category": omg.difficulty_category(dif),
        "odds": check_odds,
        "hit_chance": shown_prob(Fraction(check_odds.hits, 100)),
        "second_chance": shown_prob(Fraction(check_odds.second_hit, 100)),
        "chart": bar_chart(
            (d.abbr or d.label, Fraction(check_odds.counts[d], 100), _DEGREE_CSS[d]) for d in order
        ),
        "degrees": [(d.label, check_odds.counts[d]) for d in order],
    }
    if attacker is not None and defender is not None:
        strike_odds = odds.strike_odds(attacker, defender)
        context["strike_odds"] = strike_odds
        context["mean_damage"] = f"{float(strike_odds.mean_damage):.2f}"
        context["damage_chart"] = bar_chart(
            (str(dmg), Fraction(n, 100), "bar-miss" if dmg == 0 else "bar-hit")
            for dmg, n in strike_odds.total.items()
        )
    if action:
        roll = data["roll"] if action == "read" else None
        if action == "read" and roll is None:
            raise RulesError("Type the roll you made, or let the server roll.")
        if attacker is not None and defender is not None:
            strike = omg.strike(attacker, defender, roll, rng=server_rng())
            context["strike"] = strike
            # A disciplined dodge halves each hit after armor: say so next to the numbers.
            context["halved"] = defender.disciplined and defender.mode is omg.DefenseMode.DODGE
            context["result"] = strike.check
        else:
            context["result"] = omg.check(pro, dif, roll, rng=server_rng(), fast=fast)
    return context


OMG = Tool(
    "omg",
    "rules/dice_omg.html",
    OmgForm,
    _omg_build,
    rolled=lambda c: c.get("strike") or c.get("result"),
    replay=lambda r: {"roll": str(r.roll)},
)
