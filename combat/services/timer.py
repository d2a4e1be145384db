"""The turn timer: seconds per turn that every screen counts down. It only shows: nothing in
the fight happens when it runs out (combat/timer.py draws it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction

from combat.models import CombatLogEntry, Encounter
from combat.services.rows import Changes, CombatError, Kind, lock, log

if TYPE_CHECKING:
    from sheets.users import AnyUser as User

MIN_SECONDS = 10
MAX_SECONDS = 600


def set_turn_timer(*, encounter: Encounter, seconds: int | None, actor: User) -> CombatLogEntry:
    """Switch the fight's turn timer on (``seconds`` per turn) or off (None). The current turn
    gets the whole time from now."""
    with transaction.atomic():
        rows = lock(encounter, actor=actor)
        rows.require_gm(actor)
        if rows.encounter.status == Encounter.Status.FINISHED:
            raise CombatError("The fight is over: it has no turns left to time.")
        if seconds is not None and not MIN_SECONDS <= seconds <= MAX_SECONDS:
            raise CombatError(
                f"A turn lasts from {MIN_SECONDS} to {MAX_SECONDS} seconds (empty: no timer)."
            )
        ch = Changes()
        ch.set(rows.encounter, "turn_seconds", seconds)
        if not ch:
            raise CombatError("The turn timer is already set so.")
        text = f"Turn timer: {seconds} seconds a turn." if seconds else "Turn timer off."
        return log(rows, Kind.TIMER, actor=actor, changes=ch, text=text)
