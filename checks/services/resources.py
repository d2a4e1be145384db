"""Mana and Chi spent or restored from the sheet, each change kept in the campaign's log."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core.exceptions import ValidationError
from django.db import transaction

from checks.access import require_control
from checks.models import ResourceChange
from sheets.models import Character

if TYPE_CHECKING:
    from sheets.users import User


def change_resource(
    *,
    user: User,
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
