"""The pages of checks outside combat: roll one from the sheet with its odds, the result card,
Fate and undo, the campaign's check log with the GM's calls, a player's prompts, Mana and Chi.

Every action is a plain POST form that also works without JavaScript (it redirects); with htmx
it answers with the partial it changed. The GM's results and the players' prompts are fetched
again when the campaign's live stream says they changed (checks/live.py)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from checks import access, services
from checks.forms import AnswerForm, CallForm, ResourceForm, RollForm, TargetForm
from checks.models import Check, CheckCall, ResourceChange
from checks.services import CheckConflict, Target
from rules.engine import omg
from sheets.http import AuthedRequest
from sheets.ids import parse_id
from sheets.models import Campaign, Character, Discipline
from sheets.randomness import server_rng

#: The degrees in the order a player reads them, best first.
DEGREE_ORDER = (
    omg.Degree.EPIC_SUCCESS,
    omg.Degree.DRAMATIC_SUCCESS,
    omg.Degree.SUCCESS,
    omg.Degree.SUCCESS_WITH_SACRIFICE,
    omg.Degree.FAILURE,
    omg.Degree.DRAMATIC_FAILURE,
    omg.Degree.EPIC_FAILURE,
)
LOG_LENGTH = 50


def _errors(exc: ValidationError) -> list[str]:
    if hasattr(exc, "error_dict"):
        return [f"{field}: {' '.join(msgs)}" for field, msgs in exc.message_dict.items()]
    return list(exc.messages)


def odds_rows(spec: omg.SheetCheck) -> list[dict[str, Any]]:
    counts = omg.sheet_check_odds(spec)
    return [
        {"degree": d, "label": d.label, "abbr": d.abbr, "faces": counts[d], "good": d.success}
        for d in DEGREE_ORDER
    ]


def _choice(data: QueryDict, character: Character) -> dict[str, Any]:
    """What the form asks for, as typed (for drawing the form again)."""
    kind = data.get("kind") or "aptitude"
    return {
        "kind": kind,
        "aptitude": data.get("aptitude", ""),
        "discipline": data.get("discipline", ""),
        "composite": data.get("composite", ""),
        "against": data.get("against", ""),
        "number": data.get("number", ""),
    }


def _target(choice: dict[str, Any], number: int | None) -> Target:
    against = (
        number
        if number is not None
        else choice["against"] or ("Adept" if choice["kind"] == "save" else "Moderate")
    )
    return services.parse_target(
        kind=choice["kind"],
        against=against,
        aptitude=choice["aptitude"],
        discipline=choice["discipline"],
        composite=choice["composite"],
    )


def _form_context(
    request: AuthedRequest, character: Character, data: QueryDict, form: TargetForm
) -> dict[str, Any]:
    choice = _choice(data, character)
    if choice["kind"] == "discipline" and not choice["discipline"]:
        first = character.disciplines.order_by("name").first()
        choice["discipline"] = first.name if first else ""
    if choice["kind"] == "aptitude" and not choice["aptitude"]:
        choice["aptitude"] = "SKL"
    if choice["kind"] in ("composite", "save") and not choice["composite"]:
        choice["composite"] = "AGL"
    # Switching between a test and a save keeps no name that means nothing to the other.
    names = (
        {t.name for t in omg.PROFICIENCY_TIERS}
        if choice["kind"] == "save"
        else {c.name for c in omg.DIFFICULTY_CATEGORIES}
    )
    if choice["against"] not in names:
        choice["against"] = "Adept" if choice["kind"] == "save" else "Moderate"
    ctx: dict[str, Any] = {
        "character": character,
        "choice": choice,
        "aptitudes": omg.APTITUDE_CHOICES,
        "composites": [(c.abbr, c.name) for c in omg.COMPOSITES],
        "disciplines": list(character.disciplines.order_by("name")),
        "categories": omg.DIFFICULTY_CATEGORIES,
        "tiers": omg.PROFICIENCY_TIERS,
        "kinds": [(k.value, k.value.capitalize()) for k in omg.CheckKind],
        "errors": [],
    }
    if not form.is_valid():
        ctx["errors"] = form.messages()
        return ctx
    try:
        target = _target(choice, form.cleaned_data["number"])
        spec, aptitude, level = services.spec_for(character, target)
    except ValidationError as exc:
        ctx["errors"] = _errors(exc)
        return ctx
    ctx.update(target=target, spec=spec, used_aptitude=aptitude, level=level)
    ctx["odds"] = odds_rows(spec)
    ctx["success_faces"] = sum(r["faces"] for r in ctx["odds"] if r["good"])
    return ctx


@login_required
def check_roll(request: AuthedRequest, pk: int) -> HttpResponse:
    """GET: choose what to roll and against what, with the exact odds; POST: roll it."""
    character = access.get_character(request.user, pk, write=True)
    if request.method == "GET":
        ctx = _form_context(request, character, request.GET, TargetForm(request.GET))
        if request.htmx:
            return render(request, "checks/check.html#form", ctx)
        return render(request, "checks/check.html", ctx)
    if request.method != "POST":
        return HttpResponse(status=405, headers={"Allow": "GET, POST"})
    form = RollForm(request.POST)
    ctx = _form_context(request, character, request.POST, form)
    try:
        if ctx["errors"]:
            raise ValidationError(ctx["errors"])
        check = services.roll_check(
            user=request.user,
            character=character,
            target=ctx["target"],
            rng=server_rng(),
            roll=form.cleaned_data["roll"],
            secret=request.POST.get("secret") == "1",
            note=form.cleaned_data["note"],
        )
    except ValidationError as exc:
        ctx["errors"] = _errors(exc)
        if request.htmx:
            return render(request, "checks/_errors.html", ctx, status=422)
        return render(request, "checks/check.html", ctx, status=422)
    if request.htmx:
        return render(request, "checks/_result.html", _result_context(request, check))
    return redirect("checks:check_detail", pk=check.pk)


def _result_context(request: AuthedRequest, check: Check) -> dict[str, Any]:
    campaign = check.campaign
    is_gm = campaign.is_gm(request.user)
    top = services.latest(campaign)
    spenders = []
    is_latest = top is not None and top.pk == check.pk and check.status == Check.Status.ACTIVE
    if is_latest and (is_gm or not check.secret):
        spenders = [c for c in services.fate_spenders(request.user, campaign) if c.fate > 0]
    return {
        "check": check,
        "hidden": check.secret and not is_gm,
        "is_gm": is_gm,
        "spenders": spenders,
        "campaign": campaign,
    }


@login_required
@require_safe
def check_detail(request: AuthedRequest, pk: int) -> HttpResponse:
    check = access.get_check(request.user, pk)
    return render(request, "checks/result.html", _result_context(request, check))


@login_required
@require_POST
def check_fate(request: AuthedRequest, pk: int) -> HttpResponse:
    check = access.get_check(request.user, pk)
    spender = (
        check.campaign.characters.filter(pk=spender_pk).first()
        if (spender_pk := parse_id(request.POST.get("spender"))) is not None
        else None
    )
    form = AnswerForm(request.POST)
    try:
        if spender is None:
            raise ValidationError({"spender": "Choose whose Fate to spend."})
        if not form.is_valid():
            raise ValidationError(form.messages())
        _, new = services.spend_fate(
            user=request.user,
            check=check,
            spender=spender,
            action=request.POST.get("action", ""),
            rng=server_rng(),
            roll=form.cleaned_data["roll"],
        )
    except (ValidationError, CheckConflict) as exc:
        messages.error(
            request, " ".join(_errors(exc)) if isinstance(exc, ValidationError) else str(exc)
        )
        return redirect("checks:check_detail", pk=check.pk)
    shown = new or Check.objects.get(pk=check.pk)
    if request.htmx:
        return render(request, "checks/_result.html", _result_context(request, shown))
    return redirect("checks:check_detail", pk=shown.pk)


@login_required
@require_POST
def check_reveal(request: AuthedRequest, pk: int) -> HttpResponse:
    check = access.get_check(request.user, pk)
    try:
        services.reveal(user=request.user, check=check)
    except CheckConflict as exc:
        messages.error(request, str(exc))
    return redirect("checks:check_detail", pk=check.pk)


# --- The campaign's log, the GM's calls --------------------------------------------------------


def _log_context(request: AuthedRequest, campaign: Campaign) -> dict[str, Any]:
    is_gm = campaign.is_gm(request.user)
    checks = list(
        Check.objects.visible_to(request.user, campaign)
        .select_related("character", "roller", "fate_spender")
        .order_by("-seq")[:LOG_LENGTH]
    )
    resources = list(
        ResourceChange.objects.filter(campaign=campaign)
        .select_related("character", "user")
        .order_by("-created_at", "-pk")[:LOG_LENGTH]
    )
    characters = list(
        campaign.characters.filter(copied_from=None, fight_only=False).order_by("is_npc", "name")
    )
    ctx: dict[str, Any] = {
        "campaign": campaign,
        "is_gm": is_gm,
        "checks": checks,
        "resources": resources,
        "latest": services.latest(campaign),
    }
    if is_gm:
        ctx.update(
            calls=list(
                campaign.check_calls.prefetch_related(
                    "requests__character", "requests__check_made"
                )[:5]
            ),
            characters=characters,
            # Ticked in advance from the query string (the encounter page's "Call for a
            # check" link sends the fight's player characters).
            preselected={pk for raw in request.GET.getlist("characters") if (pk := parse_id(raw))},
            discipline_names=sorted(
                set(
                    Discipline.objects.filter(character__campaign=campaign).values_list(
                        "name", flat=True
                    )
                )
            ),
            kinds=[(k.value, k.value.capitalize()) for k in omg.CheckKind],
            aptitudes=omg.APTITUDE_CHOICES,
            composites=[(c.abbr, c.name) for c in omg.COMPOSITES],
            categories=omg.DIFFICULTY_CATEGORIES,
            tiers=omg.PROFICIENCY_TIERS,
        )
    return ctx


@login_required
@require_safe
def campaign_checks(request: AuthedRequest, pk: int) -> HttpResponse:
    campaign = access.get_campaign(request.user, pk)
    return render(request, "checks/campaign.html", _log_context(request, campaign))


@login_required
@require_POST
def campaign_undo(request: AuthedRequest, pk: int) -> HttpResponse:
    campaign = access.get_campaign(request.user, pk, write=True)
    try:
        check = services.undo_latest(user=request.user, campaign=campaign)
        messages.success(request, f"Undone: {check.character.name}'s {check.label}.")
    except CheckConflict as exc:
        messages.error(request, str(exc))
    return redirect("checks:campaign_checks", pk=campaign.pk)


@login_required
@require_POST
def call_create(request: AuthedRequest, pk: int) -> HttpResponse:
    campaign = access.get_campaign(request.user, pk, write=True)
    data = request.POST
    if data.get("everyone") == "1":
        qs = campaign.characters.filter(is_npc=False, copied_from=None, fight_only=False)
    else:
        # Ids that are no ids ('²', a number past any row) ask no one: the call then asks
        # for at least one character.
        ids = {i for raw in data.getlist("characters") if (i := parse_id(raw)) is not None}
        qs = campaign.characters.filter(pk__in=ids)
    form = CallForm(data)
    try:
        if not form.is_valid():
            raise ValidationError(form.messages())
        number = form.cleaned_data["number"]
        target = services.parse_target(
            kind=data.get("kind", ""),
            against=number if number is not None else data.get("against", ""),
            aptitude=data.get("aptitude", ""),
            discipline=form.cleaned_data["discipline"],
            composite=data.get("composite", ""),
        )
        call = services.call_checks(
            user=request.user,
            campaign=campaign,
            characters=list(qs),
            target=target,
            secret=data.get("secret") == "1",
            note=form.cleaned_data["note"],
        )
    except ValidationError as exc:
        ctx = _log_context(request, campaign)
        ctx["call_errors"] = _errors(exc)
        return render(request, "checks/campaign.html", ctx, status=422)
    return redirect("checks:call_detail", pk=call.pk)


def _call_context(call: CheckCall) -> dict[str, Any]:
    requests = list(call.requests.select_related("character", "check_made"))
    answered = [r.check_made for r in requests if r.check_made is not None]
    return {
        "call": call,
        "requests": requests,
        "answered": len(answered),
        "succeeded": sum(1 for c in answered if c.success),
    }


@login_required
@require_safe
def call_detail(request: AuthedRequest, pk: int) -> HttpResponse:
    """The GM's view of a call: each answer as it comes in (fetched again on the live news)."""
    call = access.get_call(request.user, pk)
    ctx = _call_context(call)
    if request.htmx:
        return render(request, "checks/call.html#results", ctx)
    return render(request, "checks/call.html", ctx)


@login_required
@require_POST
def call_close(request: AuthedRequest, pk: int) -> HttpResponse:
    call = access.get_call(request.user, pk)
    services.close_call(user=request.user, call=call)
    return redirect("checks:call_detail", pk=call.pk)


@login_required
def request_answer(request: AuthedRequest, pk: int) -> HttpResponse:
    """A player's prompt: the called check with their own odds; POST answers it."""
    asked = access.get_request(request.user, pk)
    call = asked.call
    aptitude = (
        request.POST.get("aptitude", "")
        if request.method == "POST"
        else request.GET.get("aptitude", "")
    )
    ctx: dict[str, Any] = {
        "asked": asked,
        "call": call,
        "errors": [],
        "aptitudes": omg.APTITUDE_CHOICES,
    }
    try:
        target = services.target_of(call, aptitude if aptitude in omg.APTITUDE_ABBRS else "")
        spec, used, level = services.spec_for(asked.character, target, lenient=True)
        ctx.update(spec=spec, used_aptitude=used, level=level, odds=odds_rows(spec))
        ctx["success_faces"] = sum(r["faces"] for r in ctx["odds"] if r["good"])
    except ValidationError as exc:
        ctx["errors"] = _errors(exc)
    if request.method == "GET":
        if asked.check_made is not None:
            return redirect("checks:check_detail", pk=asked.check_made.pk)
        return render(request, "checks/answer.html", ctx)
    if request.method != "POST":
        return HttpResponse(status=405, headers={"Allow": "GET, POST"})
    form = AnswerForm(request.POST)
    try:
        if not form.is_valid():
            raise ValidationError(form.messages())
        check = services.answer(
            user=request.user,
            request=asked,
            rng=server_rng(),
            roll=form.cleaned_data["roll"],
            aptitude=aptitude,
        )
    except ValidationError as exc:
        ctx["errors"] = _errors(exc)
        return render(request, "checks/answer.html", ctx, status=422)
    except CheckConflict as exc:
        messages.error(request, str(exc))
        return redirect("checks:campaign_checks", pk=call.campaign_id)
    return redirect("checks:check_detail", pk=check.pk)


@login_required
@require_safe
def prompts(request: AuthedRequest, pk: int) -> HttpResponse:
    """The calls waiting for the viewer's characters (the dock fetches them on the live news)."""
    campaign = access.get_campaign(request.user, pk)
    ctx = {"campaign": campaign, "prompts": services.pending_requests(request.user, campaign)}
    return render(request, "checks/_prompts.html", ctx)


# --- Mana and Chi ------------------------------------------------------------------------------


@login_required
@require_POST
def resource_change(request: AuthedRequest, pk: int) -> HttpResponse:
    character = access.get_character(request.user, pk, write=True)
    data = request.POST
    form = ResourceForm(data)
    try:
        if not form.is_valid():
            raise ValidationError(form.messages())
        amount = form.cleaned_data["amount"]
        change = services.change_resource(
            user=request.user,
            character=character,
            pool=data.get("pool", ""),
            amount=-amount if data.get("direction") == "spend" else amount,
            cost=data.get("cost", ""),
            note=form.cleaned_data["note"],
        )
        messages.success(
            request,
            f"{change.get_pool_display()} {change.amount:+d}: now {change.after}.",
        )
    except ValidationError as exc:
        messages.error(request, " ".join(_errors(exc)))
    return redirect(reverse("checks:check_roll", args=[character.pk]) + "#resources")
