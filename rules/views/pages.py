"""The dice pages: the OMG PvD calculator and a roller for each sibling system.

Every public page is one GET form, so it works without JavaScript and its URL can be shared.
With htmx the form asks for the page's ``panel`` partial instead (on submit, and on any change so
the odds follow the inputs). The pages call the rules engine directly, and a server roll uses the
same dice as the API (:func:`rules.api.base.server_rng`).

Inside a campaign (``/dice/campaigns/<pk>/...``, members only) the same pages keep a roll log:
the odds still come by GET, but a roll is a POST that records a :class:`DiceRoll`. With htmx
it answers with the result panel and the refreshed log; without, it redirects to the page
reading the same dice again (a GET never rolls or records anything there).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_safe

from rules.engine import RulesError
from rules.models import DiceRoll
from rules.views.base import LOG_LENGTH, SYSTEMS, DiceForm, NoteForm, Tool
from rules.views.ogs import OGS
from rules.views.okrpg import OKRPG, round_context
from rules.views.omg import OMG
from rules.views.ore import ORE
from rules.views.sds import SDS
from sheets.access import get_campaign_for_user
from sheets.http import AuthedRequest, HtmxRequest
from sheets.models import Campaign


def dice_urls(campaign: Campaign | None) -> dict[str, str]:
    """Each page's address: the public ones, or the campaign's own."""
    if campaign is None:
        return {name: reverse(f"dice:{name}") for name in ("index", *SYSTEMS)}
    return {
        name: reverse(f"dice:campaign_{name}", args=[campaign.pk]) for name in ("index", *SYSTEMS)
    }


def _log_context(campaign: Campaign | None, user: Any = None) -> dict[str, Any]:
    if campaign is None:
        return {"campaign": None, "dice_urls": dice_urls(None)}
    is_gm = campaign.is_gm(user)
    # The checks rolled from the sheets belong in the same history. The checks app sits above
    # this layer, so they come through the campaign's reverse relation, filtered by the checks
    # log's own visibility rule (CheckQuerySet.visible_to), not a second one written here.
    checks = (
        campaign.checks.visible_to(user, campaign)
        .select_related("character", "roller", "fate_spender")
        .order_by("-created_at", "-seq")[:LOG_LENGTH]
    )
    entries: list[dict[str, Any]] = [
        {"at": r.created_at, "roll": r} for r in campaign.dice_rolls.recent(LOG_LENGTH)
    ]
    entries += [{"at": c.created_at, "check": c, "hidden": c.secret and not is_gm} for c in checks]
    entries.sort(key=lambda e: e["at"], reverse=True)
    return {
        "campaign": campaign,
        "dice_urls": dice_urls(campaign),
        "log": entries[:LOG_LENGTH],
        "is_gm": is_gm,
        "has_checks": bool(checks),
    }


def _action(data: Mapping[str, str], *, allowed: frozenset[str]) -> str:
    action = data.get("action", "")
    return action if action in allowed else ""


def _page(request: HtmxRequest, tool: Tool, campaign: Campaign | None = None) -> HttpResponse:
    """A GET of a page: validate the form, let the tool fill the context, render.

    In a campaign a GET only reads typed-in dice (the page a roll redirects to): server dice
    are rolled by a POST, which logs them.
    """
    allowed = frozenset({"read"} if campaign else {"roll", "read"})
    form = tool.form(request.GET)
    context = _build(tool, form, _action(request.GET, allowed=allowed))
    context.update(_log_context(campaign, request.user), page_url=dice_urls(campaign)[tool.system])
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
    # Fields the tool worked out itself (the OMG page's PRO and DIF, from scores) show the
    # values the odds and the roll used, not whatever they held before.
    shown = context.get("shown_fields") or {}
    if shown:
        data = dict(form.data)
        for name, value in shown.items():
            if value is None:
                data.pop(name, None)
            else:
                data[name] = value
        form.data = data
    return context


def _extra(request: HttpRequest, tool: Tool) -> dict[str, Any]:
    """Context of a page's second tool (the OK RPG round planner)."""
    return round_context(request.GET) if tool.system == "okrpg" else {}


def _roll(request: HtmxRequest, tool: Tool, campaign: Campaign) -> HttpResponse:
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
    context.update(_log_context(campaign, request.user), page_url=dice_urls(campaign)[tool.system])
    status = 200 if result is not None else 422
    if not request.htmx:
        context.update(note_form=note_form, **_extra(request, tool))
        return render(request, tool.template, context, status=status)
    html = render_to_string(f"{tool.template}#panel", context, request)
    if result is not None:
        html += render_to_string("rules/dice_log.html", {**context, "oob": True}, request)
    return HttpResponse(html, status=status)


@require_safe
def dice_index(request: HttpRequest) -> HttpResponse:
    return render(request, "rules/dice_index.html", _log_context(None))


@login_required
@require_safe
def campaign_index(request: AuthedRequest, campaign_pk: int) -> HttpResponse:
    """A campaign's dice: links to each system's page and the campaign's recent rolls (with
    htmx, the log alone: the log's refresh button asks for it)."""
    campaign = get_campaign_for_user(request, campaign_pk)
    context = _log_context(campaign, request.user)
    if request.htmx:
        return render(request, "rules/dice_log.html", context)
    return render(request, "rules/dice_index.html", context)


@require_safe
def tool_page(request: HtmxRequest, system: str) -> HttpResponse:
    return _page(request, TOOLS[system])


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def campaign_tool_page(request: AuthedRequest, campaign_pk: int, system: str) -> HttpResponse:
    """A system's page inside a campaign: members only (404 for anyone else)."""
    campaign = get_campaign_for_user(request, campaign_pk)
    if request.method == "POST":
        return _roll(request, TOOLS[system], campaign)
    return _page(request, TOOLS[system], campaign)


TOOLS: dict[str, Tool] = {t.system: t for t in (OMG, OGS, OKRPG, ORE, SDS)}
