"""A library sheet made for a fight goes with its encounter."""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_delete, pre_delete

from combat.models import Encounter
from sheets.models import Character


def _remember(sender: Any, instance: Encounter, **kwargs: Any) -> None:
    instance._prep_sheets = list(  # type: ignore[attr-defined]  # read by the post_delete handler
        Character.objects.filter(fight_sheet__encounter=instance).values_list("pk", flat=True)
    )


def _delete_sheets(sender: Any, instance: Encounter, **kwargs: Any) -> None:
    pks = getattr(instance, "_prep_sheets", None)
    if pks:
        # Copies first: their template is their copied_from (SET_NULL), no matter the order.
        Character.objects.filter(pk__in=pks).delete()


def connect() -> None:
    pre_delete.connect(_remember, sender=Encounter, dispatch_uid="prep_remember_sheets")
    post_delete.connect(_delete_sheets, sender=Encounter, dispatch_uid="prep_delete_sheets")
