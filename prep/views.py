"""The GM's preparation pages: the NPC library, prepared encounters, the matchup table, and
putting library NPCs into an encounter. Every page is the GM's alone (prep/access.py)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils.text import slugify
from django.views.decorators.http import require_POST

from combat import access as combat_access
from combat import services as combat
from prep import access, matchups, services, statblock
from prep import forecast as fight_forecast
from prep.forms import APTITUDE_LABELS, FormatError, NpcForm, PreparedForm
from prep.models import MAX_COUNT, LibraryNpc, PreparedEncounter
from prep.starter import STARTERS
from prep.throttles import page_throttled
from sheets.http import AuthedRequest
from sheets.ids import parse_id
from sheets.services import lock_campaign
from sheets.views.characters import read_json_upload

ERRORS = (services.PrepError, combat.CombatError)


def _int(value: str | None, default: int = 0) -> int:
    """A whole number typed into a form (ASCII digits only, sheets/ids.py), else ``default``."""
    parsed = parse_id((value or "").strip())
    return default if parsed is None else parsed


# --- The library ------------------------------------------------------------------------------


@login_required
def library(request: AuthedRequest) -> HttpResponse:
    npcs = list(LibraryNpc.objects.filter(owner=request.user))
    have = {n.starter for n in npcs}
    campaigns = request.user.campaigns_run.all()
    return render(
        request,
        "prep/library.html",
        {
            "npcs": npcs,
            "missing_starters": [s["name"] for k, s in STARTERS.items() if k not in have],
            "campaigns": campaigns,
        },
    )


@login_required
@require_POST
def starter_set(request: AuthedRequest) -> HttpResponse:
    added = services.add_starter_set(owner=request.user)
    if added:
        messages.success(request, "Added: " + ", ".join(n.name for n in added) + ".")
    else:
        messages.info(request, "You have the whole starter set already.")
    return redirect("prep:library")


def _npc_form(request: AuthedRequest, npc: LibraryNpc | None) -> HttpResponse:
    before = services.full_sheet(npc) if npc else {}
    errors: list[str] = []
    if request.method == "POST":
        form = NpcForm(request.POST)
        if form.is_valid():
            try:
                document = form.document(before)
            except FormatError as exc:
                errors.append(str(exc))
            else:
                sheet, problems = statblock.validate(document, request=request)
                if sheet is None:
                    errors.extend(statblock.error_lines(problems))
                else:
                    try:
                        npc = services.save_npc(owner=request.user, sheet=sheet, npc=npc)
                    except services.PrepError as exc:
                        errors.append(str(exc))
                    else:
                        messages.success(request, f"{npc.name} saved.")
                        return redirect("prep:library")
    else:
        form = NpcForm(initial=NpcForm.initial_from(before)) if npc else NpcForm()
    status = 422 if errors or form.errors else 200
    context = {"form": form, "npc": npc, "errors": errors, "aptitudes": APTITUDE_LABELS}
    return render(request, "prep/npc_form.html", context, status=status)


@login_required
def npc_create(request: AuthedRequest) -> HttpResponse:
    return _npc_form(request, None)


@login_required
def npc_edit(request: AuthedRequest, pk: int) -> HttpResponse:
    return _npc_form(request, access.get_npc(request.user, pk))


@login_required
@require_POST
def npc_duplicate(request: AuthedRequest, pk: int) -> HttpResponse:
    npc = access.get_npc(request.user, pk)
    try:
        copy = services.duplicate_npc(npc=npc)
    except services.PrepError as exc:
        messages.error(request, str(exc))
        return redirect("prep:library")
    messages.success(request, f"{copy.name} added.")
    return redirect(copy)


@login_required
@require_POST
def npc_delete(request: AuthedRequest, pk: int) -> HttpResponse:
    npc = access.get_npc(request.user, pk)
    try:
        services.delete_npc(npc=npc, actor=request.user)
    except services.PrepError as exc:
        messages.error(request, str(exc))
        return redirect("prep:library")
    messages.success(request, f"{npc.name} deleted from your library.")
    return redirect("prep:library")


@login_required
def npc_export(request: AuthedRequest, pk: int) -> HttpResponse:
    npc = access.get_npc(request.user, pk)
    response = JsonResponse(services.full_sheet(npc), json_dumps_params={"indent": 2})
    slug = slugify(npc.name) or "npc"
    response["Content-Disposition"] = f'attachment; filename="{slug}.json"'
    return response


@login_required
def npc_import(request: AuthedRequest) -> HttpResponse:
    """A stat block from a JSON file: the library's own export, or any exported character
    sheet (its campaign, owner and current pools are ignored). All or nothing."""
    errors: list[str] = []
    if request.method == "POST":
        data, errors = read_json_upload(request, what="an NPC stat block")
        if data is not None and not isinstance(data, dict):
            errors.append("The file must hold one stat block (a JSON object).")
        elif data is not None:
            sheet, problems = statblock.validate(data, request=request)
            if sheet is None:
                errors.extend(statblock.error_lines(problems))
            else:
                try:
                    npc = services.save_npc(owner=request.user, sheet=sheet)
                except services.PrepError as exc:
                    errors.append(str(exc))
                else:
                    messages.success(request, f"{npc.name} imported into your library.")
                    return redirect("prep:library")
    return render(
        request, "prep/npc_import.html", {"errors": errors}, status=422 if errors else 200
    )


# --- Prepared encounters ----------------------------------------------------------------------


@login_required
def prepared_list(request: AuthedRequest, campaign_pk: int) -> HttpResponse:
    campaign = access.get_campaign_run_by(request.user, campaign_pk)
    if request.method == "POST":
        form = PreparedForm(request.POST)
        if not form.is_valid():
            messages.error(request, form.first_error())
            return redirect("prep:prepared_list", campaign_pk)
        prepared = form.save(commit=False)
        with transaction.atomic():
            # Behind a deletion of the campaign: wait for it, then a 404 (lock_campaign).
            prepared.campaign = lock_campaign(pk=campaign.pk)
            prepared.save()
        return redirect(prepared)
    prepared = campaign.prepared_encounters.prefetch_related("groups__npc", "expected")
    return render(request, "prep/prepared_list.html", {"campaign": campaign, "prepared": prepared})


def _prepared_context(request: AuthedRequest, prepared: PreparedEncounter) -> dict[str, Any]:
    expected = set(prepared.expected.values_list("pk", flat=True))
    return {
        "prepared": prepared,
        "campaign": prepared.campaign,
        "groups": list(prepared.groups.select_related("npc")),
        "characters": [
            (c, c.pk in expected)
            for c in prepared.campaign.characters.filter(copied_from__isnull=True, fight_only=False)
        ],
        "npcs": LibraryNpc.objects.filter(owner=request.user),
        "max_count": MAX_COUNT,
    }


@login_required
def prepared_detail(request: AuthedRequest, pk: int) -> HttpResponse:
    prepared = access.get_prepared(request.user, pk)
    if request.method == "POST":
        form = PreparedForm(request.POST, instance=prepared)
        if not form.is_valid():
            messages.error(request, form.first_error())
            return redirect(prepared)
        chosen = {_int(v) for v in request.POST.getlist("expected")}
        characters = list(prepared.campaign.characters.filter(pk__in=chosen))
        with transaction.atomic():
            # Behind a deletion of the campaign: wait for it, then a 404 (not a save that
            # finds no row and inserts one pointing at nothing).
            lock_campaign(pk=prepared.campaign_id)
            PreparedEncounter.objects.select_for_update().get(pk=prepared.pk)
            form.save()
            prepared.expected.set(characters)
        messages.success(request, "Saved.")
        return redirect(prepared)
    context = _prepared_context(request, prepared)
    context.update(_forecast_context(request, prepared))
    return render(request, "prep/prepared_detail.html", context)


def _forecast_context(request: AuthedRequest, prepared: PreparedEncounter) -> dict[str, Any]:
    """The forecast block of a page: the full forecast when it is cached, else a quick one
    (fewer fights, drawn at once) that the page swaps for the full one as soon as it is
    ready (htmx, with a plain link to it as well)."""
    full = quick = None
    unavailable = ""
    try:
        full = fight_forecast.forecast_for(prepared, cached_only=True)
        if full is None:
            # Within every fight's cap (max_fights(MAX_FIGHTERS) is more than 1,000).
            quick = fight_forecast.forecast_for(
                prepared, fights=fight_forecast.QUICK_FIGHTS, exact=False
            )
    except fight_forecast.ForecastError as exc:
        unavailable = str(exc)
    return {
        "prepared": prepared,
        "forecast": fight_forecast.for_page(full or quick),
        "forecast_unavailable": unavailable,
        "refine": full is None and quick is not None,
        "groups": list(prepared.groups.select_related("npc")),
        "npcs": LibraryNpc.objects.filter(owner=request.user),
    }


def _bad_request(exc: Exception) -> HttpResponse:
    return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")


@login_required
def prepared_forecast(request: AuthedRequest, pk: int) -> HttpResponse:
    """The full forecast (10 000 fights, fewer for a large fight, unless ``fights`` says
    otherwise; any cached seed unless ``seed`` names one), with a "what if" of one NPC more
    (``add``, a library NPC) or one fewer (``remove``, a group's id). htmx gets the block
    alone; a plain request the page. Throttled per user with the API's forecasts."""
    prepared = access.get_prepared(request.user, pk)
    if (throttled := page_throttled(request)) is not None:
        return throttled
    try:
        asked = fight_forecast.parse_asked(request.GET)
        fights, seed = asked.fights, asked.seed
        what_if = fight_forecast.parse_what_if(request.user, prepared, request.GET)
    except fight_forecast.ForecastError as exc:
        return _bad_request(exc)
    context: dict[str, Any] = {
        "prepared": prepared,
        "campaign": prepared.campaign,
        "refine": False,
        "groups": list(prepared.groups.select_related("npc")),
        "npcs": LibraryNpc.objects.filter(owner=request.user),
    }
    try:
        base = fight_forecast.forecast_for(prepared, fights=fights, seed=seed)
        context["forecast"] = fight_forecast.for_page(base)
        if what_if.label:
            context["what_if"] = what_if.label
            context["what_if_forecast"] = fight_forecast.for_page(
                fight_forecast.forecast_for(prepared, fights=fights, seed=seed, what_if=what_if)
            )
    except fight_forecast.ForecastError as exc:
        if exc.field == "fights":  # more fights than this fight's cap: the request is wrong
            return _bad_request(exc)
        context["forecast_unavailable"] = str(exc)
    if request.htmx:
        return render(request, "prep/_forecast.html", context)
    return render(request, "prep/forecast.html", context)


@login_required
@require_POST
def group_add(request: AuthedRequest, pk: int) -> HttpResponse:
    prepared = access.get_prepared(request.user, pk)
    try:
        services.add_group(
            prepared=prepared,
            npc_pk=_int(request.POST.get("npc")),
            count=_int(request.POST.get("count"), 1),
            hidden=bool(request.POST.get("hidden")),
            on_alert=bool(request.POST.get("on_alert")),
            actor=request.user,
        )
    except services.PrepError as exc:
        messages.error(request, str(exc))
    return redirect(prepared)


@login_required
@require_POST
def group_delete(request: AuthedRequest, pk: int) -> HttpResponse:
    group = access.get_group(request.user, pk)
    group.delete()
    return redirect(group.prepared)


@login_required
@require_POST
def prepared_delete(request: AuthedRequest, pk: int) -> HttpResponse:
    prepared = access.get_prepared(request.user, pk)
    campaign_pk = prepared.campaign_id
    prepared.delete()
    messages.success(request, f"{prepared.name} deleted.")
    return redirect("prep:prepared_list", campaign_pk)


@login_required
@require_POST
def prepared_start(request: AuthedRequest, pk: int) -> HttpResponse:
    prepared = access.get_prepared(request.user, pk)
    try:
        encounter = services.start_prepared(prepared=prepared, actor=request.user)
    except ERRORS as exc:
        messages.error(request, str(exc))
        return redirect(prepared)
    return redirect(encounter)


@login_required
def prepared_matchups(request: AuthedRequest, pk: int) -> HttpResponse:
    prepared = access.get_prepared(request.user, pk)
    table = matchups.matchup_table(prepared)
    return render(
        request,
        "prep/matchups.html",
        {
            **_forecast_context(request, prepared),
            "prepared": prepared,
            "campaign": prepared.campaign,
            "table": table,
            "sections": [
                (title, rows, testid, matchups.glance(rows))
                for title, rows, testid in (
                    ("NPCs attack the characters", table.npc_attacks, "npc-attacks"),
                    (
                        "The characters attack the NPCs",
                        table.character_attacks,
                        "character-attacks",
                    ),
                )
            ],
        },
    )


@login_required
def encounter_forecast(request: AuthedRequest, pk: int) -> HttpResponse:
    """The forecast of a fight from where it stands: the campaign GM's alone (everyone else,
    players of the fight included, 404: the forecast gives the NPCs' numbers away)."""
    encounter = access.get_encounter_run_by(request.user, pk)
    if (throttled := page_throttled(request)) is not None:
        return throttled
    try:
        asked = fight_forecast.parse_asked(request.GET)
        fights, seed = asked.fights, asked.seed
    except fight_forecast.ForecastError as exc:
        return _bad_request(exc)
    context: dict[str, Any] = {"encounter": encounter}
    try:
        result = fight_forecast.forecast_for_encounter(encounter, fights=fights, seed=seed)
        context["forecast"] = fight_forecast.for_page(result)
    except fight_forecast.ForecastError as exc:
        if exc.field == "fights":
            return _bad_request(exc)
        context["forecast_unavailable"] = str(exc)
    return render(request, "prep/encounter_forecast.html", context)


# --- Library NPCs into a running or new encounter ----------------------------------------------


@login_required
def encounter_add(request: AuthedRequest, pk: int) -> HttpResponse:
    """Pick library NPCs and counts, hidden or not, on alert or not: one submit adds them all
    to the encounter, numbered."""
    encounter = combat_access.get_encounter(request.user, pk, write=True)
    npcs = list(LibraryNpc.objects.filter(owner=request.user))
    if request.method == "POST":
        picks = []
        for npc in npcs:
            n = _int(request.POST.get(f"count-{npc.pk}"))
            if n:
                picks.append(
                    services.Pick(
                        npc,
                        n,
                        hidden=bool(request.POST.get("hidden")),
                        on_alert=bool(request.POST.get("on_alert")),
                    )
                )
        try:
            if any(not 1 <= p.count <= MAX_COUNT for p in picks):
                raise services.PrepError(f"How many of each: 0 to {MAX_COUNT}.")
            services.put_into_encounter(encounter=encounter, picks=picks, actor=request.user)
        except PermissionDenied:
            raise
        except ERRORS as exc:
            messages.error(request, str(exc))
            return redirect("prep:encounter_add", pk)
        messages.success(request, "Added to the fight.")
        return redirect(encounter)
    return render(
        request,
        "prep/encounter_add.html",
        {"encounter": encounter, "npcs": npcs, "max_count": MAX_COUNT},
    )
