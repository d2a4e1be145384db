"""The combat tracker's pages. Every control is a plain form that redirects back to the
encounter; with htmx the same POST answers with the tracker panel it changed (409 when
someone else acted first, 422 when the fight does not allow it, with the reason)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from combat import access, services
from combat.forms import EncounterForm
from combat.live.broadcast import latest_entry_id
from combat.models import CombatLogEntry, Encounter, Participant
from combat.render import PAGE, presence_context
from combat.tracker import load_state, view_context
from sheets.access import get_campaign_for_user
from sheets.http import AuthedRequest
from sheets.ids import parse_id
from sheets.models import BodyZone, Character, Weapon
from sheets.refusals import NotFound, Refused


def encounter_context(
    request: AuthedRequest, encounter: Encounter, *, attacker_pk: int | None = None, **extra: Any
) -> dict[str, Any]:
    """Everything the encounter page shows to this viewer, in a fixed number of queries
    whatever the number of participants. ``attacker_pk`` chooses the declare form's
    attacker (default: whoever of the viewer's is acting)."""
    return view_context(load_state(encounter), request.user, attacker_pk=attacker_pk, **extra)


def form_int(data: QueryDict, name: str, *, required: bool = True) -> int | None:
    raw = (data.get(name) or "").strip()
    if not raw:
        if required:
            raise services.CombatError(f"Missing {name.replace('_', ' ')}.")
        return None
    try:
        return int(raw)
    except ValueError:
        raise services.CombatError(f"{name.replace('_', ' ')} must be a whole number.") from None


def _pk(raw: str) -> int | None:
    """An id from a query string or form, None for anything else (no 500 on "²" or "x")."""
    return parse_id(raw)


def form_flag(data: QueryDict, name: str) -> bool:
    return data.get(name) in ("1", "on", "true", "yes")


def participant_in(encounter: Encounter, pk: int | None) -> Participant:
    p = (
        Participant.objects.filter(encounter=encounter, pk=pk)  # type: ignore[misc]  # pk None matches no row: the not-found answer below
        .select_related("character", "encounter__campaign")
        .first()
    )
    if p is None:
        raise services.CombatError("That participant is not in this encounter.")
    return p


def respond(
    request: AuthedRequest,
    encounter: Encounter,
    action: Callable[[], Any],
    *,
    fate: bool = False,
) -> HttpResponse:
    """The action's answer: a redirect to the encounter for a plain form (a refusal in the
    messages), the tracker for htmx, with a refusal's status (sheets.refusals: 409 someone
    acted first, 422 not possible now) and its reason above the tracker. Not found is the
    page's 404. The reason of a refused ``fate`` spend is shown beside the Fate forms the
    player used, not above the tracker."""
    status, error = 200, None
    try:
        action()
    except NotFound as exc:
        raise Http404(exc.reason) from exc
    except Refused as exc:
        status, error = exc.page_status, exc.reason
    if not request.htmx:
        if error:
            messages.error(request, error)
        return redirect(encounter)
    encounter = access.get_encounter(request.user, encounter.pk)
    # A refused declaration comes back with its attacker still chosen, to be corrected.
    attacker = _pk(request.POST.get("attacker", "")) if error else None
    context = encounter_context(request, encounter, attacker_pk=attacker, error=error)
    if error and fate:
        context["error_beside"] = _fate_place(context)
    return render(request, f"{PAGE}#tracker", context, status=status)


def _fate_place(context: dict[str, Any]) -> str | None:
    """Where the page shows the Fate forms now: in the Fate section (the latest roll is no
    longer the latest entry), else the result card (with its forms, or without them once no
    Fate can be spent), else nowhere (None: the reason goes above the tracker)."""
    result, fate_roll = context["result"], context["fate_roll"]
    if fate_roll and context["spenders"] and (result is None or fate_roll.pk != result.entry.pk):
        return "fate-section"
    return "result-card" if result is not None else None


# --- Pages ---------------------------------------------------------------------------------


@login_required
def encounter_list(request: AuthedRequest, campaign_pk: int) -> HttpResponse:
    campaign = get_campaign_for_user(request, campaign_pk)
    is_gm = campaign.is_gm(request.user)
    if request.method == "POST":
        if not is_gm:
            get_campaign_for_user(request, campaign_pk, write=True)
        form = EncounterForm(request.POST)
        if not form.is_valid():
            messages.error(request, form.first_error())
            return redirect("combat:encounter_list", campaign_pk)
        try:
            encounter, _ = services.create_encounter(
                campaign=campaign, name=form.cleaned_data["name"], actor=request.user
            )
        except services.CombatError as exc:
            messages.error(request, str(exc))
            return redirect("combat:encounter_list", campaign_pk)
        return redirect(encounter)
    encounters = campaign.encounters.order_by("-created_at", "-pk")
    return render(
        request,
        "combat/encounter_list.html",
        {"campaign": campaign, "encounters": encounters, "is_gm": is_gm},
    )


@login_required
def encounter_detail(request: AuthedRequest, pk: int) -> HttpResponse:
    encounter = access.get_encounter(request.user, pk)
    context = encounter_context(
        request, encounter, attacker_pk=_pk(request.GET.get("attacker", ""))
    )
    panel = request.GET.get("panel") if request.htmx else None
    if panel == "tracker":
        return render(request, f"{PAGE}#tracker", context)
    if panel == "declare":
        # The declare form again for another attacker (its targets and weapons change). The
        # form says which attacker it shows: choosing that one again changes nothing, and a
        # late swap would wipe the target already picked, so htmx is told to leave it be.
        chosen = context["declare_attacker"]
        if not (context["running"] and chosen) or request.GET.get("shown") == str(chosen.p.pk):
            return HttpResponse(status=204)
        return render(request, f"{PAGE}#declare-form", context)
    context["latest_id"] = latest_entry_id(encounter)
    if context["is_gm"]:
        context.update(presence_context(encounter), check_call_url=_check_call_url(encounter))
    return render(request, PAGE, context)


def _check_call_url(encounter: Encounter) -> str:
    """The campaign's call for checks with the fight's player characters already ticked, so the
    GM asks the table for a check without leaving the fight for long."""
    ids = (
        encounter.participants.filter(character__is_npc=False, character__copied_from=None)
        .order_by("character_id")
        .values_list("character_id", flat=True)
        .distinct()
    )
    query = urlencode([("characters", pk) for pk in ids])
    url = reverse("checks:campaign_checks", args=[encounter.campaign_id])
    return f"{url}?{query}#call-panel" if query else f"{url}#call-panel"


# --- GM controls ---------------------------------------------------------------------------


@login_required
@require_POST
def participant_add(request: AuthedRequest, pk: int) -> HttpResponse:
    encounter = access.get_encounter(request.user, pk, write=True)

    def act() -> None:
        ids = [pk for pk in map(_pk, request.POST.getlist("characters")) if pk is not None]
        characters = list(Character.objects.filter(campaign=encounter.campaign, pk__in=ids))
        services.add_participants(
            encounter=encounter,
            characters=characters,
            hidden=form_flag(request.POST, "hidden"),
            actor=request.user,
        )

    return respond(request, encounter, act, fate=True)


@login_required
@require_POST
def npc_copies_add(request: AuthedRequest, pk: int) -> HttpResponse:
    encounter = access.get_encounter(request.user, pk, write=True)

    def act() -> None:
        npc = Character.objects.filter(  # type: ignore[misc]  # pk None matches no row: the not-found answer below
            campaign=encounter.campaign, is_npc=True, pk=form_int(request.POST, "npc")
        ).first()
        if npc is None:
            raise services.CombatError("Choose one of the campaign's NPCs.")
        services.add_npc_copies(
            encounter=encounter,
            npc=npc,
            count=form_int(request.POST, "count") or 0,
            hidden=form_flag(request.POST, "hidden"),
            actor=request.user,
        )

    return respond(request, encounter, act, fate=True)


@login_required
@require_POST
def participant_update(request: AuthedRequest, pk: int, participant_pk: int) -> HttpResponse:
    encounter = access.get_encounter(request.user, pk, write=True)

    def act() -> None:
        data = request.POST
        services.update_participant(
            participant=participant_in(encounter, participant_pk),
            hidden=form_flag(data, "hidden") if "hidden" in data else None,
            hidden_shows=data.get("hidden_shows") if "hidden_shows" in data else None,
            on_alert=form_flag(data, "on_alert") if "on_alert" in data else None,
            gm_order=form_int(data, "gm_order", required=False),
            itv=form_int(data, "itv", required=False),
            state=data.get("state") or None,
            clear_conditions=form_flag(data, "clear_conditions"),
            actor=request.user,
        )

    return respond(request, encounter, act, fate=True)


@login_required
@require_POST
def encounter_start(request: AuthedRequest, pk: int) -> HttpResponse:
    encounter = access.get_encounter(request.user, pk, write=True)
    return respond(
        request,
        encounter,
        lambda: services.start_encounter(encounter=encounter, actor=request.user),
    )


@login_required
@require_POST
def encounter_initiative(request: AuthedRequest, pk: int) -> HttpResponse:
    encounter = access.get_encounter(request.user, pk, write=True)
    return respond(
        request,
        encounter,
        lambda: services.roll_initiative(encounter=encounter, actor=request.user),
    )


def _seen_turn(data: QueryDict) -> services.SeenTurn | None:
    """The turn the page showed when the button was pressed (the form always sends it; a
    request without it passes the turn as before)."""
    if "round" not in data:
        return None
    countering = data.get("countering")
    return services.SeenTurn(
        round=form_int(data, "round") or 0,
        turn=form_int(data, "turn", required=False),
        countering=None if countering is None else form_flag(data, "countering"),
    )


@login_required
@require_POST
def encounter_next_turn(request: AuthedRequest, pk: int) -> HttpResponse:
    encounter = access.get_encounter(request.user, pk)
    return respond(
        request,
        encounter,
        lambda: services.next_turn(
            encounter=encounter,
            include_skipped=form_flag(request.POST, "include_skipped"),
            seen=_seen_turn(request.POST),
            actor=request.user,
        ),
    )


@login_required
@require_POST
def encounter_set_turn(request: AuthedRequest, pk: int, participant_pk: int) -> HttpResponse:
    encounter = access.get_encounter(request.user, pk, write=True)
    return respond(
        request,
        encounter,
        lambda: services.set_turn(
            encounter=encounter,
            participant=participant_in(encounter, participant_pk),
            actor=request.user,
        ),
    )


@login_required
@require_POST
def encounter_finish(request: AuthedRequest, pk: int) -> HttpResponse:
    encounter = access.get_encounter(request.user, pk, write=True)
    return respond(
        request,
        encounter,
        lambda: services.finish_encounter(encounter=encounter, actor=request.user),
    )


@login_required
@require_POST
def encounter_undo(request: AuthedRequest, pk: int) -> HttpResponse:
    encounter = access.get_encounter(request.user, pk, write=True)
    return respond(
        request, encounter, lambda: services.undo_last(encounter=encounter, actor=request.user)
    )


@login_required
@require_POST
def zone_adjust(request: AuthedRequest, pk: int) -> HttpResponse:
    encounter = access.get_encounter(request.user, pk, write=True)

    def act() -> None:
        zone = BodyZone.objects.filter(  # type: ignore[misc]  # pk None matches no row: the not-found answer below
            pk=form_int(request.POST, "zone"), character__combat_participants__encounter=encounter
        ).first()
        if zone is None:
            raise services.CombatError("Choose a zone of someone in this fight.")
        amount = form_int(request.POST, "amount") or 0
        if request.POST.get("direction") == "heal":
            amount = -abs(amount)
        services.adjust_zone(encounter=encounter, zone=zone, amount=amount, actor=request.user)

    return respond(request, encounter, act)


# --- Anyone's own actions ------------------------------------------------------------------


@login_required
@require_POST
def attack_declare(request: AuthedRequest, pk: int) -> HttpResponse:
    encounter = access.get_encounter(request.user, pk)

    def act() -> None:
        data = request.POST
        attacker = participant_in(encounter, form_int(data, "attacker"))
        if not attacker.is_controlled_by(request.user):
            raise PermissionDenied("You can only act for your own characters.")
        # One select carries "target:zone" so the form works without JavaScript.
        target_zone = [_pk(part) for part in (data.get("target_zone") or "").split(":")]
        if len(target_zone) != 2 or None in target_zone:
            raise services.CombatError("Choose a target and a body zone.")
        target_pk, zone_pk = target_zone
        target = participant_in(encounter, target_pk)
        zone = BodyZone.objects.filter(pk=zone_pk, character=target.character).first()  # type: ignore[misc]  # pk None matches no row: the not-found answer below
        weapon_pk = form_int(data, "weapon", required=False)
        weapon = None
        if weapon_pk is not None:
            weapon = Weapon.objects.filter(pk=weapon_pk, character=attacker.character).first()
            if weapon is None:
                raise services.CombatError("That weapon is not the attacker's.")
        services.declare_attack(
            encounter=encounter,
            attacker=attacker,
            target=target,
            action=data.get("action", ""),
            zone=zone,
            weapon=weapon,
            counterattack=form_flag(data, "counterattack"),
            actor=request.user,
        )

    return respond(request, encounter, act, fate=True)


@login_required
@require_POST
def attack_defense(request: AuthedRequest, pk: int) -> HttpResponse:
    declaration = access.get_declaration(request.user, pk)
    return respond(
        request,
        declaration.encounter,
        lambda: services.declare_defense(
            declaration=declaration, defense=request.POST.get("defense", ""), actor=request.user
        ),
    )


@login_required
@require_POST
def attack_roll(request: AuthedRequest, pk: int) -> HttpResponse:
    declaration = access.get_declaration(request.user, pk)
    return respond(
        request,
        declaration.encounter,
        lambda: services.resolve(
            declaration=declaration,
            roll=form_int(request.POST, "roll", required=False),
            actor=request.user,
        ),
    )


@login_required
@require_POST
def attack_cancel(request: AuthedRequest, pk: int) -> HttpResponse:
    declaration = access.get_declaration(request.user, pk)
    return respond(
        request,
        declaration.encounter,
        lambda: services.cancel_declaration(declaration=declaration, actor=request.user),
    )


@login_required
@require_POST
def participant_stamina(request: AuthedRequest, pk: int, participant_pk: int) -> HttpResponse:
    encounter = access.get_encounter(request.user, pk)
    return respond(
        request,
        encounter,
        lambda: services.stamina_check(
            participant=participant_in(encounter, participant_pk),
            roll=form_int(request.POST, "roll", required=False),
            difficulty=_stamina_difficulty(request.POST),
            actor=request.user,
        ),
    )


def _stamina_difficulty(data: QueryDict) -> int | None:
    """The GM's DIF from the Stamina form: a number typed in wins over the category picked;
    neither (a player's form has no such fields) leaves the default, Moderate 20."""
    typed = form_int(data, "difficulty_number", required=False)
    return typed if typed is not None else form_int(data, "difficulty", required=False)


@login_required
@require_POST
def roll_fate(request: AuthedRequest, pk: int) -> HttpResponse:
    entry: CombatLogEntry = access.get_log_entry(request.user, pk)
    encounter = entry.encounter

    def act() -> None:
        spender = participant_in(encounter, form_int(request.POST, "spender"))
        services.spend_fate(
            entry=entry,
            spender=spender,
            action=request.POST.get("action", ""),
            roll=form_int(request.POST, "roll", required=False),
            actor=request.user,
        )

    return respond(request, encounter, act, fate=True)
