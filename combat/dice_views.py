"""The dice pages: the OMG PvD calculator and a roller for each sibling system.

Every public page is one GET form, so it works without JavaScript and its URL can be shared.
With htmx the form asks for the page's ``panel`` partial instead (on submit, and on any change so
the odds follow the inputs). The pages call the rules engine directly, and a server roll uses the
same dice as the API (:func:`combat.dice_api.server_rng`).

Inside a campaign (``/dice/campaigns/<pk>/...``, members only) the same pages keep a roll log:
the odds still come by GET, but a roll is a POST that records a :class:`DiceRoll`. With htmx
it answers with the result panel and the refreshed log; without, it redirects to the page
reading the same dice again (a GET never rolls or records anything there).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_safe

from combat.dice_api import server_rng
from combat.models import DiceRoll
from rules.engine import RulesError, odds, ogs, okrpg, omg, ore, sds
from sheets.access import get_campaign_for_user
from sheets.models import Campaign

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


def _prob(p: Fraction | None) -> dict[str, str] | None:
    """A probability for the page: a percentage and the exact fraction."""
    return None if p is None else {"percent": _percent(p), "exact": _fraction(p)}


# ---------------------------------------------------------------------------------------------
# Form helpers

# ASCII digits: \d also matches other scripts' digits, which int() would quietly read.
_NUMBERS = re.compile(r"-?[0-9]+")


def _numbers(text: str, field: str) -> list[int] | None:
    """Dice typed in as "1 4 6" or "1, 4, 6"; None when left empty."""
    text = text.strip()
    if not text:
        return None
    parts = re.split(r"[\s,]+", text)
    if len(parts) > 20 or not all(_NUMBERS.fullmatch(p) for p in parts):
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


def dice_urls(campaign: Campaign | None) -> dict[str, str]:
    """Each page's address: the public ones, or the campaign's own."""
    if campaign is None:
        return {name: reverse(f"dice:{name}") for name in ("index", *SYSTEMS)}
    return {
        name: reverse(f"dice:campaign_{name}", args=[campaign.pk]) for name in ("index", *SYSTEMS)
    }


def _log_context(campaign: Campaign | None) -> dict[str, Any]:
    if campaign is None:
        return {"campaign": None, "dice_urls": dice_urls(None)}
    return {
        "campaign": campaign,
        "dice_urls": dice_urls(campaign),
        "log": list(campaign.dice_rolls.recent(LOG_LENGTH)),
    }


def _action(data: Mapping[str, str], *, allowed: frozenset[str]) -> str:
    action = data.get("action", "")
    return action if action in allowed else ""


def _page(request: HttpRequest, tool: Tool, campaign: Campaign | None = None) -> HttpResponse:
    """A GET of a page: validate the form, let the tool fill the context, render.

    In a campaign a GET only reads typed-in dice (the page a roll redirects to): server dice
    are rolled by a POST, which logs them.
    """
    allowed = frozenset({"read"} if campaign else {"roll", "read"})
    form = tool.form(request.GET)
    context = _build(tool, form, _action(request.GET, allowed=allowed))
    context.update(_log_context(campaign), page_url=dice_urls(campaign)[tool.system])
    if campaign is not None:
        context["note_form"] = NoteForm()
    context.update(_extra(request, tool))
    if request.htmx and request.GET.get("panel") == "round":
        return render(request, f"{tool.template}#round", context)
    name = f"{tool.template}#panel" if request.htmx else tool.template
    return render(request, name, context)


def _build(tool: Tool, form: DiceForm, action: str) -> dict[str, Any]:
    """Validate the form and let the tool fill the context; a RulesError becomes a form error."""
    context: dict[str, Any] = {"form": form}
    if form.is_valid():
        try:
            context.update(tool.build(form.cleaned_data, action))
        except RulesError as exc:
            form.add_error(None, str(exc))
    return context


def _extra(request: HttpRequest, tool: Tool) -> dict[str, Any]:
    """Context of a page's second tool (the OK RPG round planner)."""
    return _round_context(request.GET) if tool.system == "okrpg" else {}


def _roll(request: HttpRequest, tool: Tool, campaign: Campaign) -> HttpResponse:
    """A roll on a campaign's page: resolve it, log it, answer with the result."""
    action = _action(request.POST, allowed=frozenset({"roll", "read"}))
    query = request.POST.copy()
    for key in ("csrfmiddlewaretoken", "action", "note"):
        query.pop(key, None)
    if not action:
        # The no-JavaScript "show odds" button of a POST form: odds are a GET.
        return redirect(f"{dice_urls(campaign)[tool.system]}?{query.urlencode()}")
    form = tool.form(request.POST)
    note_form = NoteForm(request.POST)
    if note_form.is_valid():
        context = _build(tool, form, action)
    else:
        # Nothing is rolled, so that no result shows that the log does not hold.
        context = _build(tool, form, "")
        form.add_error(None, "Keep the note to 80 characters or fewer.")
    result = tool.rolled(context) if form.is_valid() else None
    if result is not None:
        DiceRoll.record(
            campaign=campaign,
            roller=request.user,
            result=result,
            physical=action == "read",
            note=note_form.cleaned_data["note"],
        )
        if not request.htmx:
            for key, value in {**tool.replay(result), "action": "read"}.items():
                query[key] = value
            return redirect(f"{dice_urls(campaign)[tool.system]}?{query.urlencode()}")
    context.update(_log_context(campaign), page_url=dice_urls(campaign)[tool.system])
    status = 200 if result is not None else 422
    if not request.htmx:
        context.update(note_form=note_form, **_extra(request, tool))
        return render(request, tool.template, context, status=status)
    html = render_to_string(f"{tool.template}#panel", context, request)
    if result is not None:
        html += render_to_string("combat/dice_log.html", {**context, "oob": True}, request)
    return HttpResponse(html, status=status)


@require_safe
def dice_index(request: HttpRequest) -> HttpResponse:
    return render(request, "combat/dice_index.html", _log_context(None))


@login_required
@require_safe
def campaign_index(request: HttpRequest, campaign_pk: int) -> HttpResponse:
    """A campaign's dice: links to each system's page and the campaign's recent rolls (with
    htmx, the log alone: the log's refresh button asks for it)."""
    campaign = get_campaign_for_user(request, campaign_pk)
    context = _log_context(campaign)
    if request.htmx:
        return render(request, "combat/dice_log.html", context)
    return render(request, "combat/dice_index.html", context)


@require_safe
def tool_page(request: HttpRequest, system: str) -> HttpResponse:
    return _page(request, TOOLS[system])


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def campaign_tool_page(request: HttpRequest, campaign_pk: int, system: str) -> HttpResponse:
    """A system's page inside a campaign: members only (404 for anyone else)."""
    campaign = get_campaign_for_user(request, campaign_pk)
    if request.method == "POST":
        return _roll(request, TOOLS[system], campaign)
    return _page(request, TOOLS[system], campaign)


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
    else:
        pro, dif, fast = data["pro"], data["dif"], data["fast"]
    check_odds = odds.check_odds(pro, dif)
    order = sorted(check_odds.counts, key=lambda d: list(_DEGREE_CSS).index(d))
    context: dict[str, Any] = {
        "pro": pro,
        "dif": dif,
        "fast": fast,
        "tier": omg.proficiency_tier(pro),
        "category": omg.difficulty_category(dif),
        "odds": check_odds,
        "hit_chance": _prob(Fraction(check_odds.hits, 100)),
        "second_chance": _prob(Fraction(check_odds.second_hit, 100)),
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
            context["result"] = strike.check
        else:
            context["result"] = omg.check(pro, dif, roll, rng=server_rng(), fast=fast)
    return context


OMG = Tool(
    "omg",
    "combat/dice_omg.html",
    OmgForm,
    _omg_build,
    rolled=lambda c: c.get("strike") or c.get("result"),
    replay=lambda r: {"roll": str(r.roll)},
)


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
        return _numbers(self.cleaned_data["values"], "dice")

    def clean_rerolls(self) -> list[int] | None:
        return _numbers(self.cleaned_data["rerolls"], "re-rolls")


def _ogs_build(data: Mapping[str, Any], action: str) -> dict[str, Any]:
    check = ogs.ActionCheck(data["dice"], data["flat"], data["reroll_ones"])
    difficulty = data["difficulty"]
    check_odds = ogs.check_odds(check, difficulty)
    context: dict[str, Any] = {
        "dice_names": " + ".join(ogs.dice_names(check.dice)),
        "difficulty": difficulty,
        "success": _prob(check_odds.success),
        "stages": [(n, _prob(p)) for n, p in check_odds.stages.items()],
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
    "combat/dice_ogs.html",
    OgsForm,
    _ogs_build,
    rolled=lambda c: c.get("result"),
    replay=_ogs_replay,
)


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
        return _numbers(self.cleaned_data["dice"], "dice")


def _ore_build(data: Mapping[str, Any], action: str) -> dict[str, Any]:
    pool = ore.OrePool(data["pool"], data["penalty"], data["expert"], data["master"])
    resolved = pool.resolve()
    pool_odds = ore.pool_odds(pool, data["difficulty"])
    widths: dict[str, Fraction] = {"no set": pool_odds.best.get(None, Fraction(0))}
    for width, p in pool_odds.width.items():
        widths[f"{width} wide"] = p
    context: dict[str, Any] = {
        "resolved": resolved,
        "success": _prob(pool_odds.success),
        "locations": [(loc, _prob(p)) for loc, p in pool_odds.location.items()],
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
    "combat/dice_ore.html",
    OreForm,
    _ore_build,
    rolled=lambda c: c.get("result"),
    replay=lambda r: {"dice": " ".join(map(str, r.dice))},
)


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
        return _numbers(self.cleaned_data["skill_rolls"], "skill die faces")

    def clean_flag_rolls(self) -> list[int] | None:
        return _numbers(self.cleaned_data["flag_rolls"], "flag faces")


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
        "player": _prob(check_odds.player),
        "gm": _prob(check_odds.gm),
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
    "combat/dice_sds.html",
    SdsForm,
    _sds_build,
    rolled=lambda c: c.get("result"),
    replay=_sds_replay,
)


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
        return _numbers(self.cleaned_data["tide_dice"], "Tide dice")


def _okrpg_build(data: Mapping[str, Any], action: str) -> dict[str, Any]:
    tide_odds = okrpg.tide_odds(data["tide"])
    context: dict[str, Any] = {
        "damage": okrpg.damage(data["damage"], data["dr"], data["lethality"]),
        "edge": _prob(tide_odds.edge),
        "setback": _prob(tide_odds.setback),
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
    "combat/dice_okrpg.html",
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
    if not all(_NUMBERS.fullmatch(p) for p in numbers):
        raise ValueError("successes and carry are whole numbers, such as 7 or -2.")
    successes, carry = int(numbers[0]), int(numbers[1]) if len(numbers) > 1 else 0
    return okrpg.Combatant(parts[0], successes, carry, down)


def _round_context(query: Mapping[str, str]) -> dict[str, Any]:
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


TOOLS: dict[str, Tool] = {t.system: t for t in (OMG, OGS, OKRPG, ORE, SDS)}
