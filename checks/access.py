"""Who may see or change a check, a call and an answer: the pages, the API and the services
ask here, so a reader gets one answer wherever they ask.

- An **outsider** (not the campaign's GM nor one of its players, or not signed in) gets 404:
  they must not learn that the object exists.
- A **player** reads the campaign's checks but not a secret one of another's character, nor
  one of an NPC the GM keeps to themself (``Check.objects.visible_to``: 404, as to an
  outsider); they roll and answer for their own characters only (403 for another's); a call's
  answers are the GM's (403: the player was asked, or saw the prompt of another, and knows
  the call exists).
- The **GM** reads and does everything in their campaign.

The functions raise Django's ``Http404`` and ``PermissionDenied``, which the pages answer
as they are and DRF's exception handler turns into the API's 404 and 403."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied
from django.http import Http404

from checks.models import Check, CheckCall, CheckRequest
from sheets.models import Campaign, Character

if TYPE_CHECKING:
    from django.contrib.auth import models as auth

    User = auth.User | auth.AnonymousUser


# --- Rules on rows already read -------------------------------------------------------------


def require_member(user: User, campaign: Campaign) -> None:
    """The campaign's GM and players pass; anyone else gets 404."""
    if not campaign.is_gm(user) and not campaign.is_member(user):
        raise Http404("No such campaign.")


def require_gm(user: User, campaign: Campaign) -> None:
    """The GM passes; a player gets 403, anyone else 404."""
    require_member(user, campaign)
    if not campaign.is_gm(user):
        raise PermissionDenied("Only the campaign's GM can do this.")


def require_control(user: User, character: Character) -> None:
    """Players roll for their own characters, the GM for every one; others who may see the
    sheet get 403, who may not 404."""
    if not character.is_visible_to(user):
        raise Http404("No such character.")
    if not character.can_edit(user):
        raise PermissionDenied("Only the character's player and the GM roll for it.")


# --- Rows by id ---------------------------------------------------------------------------------


def get_campaign(user: User, pk: int, *, write: bool = False) -> Campaign:
    """The campaign if ``user`` runs or plays in it; with ``write``, 403 unless they run it."""
    campaign = Campaign.objects.for_user(user).filter(pk=pk).first()
    if campaign is None:
        raise Http404("No such campaign.")
    if write and not campaign.is_gm(user):
        raise PermissionDenied("Only the campaign's GM can do this.")
    return campaign


def get_character(user: User, pk: int, *, write: bool = False) -> Character:
    """The character if ``user`` may see it; with ``write`` (a roll, Mana or Chi), 403 unless
    they play it or run its campaign."""
    character = Character.objects.select_related("campaign", "owner").filter(pk=pk).first()
    if character is None or not character.is_visible_to(user):
        raise Http404("No such character.")
    if write:
        require_control(user, character)
    return character


def get_check(user: User, pk: int) -> Check:
    """The check if ``user`` may read it (``Check.objects.visible_to``), 404 otherwise."""
    check = (
        Check.objects.filter(pk=pk, campaign__in=Campaign.objects.for_user(user))
        .select_related("campaign", "character", "roller")
        .first()
    )
    if check is None or not Check.objects.visible_to(user, check.campaign).filter(pk=pk).exists():
        raise Http404("No such check.")
    return check


def get_call(user: User, pk: int) -> CheckCall:
    """The call if ``user`` runs its campaign; 403 to its players, 404 to anyone else."""
    call = (
        CheckCall.objects.filter(pk=pk, campaign__in=Campaign.objects.for_user(user))
        .select_related("campaign")
        .first()
    )
    if call is None:
        raise Http404("No such call.")
    if not call.campaign.is_gm(user):
        raise PermissionDenied("Only the GM reads a call's answers.")
    return call


def get_request(user: User, pk: int) -> CheckRequest:
    """One character's part of a call, if ``user`` may answer it: the character's player or
    the GM; 403 to another player who may see the character, 404 to anyone else."""
    asked = (
        CheckRequest.objects.filter(pk=pk)
        .select_related("call__campaign", "character__campaign", "check_made")
        .first()
    )
    # One 404 for a missing request and a hidden one: the answer must not tell them apart.
    if asked is None or not asked.character.is_visible_to(user):
        raise Http404("No such call.")
    require_control(user, asked.character)
    return asked
