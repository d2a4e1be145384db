"""A check rolled: from the sheet (:func:`roll_check`), as an answer or a Fate re-roll
(:func:`make_check`, the one place a check row is made), the campaign's latest roll, and the
GM's reveal of a secret one."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied
from django.db import transaction

from checks import signals
from checks.access import require_control, require_gm
from checks.models import Check, CheckRequest
from checks.services.locking import CheckConflict, apply_effects, lock_campaign, next_seq, tell
from checks.services.targets import Target, parse_roll, spec_for
from rules.engine import omg
from sheets.models import Campaign, Character

if TYPE_CHECKING:
    from sheets.users import User


def make_check(
    *,
    campaign: Campaign,
    character: Character,
    user: User,
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
    """Resolve ``spec`` and store the check, with its EXP and Fate applied unless it is
    secret (the campaign's row locked by the caller)."""
    result = omg.resolve(spec, roll, rng=rng if roll is None else None)
    check = Check(
        campaign=campaign,
        character=character,
        roller=user,
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
        check.changes = apply_effects(check)
    check.save()
    signals.announce(check)
    return check


def roll_check(
    *,
    user: User,
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
        campaign = lock_campaign(character.campaign)
        return make_check(
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
            seq=next_seq(campaign),
        )


def latest(campaign: Campaign) -> Check | None:
    """The campaign's latest roll that still counts (undone ones are out of the story)."""
    return (
        Check.objects.filter(campaign=campaign)
        .exclude(status=Check.Status.UNDONE)
        .order_by("-seq")
        .first()
    )


def reveal(*, user: User, check: Check) -> Check:
    """The GM shows a secret roll to the table: its EXP and Fate apply now."""
    require_gm(user, check.campaign)
    with transaction.atomic():
        lock_campaign(check.campaign)
        current = Check.objects.select_for_update().get(pk=check.pk)
        if not current.secret:
            raise CheckConflict("This roll is not secret.")
        current.secret = False
        if current.status == Check.Status.ACTIVE:
            current.changes = apply_effects(current)
        current.save()
        signals.announce(current)
        tell(check.campaign, CheckRequest.objects.filter(check_made=current))
        return current
