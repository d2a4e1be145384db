"""Who may see the GM's preparation: only the GM. A library belongs to its owner; a prepared
encounter to its campaign's GM. Everyone else, players included, gets 404: they must not
learn that it exists."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.http import Http404

from combat.models import Encounter
from prep.models import LibraryNpc, PreparedEncounter, PreparedGroup
from sheets.models import Campaign

if TYPE_CHECKING:
    from sheets.users import AnyUser


def get_npc(user: AnyUser, pk: int) -> LibraryNpc:
    npc = (
        LibraryNpc.objects.filter(pk=pk, owner_id=user.pk).first()
        if user.is_authenticated
        else None
    )
    if npc is None:
        raise Http404("No such NPC in your library.")
    return npc


def get_campaign_run_by(user: AnyUser, pk: int) -> Campaign:
    campaign = (
        Campaign.objects.filter(pk=pk, gm_id=user.pk).first() if user.is_authenticated else None
    )
    if campaign is None:
        raise Http404("No such campaign of yours.")
    return campaign


def get_prepared(user: AnyUser, pk: int) -> PreparedEncounter:
    prepared = (
        PreparedEncounter.objects.filter(pk=pk, campaign__gm_id=user.pk)
        .select_related("campaign")
        .first()
        if user.is_authenticated
        else None
    )
    if prepared is None:
        raise Http404("No such prepared encounter.")
    return prepared


def get_group(user: AnyUser, pk: int) -> PreparedGroup:
    group = (
        PreparedGroup.objects.filter(pk=pk, prepared__campaign__gm_id=user.pk)
        .select_related("prepared", "npc")
        .first()
        if user.is_authenticated
        else None
    )
    if group is None:
        raise Http404("No such group.")
    return group


def get_encounter_run_by(user: AnyUser, pk: int) -> Encounter:
    """An encounter of a campaign the user runs; everyone else, its players included, 404."""
    encounter = (
        Encounter.objects.filter(pk=pk, campaign__gm_id=user.pk).select_related("campaign").first()
        if user.is_authenticated
        else None
    )
    if encounter is None:
        raise Http404("No such encounter of yours.")
    return encounter
