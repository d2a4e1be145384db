"""The running fights a user takes part in, for the dashboard and the campaign page: one tap
from either into the fight. The GM sees every running fight of their campaigns; a player those
with one of their characters in it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.db.models import Q

from combat.models import Encounter, Participant

if TYPE_CHECKING:
    from sheets.users import AnyUser


@dataclass(frozen=True)
class RunningFight:
    encounter: Encounter
    round: int
    turn: str | None  # whose turn it is (a name every player may read)
    is_gm: bool


def running_fights(user: AnyUser, *, campaign: Any = None) -> list[RunningFight]:
    """The running fights of ``user`` (of ``campaign`` only, when given), newest first: two
    queries whatever their number."""
    if not user.is_authenticated:
        return []
    encounters = (
        Encounter.objects.filter(status=Encounter.Status.RUNNING)
        .filter(
            Q(campaign__gm=user)
            | Q(
                campaign__memberships__user=user,
                participants__character__owner=user,
            )
        )
        .select_related("campaign")
        .distinct()
        .order_by("-created_at", "-pk")
    )
    if campaign is not None:
        encounters = encounters.filter(campaign=campaign)
    found = list(encounters)
    turns = dict(
        Participant.objects.filter(pk__in=[e.turn_id for e in found if e.turn_id]).values_list(
            "pk", "character__name"
        )
    )
    return [
        RunningFight(
            e, e.round, turns.get(e.turn_id) if e.turn_id else None, e.campaign.gm_id == user.pk
        )
        for e in found
    ]
