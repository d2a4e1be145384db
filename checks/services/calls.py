"""The GM's calls for checks: a call asks some of the campaign's characters, each asked
player answers (their prompt), the GM closes it."""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import TYPE_CHECKING

from django.core.exceptions import ValidationError
from django.db import transaction

from checks.access import require_control, require_gm
from checks.models import Check, CheckCall, CheckRequest
from checks.services.locking import CheckConflict, lock_campaign, next_seq, tell
from checks.services.rolling import make_check
from checks.services.targets import Target, parse_roll, spec_for, target_of
from rules.engine import omg
from sheets.models import Campaign, Character

if TYPE_CHECKING:
    from sheets.users import User


def call_checks(
    *,
    user: User,
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
        campaign = lock_campaign(campaign)
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
        tell(campaign, call.requests.all())
    return call


def answer(
    *,
    user: User,
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
        campaign = lock_campaign(call.campaign)
        current = CheckRequest.objects.select_for_update().get(pk=request.pk)
        if current.check_made_id is not None or CheckCall.objects.get(pk=call.pk).closed:
            raise CheckConflict("This check has already been answered.")
        check = make_check(
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
            seq=next_seq(campaign),
        )
        current.check_made = check
        current.save(update_fields=["check_made"])
        tell(campaign, CheckRequest.objects.filter(pk=current.pk))
        return check


def close_call(*, user: User, call: CheckCall) -> CheckCall:
    """The GM closes the call: the players not yet answered are no longer asked."""
    require_gm(user, call.campaign)
    with transaction.atomic():
        call.closed = True
        call.save(update_fields=["closed"])
        tell(call.campaign, call.requests.all())
    return call


def pending_requests(user: User, campaign: Campaign) -> list[CheckRequest]:
    """The open calls waiting for one of ``user``'s own characters."""
    return list(
        CheckRequest.objects.filter(
            call__campaign=campaign,
            call__closed=False,
            check_made=None,
            character__owner_id=user.pk,
        ).select_related("call", "character")
    )
