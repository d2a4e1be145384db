"""Checks outside combat: roll one, spend Fate on the latest, undo the latest, reveal a secret
one, call for checks and answer a call, spend or restore Mana and Chi.

Every function checks access itself (the pages and the API call the same ones): outsiders get
Http404, members who may not act PermissionDenied, bad input ValidationError naming the field,
and a state that forbids the action CheckConflict. Nothing is stored when any of them is
raised. The readings of the rules are in docs/rules.md, "Checks outside combat"."""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Max, QuerySet
from django.http import Http404

from checks import signals
from checks.models import Check, CheckCall, CheckRequest, ResourceChange
from rules.engine import RulesError, omg
from sheets.models import Campaign, Character, Discipline
from sheets.numbers import aptitudes_of
from sheets.services import guess_aptitude, lock_campaign

MAX_FATE = 1000  # the sheet's bound (sheets.models.Character.fate)
COMPOSITE_ABBRS = tuple(c.abbr for c in omg.COMPOSITES)


class CheckConflict(Exception):
    """The table moved on: the roll is no longer the latest, a value changed since."""


@dataclass(frozen=True)
class Target:
    """What a check rolls, as asked: the kind and its names, and what it is against."""

    kind: str
    against: int
    aptitude: str = ""
    discipline: str = ""
    composite: str = ""


def parse_target(
    *,
    kind: object,
    against: object,
    aptitude: object = "",
    discipline: object = "",
    composite: object = "",
) -> Target:
    """Validate what to roll: ValidationError naming the field that is wrong.

    ``against`` is a number (an ``int``, as a form or a serializer parsed it) or a name; a
    string is only ever a name, so '²' or 5,000 digits are an unknown name, not a number."""
    if kind not in {k.value for k in omg.CheckKind}:
        raise ValidationError({"kind": "Choose aptitude, discipline, composite or save."})
    aptitude = aptitude or ""
    discipline = discipline or ""
    composite = composite or ""
    if not isinstance(aptitude, str) or (aptitude and aptitude not in omg.APTITUDE_ABBRS):
        raise ValidationError({"aptitude": f"One of {', '.join(omg.APTITUDE_ABBRS)}."})
    if not isinstance(discipline, str) or len(discipline) > 120:
        raise ValidationError({"discipline": "A discipline's name, at most 120 characters."})
    if not isinstance(composite, str) or (composite and composite not in COMPOSITE_ABBRS):
        raise ValidationError({"composite": f"One of {', '.join(COMPOSITE_ABBRS)}."})
    if kind == "aptitude" and not aptitude:
        raise ValidationError({"aptitude": "Choose the aptitude to roll."})
    if kind == "discipline" and not discipline.strip():
        raise ValidationError({"discipline": "Choose the discipline to roll."})
    if kind in ("composite", "save") and not composite:
        raise ValidationError({"composite": "Choose the composite to roll."})
    if not isinstance(against, int | str) or isinstance(against, bool):
        raise ValidationError({"against": "A Difficulty Category or a number."})
    try:
        value = omg.against_value(str(kind), against)
    except RulesError as exc:
        raise ValidationError({"against": str(exc)}) from exc
    return Target(
        str(kind),
        value,
        aptitude if kind in ("aptitude", "discipline") else "",
        discipline.strip() if kind == "discipline" else "",
        composite if kind in ("composite", "save") else "",
    )


def parse_roll(roll: object) -> int | None:
    """A typed d100 (an ``int``, as a form or a serializer parsed it), or None for the
    server's dice."""
    if roll is None:
        return None
    if isinstance(roll, bool) or not isinstance(roll, int) or not 1 <= roll <= 100:
        raise ValidationError({"roll": "A d100 roll is a whole number from 1 to 100 (00 is 100)."})
    return roll


# --- Access --------------------------------------------------------------------------------


def require_member(user: Any, campaign: Campaign) -> None:
    if not campaign.is_member(user) and not campaign.is_gm(user):
        raise Http404("No such campaign.")


def require_control(user: Any, character: Character) -> None:
    """Players roll for their own characters, the GM for every one; others who may see the
    sheet get 403, who may not 404."""
    if not character.is_visible_to(user):
        raise Http404("No such character.")
    if not character.can_edit(user):
        raise PermissionDenied("Only the character's player and the GM roll for it.")


def require_gm(user: Any, campaign: Campaign) -> None:
    require_member(user, campaign)
    if not campaign.is_gm(user):
        raise PermissionDenied("Only the campaign's GM can do this.")


def _tell(campaign: Campaign, asked: QuerySet[CheckRequest]) -> None:
    """The open pages that show ``asked`` (the players' prompts, the GM's results) are told
    to fetch them again once the transaction commits (signals.announce_calls)."""
    signals.announce_calls(campaign, asked.values_list("call_id", "character__owner_id"))


# --- The pieces of a roll ------------------------------------------------------------------


def _discipline_row(character: Character, name: str) -> Discipline | None:
    return character.disciplines.filter(name__iexact=name).order_by("pk").first()


def spec_for(
    character: Character, target: Target, *, lenient: bool = False
) -> tuple[omg.SheetCheck, str, int]:
    """The engine's check for ``character``, and the aptitude and discipline level it uses.

    A discipline the sheet lacks is refused, unless ``lenient`` (a GM's call): then the check
    is undisciplined, on the aptitude alone (docs/rules.md, "Checks outside combat")."""
    aptitude, level = target.aptitude, 0
    if target.kind == "discipline":
        row = _discipline_row(character, target.discipline)
        if row is None and not lenient:
            raise ValidationError(
                {"discipline": f"{character.name} has no discipline named {target.discipline}."}
            )
        if row is not None:
            level = row.level
            aptitude = aptitude or row.aptitude
        aptitude = aptitude or guess_aptitude(target.discipline)
    apts = aptitudes_of(character)
    try:
        if target.kind in ("composite", "save"):
            value = omg.composites(apts).as_dict()[target.composite]
            spec = omg.sheet_check(target.kind, composite=value, against=target.against)
        else:
            spec = omg.sheet_check(
                target.kind,
                aptitude=getattr(apts, aptitude.lower()),
                discipline=level,
                against=target.against,
            )
    except RulesError as exc:
        raise ValidationError({"character": f"{character.name}'s sheet: {exc}"}) from exc
    return spec, aptitude, level


def _next_seq(campaign: Campaign) -> int:
    agg = Check.objects.filter(campaign=campaign).aggregate(s=Max("seq"), f=Max("fate_seq"))
    return max(agg["s"] or 0, agg["f"] or 0) + 1


def _lock_campaign(campaign: Campaign) -> Campaign:
    # Every change to a campaign's checks holds its row: one sequence, one latest roll; and
    # behind a deletion of the campaign, it is waited for, then a 404 (lock_campaign).
    return lock_campaign(pk=campaign.pk)


def _set(obj: Any, model: str, field: str, value: int, changes: list[dict[str, Any]]) -> None:
    before = getattr(obj, field)
    if before == value:
        return
    changes.append({"model": model, "pk": obj.pk, "field": field, "before": before, "after": value})
    setattr(obj, field, value)


def _save(character: Character | None, discipline: Discipline | None) -> None:
    if discipline is not None:
        discipline.save(update_fields=["exp_marks"])
    if character is not None:
        character.version += 1
        character.save(update_fields=["fate", "exp_marks", "version", "updated_at"])


def _apply_effects(check: Check) -> list[dict[str, Any]]:
    """EXP and Fate of the roll on the locked sheet; returns the changes made."""
    changes: list[dict[str, Any]] = []
    if not check.exp and not check.fate:
        return changes
    c = Character.objects.select_for_update().get(pk=check.character_id)
    row = None
    if check.exp_on == "discipline":
        row = _discipline_row(c, check.discipline)
    if check.exp and row is not None:
        _set(row, "discipline", "exp_marks", min(omg.MAX_EXP_MARKS, row.exp_marks + 1), changes)
    elif check.exp:
        _set(c, "character", "exp_marks", min(omg.MAX_EXP_MARKS, c.exp_marks + 1), changes)
    if check.fate:
        _set(c, "character", "fate", min(MAX_FATE, omg.apply_fate(c.fate, check.fate)), changes)
    _save(c, row)
    return changes


def _lock_sheets(*changes: list[dict[str, Any]], characters: Iterable[int] = ()) -> None:
    """Lock every sheet row ``changes`` name, and ``characters``, in the sheets' one order
    (docs/architecture.md, "The lock order"): the characters by pk, then the disciplines by
    pk. ``_revert`` then finds them locked. Reverting in the changes' own order locked a
    discipline before its character when an epic failure at 0 Fate had changed only its EXP
    mark: the reverse of a sheet edit, which locks the character and then its row."""
    chars: set[int] = set(characters)
    disciplines: set[int] = set()
    for change in (c for group in changes for c in group):
        (chars if change["model"] == "character" else disciplines).add(change["pk"])
    list(Character.objects.select_for_update().filter(pk__in=chars).order_by("pk").values("pk"))
    list(
        Discipline.objects.select_for_update()
        .filter(pk__in=disciplines)
        .order_by("pk")
        .values("pk")
    )


def _revert(changes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Write the before values back, newest first, after checking each field still holds the
    value the change left. Returns the reverting changes."""
    out: list[dict[str, Any]] = []
    touched: dict[tuple[str, int], Any] = {}
    for c in reversed(changes):
        key = (c["model"], c["pk"])
        if key not in touched:
            model = Character if c["model"] == "character" else Discipline
            obj = model.objects.select_for_update().filter(pk=c["pk"]).first()
            if obj is None:
                raise CheckConflict("A sheet this roll changed no longer exists.")
            touched[key] = obj
        obj = touched[key]
        if getattr(obj, c["field"]) != c["after"]:
            raise CheckConflict(
                f"{c['field'].replace('_', ' ')} changed since this roll; change it back first."
            )
        _set(obj, c["model"], c["field"], c["before"], out)
    for (kind, _pk), obj in touched.items():
        if kind == "character":
            _save(obj, None)
        else:
            _save(None, obj)
    return out


def _create(
    *,
    campaign: Campaign,
    character: Character,
    user: Any,
    spec: omg.SheetCheck,
    target: Target,
    aptitude: str,
    roll: int | None,
    rng: random.Random,
    secret: bool,
    note: str,
    seq: int,
    replaces: Check | None = None,
) -> Check:
    result = omg.resolve(spec, roll, rng=rng if roll is None else None)
    check = Check(
        campaign=campaign,
        character=character,
        roller=user if user.is_authenticated else None,
        seq=seq,
        kind=target.kind,
        aptitude=aptitude,
        discipline=target.discipline,
        level=spec.level,
        composite=target.composite,
        pro=spec.pro,
        dif=spec.dif,
        roll=result.roll,
        degree=result.degree.value,
        success=result.success,
        exp=result.exp,
        exp_on=result.exp_on or "",
        fate=result.fate,
        physical=roll is not None,
        secret=secret,
        note=note[:80],
        replaces=replaces,
    )
    # A secret roll's EXP and Fate wait for the GM to reveal it: the player's sheet would
    # otherwise tell them how it went (docs/rules.md, "Secret checks").
    if not secret:
        check.changes = _apply_effects(check)
    check.save()
    signals.announce(check)
    return check


# --- Rolling ---------------------------------------------------------------------------------


def roll_check(
    *,
    user: Any,
    character: Character,
    target: Target,
    rng: random.Random,
    roll: int | None = None,
    secret: bool = False,
    note: str = "",
) -> Check:
    """Roll ``target`` for ``character`` (server dice with ``rng``, or the typed ``roll``) and
    apply its EXP and Fate. Secret rolls are the GM's."""
    require_control(user, character)
    roll = parse_roll(roll)
    if secret and not character.campaign.is_gm(user):
        raise PermissionDenied("Only the GM makes secret rolls.")
    spec, aptitude, _level = spec_for(character, target)
    with transaction.atomic():
        campaign = _lock_campaign(character.campaign)
        return _create(
            campaign=campaign,
            character=character,
            user=user,
            spec=spec,
            target=target,
            aptitude=aptitude,
            roll=roll,
            rng=rng,
            secret=secret,
            note=note,
            seq=_next_seq(campaign),
        )


def latest(campaign: Campaign) -> Check | None:
    """The campaign's latest roll that still counts (undone ones are out of the story)."""
    return (
        Check.objects.filter(campaign=campaign)
        .exclude(status=Check.Status.UNDONE)
        .order_by("-seq")
        .first()
    )


def fate_spenders(user: Any, campaign: Campaign) -> list[Character]:
    """The characters whose Fate ``user`` may spend: their own (the GM: every one)."""
    qs = campaign.characters.order_by("name", "pk")
    if not campaign.is_gm(user):
        qs = qs.filter(owner_id=user.pk)
    return list(qs)


def spend_fate(
    *,
    user: Any,
    check: Check,
    spender: Character,
    action: str,
    rng: random.Random,
    roll: int | None = None,
) -> tuple[Check, Check | None]:
    """1 Fate of ``spender`` re-rolls or revokes ``check`` while it is the campaign's latest
    roll: its EXP and Fate are taken back exactly, then a re-roll is made with the same PvD.
    Returns the revoked check and the re-roll (None for a revoke)."""
    campaign = check.campaign
    require_member(user, campaign)
    roll = parse_roll(roll)
    if check.secret and not campaign.is_gm(user):
        raise PermissionDenied("Only the GM spends Fate on a secret roll.")
    if action not in {a.value for a in omg.FateAction}:
        raise ValidationError({"action": "Spend Fate to reroll or revoke."})
    if spender.campaign_id != campaign.pk:
        raise ValidationError({"spender": "The spender plays in this campaign."})
    if not spender.can_edit(user):
        raise PermissionDenied("Spend the Fate of your own character.")
    with transaction.atomic():
        campaign = _lock_campaign(campaign)
        current = Check.objects.select_for_update().get(pk=check.pk)
        top = latest(campaign)
        if current.status != Check.Status.ACTIVE or top is None or top.pk != current.pk:
            raise CheckConflict("Fate only changes the latest roll, while no later roll exists.")
        _lock_sheets(current.changes, characters=(current.character_id, spender.pk))
        undo = _revert(current.changes)
        payer = Character.objects.select_for_update().get(pk=spender.pk)
        if payer.fate < 1:
            raise CheckConflict(f"{payer.name} has no Fate to spend.")
        _set(payer, "character", "fate", payer.fate - 1, undo)
        _save(payer, None)
        seq = _next_seq(campaign)
        current.status = Check.Status.REVOKED
        current.fate_seq = seq
        current.fate_action = action
        current.fate_spender = payer
        current.fate_changes = undo
        current.save()
        if action == omg.FateAction.REVOKE:
            _tell(campaign, CheckRequest.objects.filter(check_made=current))
            return current, None
        target = Target(
            current.kind,
            current.pro if current.kind == "save" else current.dif,
            current.aptitude,
            current.discipline,
            current.composite,
        )
        spec = omg.SheetCheck(omg.CheckKind(current.kind), current.pro, current.dif, current.level)
        new = _create(
            campaign=campaign,
            character=current.character,
            user=user,
            spec=spec,
            target=target,
            aptitude=current.aptitude,
            roll=roll,
            rng=rng,
            secret=current.secret,
            note=current.note,
            seq=seq + 1,
            replaces=current,
        )
        CheckRequest.objects.filter(check_made=current).update(check_made=new)
        _tell(campaign, CheckRequest.objects.filter(check_made=new))
        return current, new


def undo_latest(*, user: Any, campaign: Campaign) -> Check:
    """The GM takes back the campaign's latest step: a roll (with the Fate spend of a
    re-roll), or a revoke. Returns the check it changed."""
    require_gm(user, campaign)
    with transaction.atomic():
        campaign = _lock_campaign(campaign)
        top = latest(campaign)
        revoked = (
            Check.objects.filter(campaign=campaign, status=Check.Status.REVOKED)
            .order_by("-fate_seq")
            .first()
        )
        if top is None:
            raise CheckConflict("There is no roll to undo.")
        if revoked is not None and revoked.fate_seq and revoked.fate_seq > top.seq:
            _lock_sheets(revoked.fate_changes, characters=(revoked.character_id,))
            _unrevoke(revoked)
            _tell(campaign, CheckRequest.objects.filter(check_made=revoked))
            return revoked
        top = Check.objects.select_for_update().get(pk=top.pk)
        replaced = top.replaces
        _lock_sheets(
            top.changes,
            replaced.fate_changes if replaced is not None else [],
            characters=(top.character_id,),
        )
        _tell(campaign, CheckRequest.objects.filter(check_made=top))
        _revert(top.changes)
        top.status = Check.Status.UNDONE
        top.save(update_fields=["status"])
        if replaced is not None:
            _unrevoke(replaced)
            CheckRequest.objects.filter(check_made=top).update(check_made=replaced)
        else:
            # An answer undone: the player is asked again.
            CheckRequest.objects.filter(check_made=top).update(check_made=None)
        return top


def _unrevoke(check: Check) -> None:
    _revert(check.fate_changes)
    check.status = Check.Status.ACTIVE
    check.fate_seq = None
    check.fate_action = ""
    check.fate_spender = None
    check.fate_changes = []
    check.save()


def reveal(*, user: Any, check: Check) -> Check:
    """The GM shows a secret roll to the table: its EXP and Fate apply now."""
    require_gm(user, check.campaign)
    with transaction.atomic():
        _lock_campaign(check.campaign)
        current = Check.objects.select_for_update().get(pk=check.pk)
        if not current.secret:
            raise CheckConflict("This roll is not secret.")
        current.secret = False
        if current.status == Check.Status.ACTIVE:
            current.changes = _apply_effects(current)
        current.save()
        signals.announce(current)
        _tell(check.campaign, CheckRequest.objects.filter(check_made=current))
        return current


# --- The GM's calls --------------------------------------------------------------------------


def call_checks(
    *,
    user: Any,
    campaign: Campaign,
    characters: Iterable[Character],
    target: Target,
    secret: bool = False,
    note: str = "",
) -> CheckCall:
    """The GM asks ``characters`` (of the campaign) for a check."""
    require_gm(user, campaign)
    chosen = list({c.pk: c for c in characters}.values())
    if not chosen:
        raise ValidationError({"characters": "Ask at least one character."})
    if any(c.campaign_id != campaign.pk for c in chosen):
        raise ValidationError({"characters": "Ask characters of this campaign."})
    for c in chosen:
        spec_for(c, target, lenient=True)  # a sheet the rules refuse is named now
    with transaction.atomic():
        campaign = _lock_campaign(campaign)
        call = CheckCall.objects.create(
            campaign=campaign,
            gm=user,
            kind=target.kind,
            aptitude=target.aptitude,
            discipline=target.discipline,
            composite=target.composite,
            against=target.against,
            secret=secret,
            note=note[:80],
        )
        CheckRequest.objects.bulk_create(CheckRequest(call=call, character=c) for c in chosen)
        _tell(campaign, call.requests.all())
    return call


def target_of(call: CheckCall, aptitude: str = "") -> Target:
    return Target(
        call.kind, call.against, aptitude or call.aptitude, call.discipline, call.composite
    )


def answer(
    *,
    user: Any,
    request: CheckRequest,
    rng: random.Random,
    roll: int | None = None,
    aptitude: str = "",
) -> Check:
    """The asked character's player (or the GM) rolls the called check. A player's secret
    roll is the server's: typed dice would tell them the result."""
    call = request.call
    require_control(user, request.character)
    roll = parse_roll(roll)
    if aptitude and aptitude not in omg.APTITUDE_ABBRS:
        raise ValidationError({"aptitude": f"One of {', '.join(omg.APTITUDE_ABBRS)}."})
    if call.secret and roll is not None and not call.campaign.is_gm(user):
        raise ValidationError({"roll": "A secret roll is rolled by the server."})
    target = target_of(call, aptitude)
    spec, used, _level = spec_for(request.character, target, lenient=True)
    with transaction.atomic():
        campaign = _lock_campaign(call.campaign)
        current = CheckRequest.objects.select_for_update().get(pk=request.pk)
        if current.check_made_id is not None or CheckCall.objects.get(pk=call.pk).closed:
            raise CheckConflict("This check has already been answered.")
        check = _create(
            campaign=campaign,
            character=request.character,
            user=user,
            spec=spec,
            target=target,
            aptitude=used,
            roll=roll,
            rng=rng,
            secret=call.secret,
            note=call.note,
            seq=_next_seq(campaign),
        )
        current.check_made = check
        current.save(update_fields=["check_made"])
        _tell(campaign, CheckRequest.objects.filter(pk=current.pk))
        return check


def close_call(*, user: Any, call: CheckCall) -> CheckCall:
    require_gm(user, call.campaign)
    with transaction.atomic():
        call.closed = True
        call.save(update_fields=["closed"])
        _tell(call.campaign, call.requests.all())
    return call


def pending_requests(user: Any, campaign: Campaign) -> list[CheckRequest]:
    """The open calls waiting for one of ``user``'s own characters."""
    return list(
        CheckRequest.objects.filter(
            call__campaign=campaign,
            call__closed=False,
            check_made=None,
            character__owner_id=user.pk,
        ).select_related("call", "character")
    )


# --- Mana and Chi ----------------------------------------------------------------------------


def change_resource(
    *,
    user: Any,
    character: Character,
    pool: str,
    amount: object,
    cost: str = "",
    note: str = "",
) -> ResourceChange:
    """Spend (a negative ``amount``) or restore Mana or Chi, never below 0 nor above the
    maximum (the daily rest refills both: sheets.services.daily_rest)."""
    require_control(user, character)
    if pool not in ResourceChange.Pool.values:
        raise ValidationError({"pool": "Mana or Chi."})
    if isinstance(amount, bool) or not isinstance(amount, int) or not amount or abs(amount) > 100:
        raise ValidationError({"amount": "A whole number from -100 to 100, not 0."})
    if cost and cost not in ResourceChange.Cost.values:
        raise ValidationError({"cost": "ARC, PWR, PSI or CHI."})
    with transaction.atomic():
        c = Character.objects.select_for_update().get(pk=character.pk)
        maxima = c.maxima()
        if maxima is None:
            raise ValidationError({"pool": "The sheet's aptitudes are incomplete."})
        top = maxima.mna if pool == "mana" else maxima.chi
        before = getattr(c, pool)
        after = before + amount
        name = "Mana" if pool == "mana" else "Chi"
        if after < 0:
            raise ValidationError({"amount": f"{c.name} has only {before} {name}."})
        if after > top:
            raise ValidationError({"amount": f"{name} is at most {top}; it is {before}."})
        setattr(c, pool, after)
        c.version += 1
        c.save(update_fields=[pool, "version", "updated_at"])
        return ResourceChange.objects.create(
            campaign_id=c.campaign_id,
            character=c,
            user=user,
            pool=pool,
            cost=cost,
            amount=amount,
            before=before,
            after=after,
            note=note[:80],
        )
