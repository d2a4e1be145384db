"""Fate and undo on the campaign's latest roll: 1 Fate re-rolls or revokes it (its EXP and
Fate taken back exactly first); the GM takes back the latest step, a roll or a revoke.

Each locks the campaign, then the check's character and the payer, then the disciplines
its changes name (locking.lock_sheets), before it reverts anything."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from checks.access import require_gm, require_member
from checks.models import Check, CheckRequest
from checks.services.locking import (
    CheckConflict,
    lock_campaign,
    lock_sheets,
    next_seq,
    revert,
    save_sheet,
    set_value,
    tell,
)
from checks.services.rolling import latest, make_check
from checks.services.targets import Target, parse_roll
from rules.engine import omg
from sheets.models import Campaign, Character

if TYPE_CHECKING:
    from sheets.users import User


def fate_spenders(user: User, campaign: Campaign) -> list[Character]:
    """The characters whose Fate ``user`` may spend: their own (the GM: every one)."""
    qs = campaign.characters.order_by("name", "pk")
    if not campaign.is_gm(user):
        qs = qs.filter(owner_id=user.pk)
    return list(qs)


def spend_fate(
    *,
    user: User,
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
        campaign = lock_campaign(campaign)
        current = Check.objects.select_for_update().get(pk=check.pk)
        top = latest(campaign)
        if current.status != Check.Status.ACTIVE or top is None or top.pk != current.pk:
            raise CheckConflict("Fate only changes the latest roll, while no later roll exists.")
        lock_sheets(current.changes, characters=(current.character_id, spender.pk))
        undo = revert(current.changes)
        payer = Character.objects.select_for_update().get(pk=spender.pk)
        if payer.fate < 1:
            raise CheckConflict(f"{payer.name} has no Fate to spend.")
        set_value(payer, "character", "fate", payer.fate - 1, undo)
        save_sheet(payer, None)
        seq = next_seq(campaign)
        current.status = Check.Status.REVOKED
        current.fate_seq = seq
        current.fate_action = action
        current.fate_spender = payer
        current.fate_changes = undo
        current.save()
        if action == omg.FateAction.REVOKE:
            tell(campaign, CheckRequest.objects.filter(check_made=current))
            return current, None
        target = Target(
            current.kind,
            current.pro if current.kind == "save" else current.dif,
            current.aptitude,
            current.discipline,
            current.composite,
        )
        spec = omg.SheetCheck(omg.CheckKind(current.kind), current.pro, current.dif, current.level)
        new = make_check(
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
        tell(campaign, CheckRequest.objects.filter(check_made=new))
        return current, new


def undo_latest(*, user: User, campaign: Campaign) -> Check:
    """The GM takes back the campaign's latest step: a roll (with the Fate spend of a
    re-roll), or a revoke. Returns the check it changed."""
    require_gm(user, campaign)
    with transaction.atomic():
        campaign = lock_campaign(campaign)
        top = latest(campaign)
        revoked = (
            Check.objects.filter(campaign=campaign, status=Check.Status.REVOKED)
            .order_by("-fate_seq")
            .first()
        )
        if top is None:
            raise CheckConflict("There is no roll to undo.")
        if revoked is not None and revoked.fate_seq and revoked.fate_seq > top.seq:
            lock_sheets(revoked.fate_changes, characters=(revoked.character_id,))
            _unrevoke(revoked)
            tell(campaign, CheckRequest.objects.filter(check_made=revoked))
            return revoked
        top = Check.objects.select_for_update().get(pk=top.pk)
        replaced = top.replaces
        lock_sheets(
            top.changes,
            replaced.fate_changes if replaced is not None else [],
            characters=(top.character_id,),
        )
        tell(campaign, CheckRequest.objects.filter(check_made=top))
        revert(top.changes)
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
    revert(check.fate_changes)
    check.status = Check.Status.ACTIVE
    check.fate_seq = None
    check.fate_action = ""
    check.fate_spender = None
    check.fate_changes = []
    check.save()
