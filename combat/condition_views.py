"""The GM's condition controls on a tracker row: add one (built-in or their own named one,
with a duration) and remove one. Plain forms that redirect back, or the tracker with htmx,
like every control of combat/views.py (kept apart from it: that module is the hot path)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.views.decorators.http import require_POST

from combat import access, services
from combat.views import form_flag, form_int, participant_in, respond
from sheets.http import AuthedRequest


@login_required
@require_POST
def condition_add(request: AuthedRequest, pk: int, participant_pk: int) -> HttpResponse:
    encounter = access.get_encounter(request.user, pk, write=True)

    def act() -> None:
        data = request.POST
        # The select's built-ins, or "other" with the GM's own name typed beside it.
        name = data.get("condition", "")
        if name in ("", "other"):
            name = data.get("label", "")
        if not name.strip():
            raise services.CombatError("Choose a condition or type its name.")
        duration = data.get("duration", "")
        rounds = None
        if duration == "rounds":
            rounds = form_int(data, "rounds")
            if rounds is None or not 1 <= rounds <= 100:
                raise services.CombatError("rounds: a whole number from 1 to 100.")
        services.add_condition(
            participant=participant_in(encounter, participant_pk),
            name=name,
            rounds=rounds,
            until_removed=duration == "removed" or form_flag(data, "until_removed"),
            actor=request.user,
        )

    return respond(request, encounter, act)


@login_required
@require_POST
def condition_remove(request: AuthedRequest, pk: int, participant_pk: int) -> HttpResponse:
    encounter = access.get_encounter(request.user, pk, write=True)
    return respond(
        request,
        encounter,
        lambda: services.remove_condition(
            participant=participant_in(encounter, participant_pk),
            key=request.POST.get("key", ""),
            actor=request.user,
        ),
    )
