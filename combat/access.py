"""Who may see or change an encounter. Outsiders get 404 (they must not learn that it
exists); players may look, and act only for their own characters (checked by the services);
only the GM changes the encounter itself (403)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied
from django.http import Http404

from combat.models import CombatLogEntry, Declaration, Encounter, Participant

if TYPE_CHECKING:
    from sheets.users import AnyUser as User


def get_encounter(user: User, pk: int, *, write: bool = False) -> Encounter:
    encounter = (
        Encounter.objects.for_user(user).select_related("campaign", "campaign__gm").filter(pk=pk)
    ).first()
    if encounter is None:
        raise Http404("No such encounter.")
    if write and not encounter.campaign.is_gm(user):
        raise PermissionDenied("Only the campaign's GM can change this encounter.")
    return encounter


def get_declaration(user: User, pk: int) -> Declaration:
    declaration = (
        Declaration.objects.filter(encounter__in=Encounter.objects.for_user(user), pk=pk)
        .select_related("encounter__campaign", "attacker__character", "target__character")
        .first()
    )
    if declaration is None:
        raise Http404("No such attack.")
    return declaration


def get_log_entry(user: User, pk: int) -> CombatLogEntry:
    entry = (
        CombatLogEntry.objects.filter(encounter__in=Encounter.objects.for_user(user), pk=pk)
        .select_related("encounter__campaign", "declaration")
        .first()
    )
    if entry is None:
        raise Http404("No such roll.")
    return entry


def hidden_ids(
    encounter: Encounter, user: User, participants: list[Participant] | None = None
) -> set[int]:
    """Participants whose numbers ``user`` must not see: hidden ones, for everyone but the GM
    (and the character's own player)."""
    if encounter.campaign.is_gm(user):
        return set()
    ps = (
        participants
        if participants is not None
        else encounter.participants.select_related("character")
    )
    return hidden_among(encounter, user, ((p.pk, p.hidden, p.character.owner_id) for p in ps))


def hidden_among(
    encounter: Encounter, user: User, participants: Iterable[tuple[int, bool, int | None]]
) -> set[int]:
    """:func:`hidden_ids`'s rule on ``(id, hidden, owner id)`` of each participant: for the
    record of a finished fight, whose participants are read from its snapshot."""
    if encounter.campaign.is_gm(user):
        return set()
    return {pk for pk, hidden, owner in participants if hidden and owner != user.pk}
