"""The turn timer on every screen: how long the current turn has left, and the GM's switch.

The turn's time runs from the latest entry that started it (the fight's start, a turn passed or
given) or that set the timer, so switching it on gives the current turn the whole time. The
page is sent the seconds left when it is drawn, not a deadline: a TV whose clock is wrong
still counts down right (static/js/timer.js). Nothing happens when it runs out."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.utils import timezone
from django.views.decorators.http import require_POST

from combat import access, services
from combat.models import CombatLogEntry, Encounter
from combat.views import respond
from sheets.http import AuthedRequest

Kind = CombatLogEntry.Kind
STARTS_A_TURN = (Kind.START, Kind.TURN, Kind.TIMER)
WARN_SECONDS = 10  # the last seconds of a turn: the timer says so


def timer_context(encounter: Encounter) -> dict[str, Any]:
    """``turn_seconds`` and ``turn_left`` (seconds, never below 0) for a running fight with a
    timer and a turn; empty otherwise."""
    seconds = encounter.turn_seconds
    if not seconds or encounter.status != Encounter.Status.RUNNING or not encounter.turn_id:
        return {}
    started = (
        CombatLogEntry.objects.filter(encounter=encounter, kind__in=STARTS_A_TURN)
        .order_by("-pk")
        .values_list("created_at", flat=True)
        .first()
    )
    elapsed = (timezone.now() - started).total_seconds() if started else 0.0
    return {
        "turn_seconds": seconds,
        "turn_left": max(0.0, round(seconds - elapsed, 1)),
        "warn_seconds": WARN_SECONDS,
    }


def _seconds(raw: str) -> int | None:
    raw = raw.strip()
    if raw in ("", "0"):
        return None
    if not raw.isascii() or not raw.isdigit() or len(raw) > 6:
        raise services.CombatError("Seconds per turn: a whole number (empty: no timer).")
    return int(raw)


@login_required
@require_POST
def encounter_timer(request: AuthedRequest, pk: int) -> HttpResponse:
    """The GM switches the turn timer on (seconds per turn) or off (empty)."""
    encounter = access.get_encounter(request.user, pk, write=True)
    return respond(
        request,
        encounter,
        lambda: services.set_turn_timer(
            encounter=encounter,
            seconds=_seconds(request.POST.get("seconds", "")),
            actor=request.user,
        ),
    )
