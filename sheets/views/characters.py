"""The character sheet pages: create, view and edit field by field with htmx, delete."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.middleware.csrf import get_token
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.text import slugify
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect
from rest_framework import serializers

from rules.engine import RulesError, omg
from rules.engine.omg_data import SECONDARY_LISTS
from sheets import fragments, randomness, services
from sheets.access import get_campaign_for_user, get_character_for_user
from sheets.forms import CharacterCreateForm, row_form
from sheets.http import AuthedRequest
from sheets.models import Character
from sheets.numbers import sheet_numbers
from sheets.text import has_lone_surrogate
from sheets.wizard import CreationForm, all_disciplines, roll_dice_for

SHEET = "sheets/character_sheet.html"
WIZARD = "sheets/character_wizard.html"
ROW_KINDS = ("discipline", "weapon", "zone")


def sheet_context(request: HttpRequest, character: Character, **extra: Any) -> dict[str, Any]:
    return {
        "character": character,
        "numbers": sheet_numbers(character),
        "can_edit": character.can_edit(request.user),
        "is_gm": character.campaign.is_gm(request.user),
        "forms": {kind: row_form(kind)(prefix=kind) for kind in ("discipline", "weapon", "zone")},
        # Every editable field posts here: reversed once, not once per field.
        "field_url": reverse("sheets:character_edit_field", args=[character.pk]),
        # Below it the raise button is disabled, and says why (the service refuses it too).
        "raise_cost": omg.APTITUDE_RAISE_COST,
        **extra,
    }


@login_required
def character_create(request: AuthedRequest, campaign_pk: int) -> HttpResponse:
    campaign = get_campaign_for_user(request, campaign_pk)
    is_gm = campaign.is_gm(request.user)
    form = CharacterCreateForm(request.POST or None, allow_npc=is_gm)
    if request.method == "POST" and form.is_valid():
        try:
            character = services.create_character(
                campaign=campaign, owner=request.user, **form.cleaned_data
            )
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                for error in errors:
                    form.add_error(field if field in form.fields else None, error)
        else:
            messages.success(request, f"{character.name} is ready. Fill in the sheet.")
            return redirect(character)
    return render(request, "sheets/character_create.html", {"form": form, "campaign": campaign})


@login_required
def character_detail(request: AuthedRequest, pk: int) -> HttpResponse:
    character = get_character_for_user(request, pk)
    token = get_token(request)
    body = fragments.sheet_body(
        f"{SHEET}#sheet-body",
        character,
        can_edit=character.can_edit(request.user),
        is_gm=character.campaign.is_gm(request.user),
        reserve_pending=request.session.get(reserve_call_key(character)),
        token=token,
        context=lambda: sheet_context(request, character),
    )
    # The same token in the page's hx-headers as in its forms.
    return render(request, SHEET, {"character": character, "sheet_body": body, "csrf_token": token})


def _reload(character: Character) -> Character:
    return Character.objects.with_sheet().get(pk=character.pk)


@login_required
@require_POST
def character_edit_field(request: AuthedRequest, pk: int) -> HttpResponse:
    """One field of the sheet changed. htmx gets the field back (with its error, if any) and
    every computed number out of band; a plain form post is redirected to the sheet."""
    character = get_character_for_user(request, pk, write=True, rows=False)
    kind = request.POST.get("kind", "character")
    field = request.POST.get("field", "")
    value = request.POST.get("value", "")
    original = request.POST.get("original", "")
    try:
        row_id = int(request.POST["row"]) if kind != "character" else None
    except (KeyError, ValueError):
        row_id = -1
    error = conflict = None
    status = 200
    try:
        services.edit_field(
            user=request.user,
            character=character,
            kind=kind,
            row_id=row_id,
            field=field,
            value=value,
            original=original,
        )
    except services.EditConflict as exc:
        conflict = exc.current
        status = 409
    except ValidationError as exc:
        error = " ".join(m for msgs in exc.message_dict.values() for m in msgs)
        status = 422
    if not request.htmx:
        if conflict is not None or error:
            messages.error(request, _message(field, error, conflict))
        return redirect(character)
    character = _reload(character)
    edited_obj = _find_row(character, kind, row_id)
    if edited_obj is None:  # the row was deleted elsewhere: show the section again instead
        return render(request, f"{SHEET}#{kind}s", sheet_context(request, character))
    saved = error is None and conflict is None
    context = sheet_context(
        request,
        character,
        field_error=error,
        conflict=conflict,
        edited=(kind, row_id, field),
        edited_obj=edited_obj,
        edited_field=field if field in services.EDITABLE_FIELDS.get(kind, ()) else "name",
        # The fields the edit rewrote too, and the wounds table, whose every row shows the BZF.
        knock_on=services.KNOCK_ON_FIELDS.get((kind, field), ()) if saved else (),
        redraw_zones=saved and kind == "character" and field in ("weight", "bzf"),
    )
    return render(request, "sheets/character_sheet.html#field-response", context, status=status)


def _find_row(character: Character, kind: str, row_id: int | None) -> Any:
    if kind == "character":
        return character
    related = {"discipline": "disciplines", "weapon": "weapons", "zone": "zones"}.get(kind)
    if related is None:
        return character
    return next((r for r in getattr(character, related).all() if r.pk == row_id), None)


def _message(field: str, error: str | None, conflict: object) -> str:
    if conflict is not None:
        return (
            f"{field} was changed elsewhere (now {conflict!s}) since you opened the sheet; "
            "your edit was not saved. Check the new value and try again."
        )
    return f"{field}: {error} The last good value was kept."


@login_required
@require_POST
def character_add_row(request: AuthedRequest, pk: int, kind: str) -> HttpResponse:
    """A discipline, weapon or zone added. htmx gets its section back and, out of band, every
    number the new row changes (weapon PRO, defenses)."""
    character = get_character_for_user(request, pk, write=True, rows=False)
    form = row_form(kind)(request.POST, prefix=kind)
    status = 200
    if form.is_valid():
        try:
            services.add_row(
                user=request.user, character=character, kind=kind, data=form.cleaned_data
            )
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                for error in errors:
                    form.add_error(field if field in form.fields else None, error)
    if form.errors:
        status = 422
        if not request.htmx:
            messages.error(request, " ".join(str(e) for errs in form.errors.values() for e in errs))
    if not request.htmx:
        return redirect(character)
    context = sheet_context(request, _reload(character), kind=kind)
    if form.errors:
        context["forms"][kind] = form
    return render(request, f"{SHEET}#row-response", context, status=status)


@login_required
@require_POST
def character_delete_row(request: AuthedRequest, pk: int, kind: str, row_id: int) -> HttpResponse:
    if kind not in ROW_KINDS:
        raise Http404("No such section.")
    character = get_character_for_user(request, pk, write=True, rows=False)
    services.delete_row(user=request.user, character=character, kind=kind, row_id=row_id)
    if not request.htmx:
        return redirect(character)
    context = sheet_context(request, _reload(character), kind=kind)
    return render(request, f"{SHEET}#row-response", context)


@login_required
@require_POST
def character_wound(request: AuthedRequest, pk: int, zone_id: int) -> HttpResponse:
    """+1 / -1 wound on a zone (the body diagram and the zone table)."""
    character = get_character_for_user(request, pk, write=True, rows=False)
    try:
        delta = int(request.POST.get("delta", "1"))
    except ValueError:
        delta = 0
    delta = max(-1000, min(1000, delta))
    try:
        services.adjust_wounds(user=request.user, character=character, zone_id=zone_id, delta=delta)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    if not request.htmx:
        return redirect(character)
    return render(request, f"{SHEET}#wounds-response", sheet_context(request, _reload(character)))


@login_required
def character_delete(request: AuthedRequest, pk: int) -> HttpResponse:
    character = get_character_for_user(request, pk, write=True)
    if request.method == "POST":
        campaign = character.campaign
        services.delete_character(user=request.user, character=character)
        messages.success(request, f"{character.name} was deleted.")
        return redirect(campaign)
    return render(request, "sheets/character_confirm_delete.html", {"character": character})


@login_required
def character_print(request: AuthedRequest, pk: int) -> HttpResponse:
    """The sheet laid out for paper: every number, no controls."""
    character = get_character_for_user(request, pk)
    context = sheet_context(request, character)
    context["can_edit"] = False
    return render(request, "sheets/character_print.html", context)


@login_required
def character_export(request: AuthedRequest, pk: int) -> HttpResponse:
    """The sheet as the API's JSON document, downloaded as a file."""
    from sheets.api.characters import CharacterSerializer

    character = get_character_for_user(request, pk)
    data = CharacterSerializer(character, context={"request": request}).data
    response = JsonResponse(data, json_dumps_params={"indent": 2})
    slug = slugify(character.name) or "character"
    response["Content-Disposition"] = f'attachment; filename="{slug}.json"'
    return response


@login_required
def character_wizard(request: AuthedRequest, campaign_pk: int) -> HttpResponse:
    """Create a character by the rules: method, archetype, the 7 points. Each change re-checks
    the build (htmx); "Roll for me" fills in server dice; "Create" builds the sheet. The draft
    lives in the session, so leaving and coming back keeps it."""
    campaign = get_campaign_for_user(request, campaign_pk)
    draft_key = f"wizard:{campaign.pk}"
    dice_key = f"wizard-dice:{campaign.pk}"
    # The server's dice for each method, kept until a character is created: pressing "Roll
    # for me" again, or starting over, shows the same dice rather than fishing for better ones.
    rolled: dict[str, str] = request.session.get(dice_key) or {}
    if not isinstance(rolled, dict):
        rolled = {}
    if request.method != "POST":
        if request.GET.get("reset"):
            request.session.pop(draft_key, None)
        draft = request.session.get(draft_key)
        form = CreationForm(draft) if draft else CreationForm()
        if draft:
            form.is_valid()
        context = {"form": form, "campaign": campaign, "checked": bool(draft), **_wizard_lists()}
        return render(request, WIZARD, context)
    action = request.POST.get("action", "check")
    data = request.POST.copy()
    if action == "roll":
        method = data.get("method", "")
        if not rolled.get(method):
            rolled[method] = roll_dice_for(method, randomness.server_rng())
            request.session[dice_key] = rolled
        data["dice"] = rolled[method]
    form = CreationForm(data)
    valid = form.is_valid()
    if action == "create" and valid and form.summary and form.aptitude_roll:
        cleaned = form.cleaned_data
        character = services.create_from_build(
            campaign=campaign,
            owner=request.user,
            name=cleaned["name"],
            aptitudes=form.aptitude_roll,
            archetype=cleaned["archetype"],
            weapon_category=cleaned["weapon_category"] or None,
            ranks=dict(form.summary.ranks),
            weight=cleaned["weight"],
            rng=randomness.server_rng(),
            weapon=cleaned["weapon"],
            armor=cleaned["armor"],
            equipment=cleaned["equipment"],
            server_rolled=bool(cleaned["dice"])
            and cleaned["dice"] == rolled.get(cleaned["method"]),
        )
        request.session.pop(draft_key, None)
        request.session.pop(dice_key, None)
        messages.success(request, f"{character.name} is ready.")
        if request.htmx:
            return HttpResponseClientRedirect(character.get_absolute_url())
        return redirect(character)
    request.session[draft_key] = {
        k: v for k, v in data.items() if k not in ("csrfmiddlewaretoken", "action")
    }
    context = {"form": form, "campaign": campaign, "checked": True, **_wizard_lists()}
    status = 200 if valid or action != "create" else 422
    template = f"{WIZARD}#wizard-form" if request.htmx else WIZARD
    return render(request, template, context, status=status)


def _wizard_lists() -> dict[str, Any]:
    return {"known_disciplines": all_disciplines(), "secondary_lists": SECONDARY_LISTS}


@login_required
@require_POST
def character_rest(request: AuthedRequest, pk: int) -> HttpResponse:
    """The daily rest (owner or GM)."""
    character = get_character_for_user(request, pk, write=True)
    try:
        result = services.daily_rest(
            user=request.user, character=character, rng=randomness.server_rng()
        )
    except RulesError as exc:
        messages.error(request, f"No rest: {exc}")
        return redirect(character)
    raised = ", ".join(f"{name} {old}→{new}" for name, (old, new) in result.raised.items())
    messages.success(
        request,
        f"Rested: ITV {result.itv} (d10 {result.itv_d10}), Mana and Chi refilled"
        + (f"; raised {raised}" if raised else "")
        + (f"; {result.exp_lost} EXP found its discipline already at 5" if result.exp_lost else "")
        + ".",
    )
    return redirect(character)


@login_required
@require_POST
def character_reveal(request: AuthedRequest, pk: int) -> HttpResponse:
    """The GM shows an NPC's sheet to the players, or takes it back (docs/security.md)."""
    character = get_character_for_user(request, pk)
    if not character.campaign.is_gm(request.user):
        raise PermissionDenied("Only the GM shows an NPC's sheet to the players.")
    if not character.is_npc:
        messages.error(request, "Player characters are always open to the table.")
        return redirect(character)
    shown = request.POST.get("revealed") == "1"
    services.write_character(user=request.user, character=character, values={"revealed": shown})
    messages.success(
        request,
        f"{character.name}'s sheet is now "
        + ("open to the players." if shown else "the GM's alone.")
        + (" It stays hidden while it or one of its copies is hidden in a fight." if shown else ""),
    )
    return redirect(character)


@login_required
@require_POST
def character_buy_raise(request: AuthedRequest, pk: int) -> HttpResponse:
    """Spend 3 Fate on +1 to an aptitude at the next rest."""
    character = get_character_for_user(request, pk, write=True)
    try:
        services.buy_aptitude_raise(
            user=request.user, character=character, aptitude=request.POST.get("aptitude", "")
        )
    except RulesError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "3 Fate spent; the aptitude rises at the next rest.")
    return redirect(character)


MAX_IMPORT_BYTES = 512 * 1024
# An exported sheet is 4 levels deep (sheet, zones, zone, value). Python parses a few thousand
# levels of "[" before it gives up; the serializer and its error messages should never see those.
MAX_IMPORT_DEPTH = 16


def _depth(data: Any) -> int:
    """How deeply lists and objects nest in parsed JSON, counted without recursion."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            deepest = max(deepest, depth)
            children = value.values() if isinstance(value, dict) else value
            stack.extend((child, depth + 1) for child in children)
    return deepest


def read_json_upload(request: HttpRequest, *, what: str) -> tuple[Any, list[str]]:
    """The JSON document of an import form: an uploaded ``file`` or pasted ``text``, at most
    512 KB and 16 levels deep, valid text. Returns the parsed value (None when unusable) and
    what is wrong with it; the NPC library's import (prep) reads its files the same way."""
    errors: list[str] = []
    upload = request.FILES.get("file")
    raw = upload.read(MAX_IMPORT_BYTES + 1) if upload else request.POST.get("text", "").encode()
    data: Any = None
    if not raw.strip():
        errors.append("Choose an exported .json file or paste its text.")
    elif len(raw) > MAX_IMPORT_BYTES:
        errors.append(f"That file is too large for {what} (512 KB at most).")
    else:
        try:
            data = json.loads(raw)
        except (UnicodeDecodeError, ValueError) as exc:
            errors.append(f"That is not valid JSON: {exc}.")
        except RecursionError:
            errors.append(f"That JSON is nested far too deeply to be {what}.")
        else:
            if _depth(data) > MAX_IMPORT_DEPTH:
                errors.append(f"That JSON is nested far too deeply to be {what}.")
                data = None
            elif has_lone_surrogate(data):
                # No text: the page quoting it back could not be encoded (as in the API).
                errors.append(
                    "That file is not valid text: it holds a lone surrogate (a \\ud800 to "
                    "\\udfff escape that is not half of a pair)."
                )
                data = None
    return data, errors


@login_required
def character_import(request: AuthedRequest, campaign_pk: int) -> HttpResponse:
    """Create a character from a sheet exported as JSON (the API's document). All or nothing:
    a file with any error creates nothing and says what is wrong."""
    from sheets.api.characters import CharacterSerializer

    campaign = get_campaign_for_user(request, campaign_pk)
    errors: list[str] = []
    if request.method == "POST":
        data, errors = read_json_upload(request, what="a character sheet")
        if data is not None and not isinstance(data, dict):
            errors.append("The file must hold one character (a JSON object).")
        elif data is not None:
            data = {**data, "campaign": campaign.pk}
            if not campaign.is_gm(request.user):
                data["is_npc"] = data["revealed"] = False
            serializer = CharacterSerializer(data=data, context={"request": request})
            if serializer.is_valid():
                try:
                    character = serializer.save()
                except ValidationError as exc:
                    errors.extend(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())
                except serializers.ValidationError as exc:  # a row the model refuses
                    errors.extend(flatten_errors(exc.detail))
                else:
                    messages.success(request, f"{character.name} imported.")
                    return redirect(character)
            else:
                errors.extend(flatten_errors(serializer.errors))
    status = 422 if errors else 200
    return render(
        request,
        "sheets/character_import.html",
        {"campaign": campaign, "errors": errors},
        status=status,
    )


def flatten_errors(errors: Any, prefix: str = "") -> list[str]:
    if isinstance(errors, dict):
        return [
            m for key, value in errors.items() for m in flatten_errors(value, f"{prefix}{key}.")
        ]
    if isinstance(errors, list):
        out: list[str] = []
        for index, value in enumerate(errors):
            if isinstance(value, dict | list):
                out.extend(flatten_errors(value, f"{prefix}{index}."))
            elif value:
                out.append(f"{prefix.rstrip('.')}: {value}")
        return out
    return [f"{prefix.rstrip('.')}: {errors}"]


def reserve_call_key(character: Character) -> str:
    """The session key of a reserve call rolled by the server and not yet answered."""
    return f"reserve-call-{character.pk}"


@login_required
@require_POST
def character_reserve(request: AuthedRequest, pk: int) -> HttpResponse:
    """Roll the RSV, or answer a reserve call by using the new roll or the stored RSV.

    The player chooses after seeing the new roll (docs/rules.md, "Reserve roll"): with table dice
    they type it and press a choice; with server dice ``mode=call`` rolls it first, the sheet
    shows it, and the choice that follows uses that roll (kept in the session, so the page
    cannot send another)."""
    character = get_character_for_user(request, pk, write=True)
    mode = request.POST.get("mode", "roll")
    raw = request.POST.get("roll", "").strip()
    roll = None
    if raw:
        # At most 3 digits before int(): it refuses more than 4,300 (a server error).
        if not (raw.isascii() and raw.isdigit() and len(raw) <= 3) or not 1 <= int(raw) <= 100:
            messages.error(request, "A d100 roll is a whole number from 1 to 100 (100 for 00).")
            return redirect(character)
        roll = int(raw)
    rng = randomness.server_rng()
    key = reserve_call_key(character)
    try:
        if mode == "roll":
            value = services.roll_reserve(
                user=request.user, character=character, rng=rng, roll=roll
            )
            messages.success(request, f"RSV is now {value}.")
        elif mode == "call":
            if character.rsv is None:
                raise ValidationError("This sheet has no reserve roll yet: roll RSV first.")
            value = roll if roll is not None else rng.randint(1, 100)
            request.session[key] = value  # the sheet shows it with the two choices
        elif mode in ("new", "keep"):
            if roll is None:
                roll = request.session.get(key)
            if roll is None:
                raise ValidationError(
                    "Roll first: type the d100 you rolled, or press Reserve call for the "
                    "server's roll, then choose."
                )
            result = services.reserve_call(
                user=request.user,
                character=character,
                keep_reserve=mode == "keep",
                rng=rng,
                roll=roll,
            )
            request.session.pop(key, None)
            messages.success(request, f"Use {result.used}; RSV is now {result.rsv}.")
        else:
            raise ValidationError("Choose roll, call, new or keep.")
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    return redirect(character)
