"""The Simple Die System's dice page."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import forms

from rules.api.base import server_rng
from rules.engine import RulesError, sds
from rules.views.base import DiceForm, Tool, bar_chart, parse_numbers, shown_prob

# ---------------------------------------------------------------------------------------------
# Simple Die System


class SdsForm(DiceForm):
    defaults = {
        "skill": "8",
        "mod": "0",
        "self_buff": "0",
        "party_buff": "0",
        "focus": "0",
        "penalty": "0",
        "against": "die",
        "difficulty": "10",
    }

    skill = forms.IntegerField(
        label="Skill", min_value=4, max_value=sds.MAX_SIZE, help_text="Even: 4, 6, 8 ..."
    )
    mod = forms.IntegerField(label="Mod", min_value=0, max_value=50)
    self_buff = forms.IntegerField(label="Self buff", min_value=0, max_value=50)
    party_buff = forms.IntegerField(label="Party buff", min_value=0, max_value=50)
    focus = forms.IntegerField(label="Focus", min_value=0, max_value=50)
    penalty = forms.IntegerField(label="Penalty", min_value=0, max_value=50)
    unskilled = forms.BooleanField(label="Unskilled (roll twice, keep the lower)", required=False)
    against = forms.ChoiceField(
        label="Against",
        choices=[("die", "GM's die"), ("hard", "Hard number"), ("none", "Nothing")],
    )
    difficulty = forms.IntegerField(
        label="Difficulty", min_value=1, max_value=sds.MAX_HARD, required=False
    )
    skill_rolls = forms.CharField(
        label="Skill die face(s)", required=False, max_length=50, help_text="Two when unskilled."
    )
    flag_rolls = forms.CharField(
        label="Flag d20 face(s)",
        required=False,
        max_length=200,
        help_text="The flag, then each heroic re-roll.",
    )
    gm_roll = forms.IntegerField(label="GM's die face", min_value=1, max_value=100, required=False)

    def clean_skill_rolls(self) -> list[int] | None:
        return parse_numbers(self.cleaned_data["skill_rolls"], "skill die faces")

    def clean_flag_rolls(self) -> list[int] | None:
        return parse_numbers(self.cleaned_data["flag_rolls"], "flag faces")


def _sds_build(data: Mapping[str, Any], action: str) -> dict[str, Any]:
    keys = ("skill", "mod", "self_buff", "party_buff", "focus", "penalty", "unskilled")
    skill = sds.SkillCheck(**{k: data[k] for k in keys})
    difficulty = None
    if data["against"] != "none":
        if data["difficulty"] is None:
            raise RulesError("Give the difficulty: a die size or a Hard number.")
        difficulty = sds.Difficulty(**{data["against"]: data["difficulty"]})
    check_odds = sds.check_odds(skill, difficulty)
    context: dict[str, Any] = {
        "skill_check": skill,
        "dice_to_roll": " ".join(sds.dice_to_roll(skill, difficulty)),
        "player": shown_prob(check_odds.player),
        "gm": shown_prob(check_odds.gm),
        "chart": bar_chart((str(r), p, "bar-plain") for r, p in check_odds.skill_result.items()),
    }
    if action:
        read = action == "read"
        if read and (data["skill_rolls"] is None or data["flag_rolls"] is None):
            raise RulesError("Type the skill die and flag faces, or let the server roll.")
        result = sds.check(
            skill,
            difficulty,
            skill_rolls=data["skill_rolls"] if read else None,
            flag_rolls=data["flag_rolls"] if read else None,
            gm_roll=data["gm_roll"] if read else None,
            rng=server_rng(),
        )
        context["result"] = result
        context["chain"] = result.flag.rolls[1:]
    return context


def _sds_replay(result: sds.SdsResult) -> dict[str, str]:
    return {
        "skill_rolls": " ".join(map(str, result.skill_rolls)),
        "flag_rolls": " ".join(map(str, result.flag.rolls)),
        "gm_roll": "" if result.gm_die is None else str(result.gm_roll),
    }


SDS = Tool(
    "sds",
    "rules/dice_sds.html",
    SdsForm,
    _sds_build,
    rolled=lambda c: c.get("result"),
    replay=_sds_replay,
)
