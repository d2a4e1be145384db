"""Who may see or change what. Every view goes through these helpers.

Outsiders get 404 (they must not learn that an object exists); members who may look but not
change get 403 on a change.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest

from sheets.models import Campaign, Character, attach_rows


def get_campaign_for_user(request: HttpRequest, pk: int, *, write: bool = False) -> Campaign:
    campaign = Campaign.objects.for_user(request.user).select_related("gm").filter(pk=pk).first()
    if campaign is None:
        raise Http404("No such campaign.")
    if write and not campaign.is_gm(request.user):
        raise PermissionDenied("Only the campaign's GM can change it.")
    return campaign


def get_character_for_user(
    request: HttpRequest, pk: int, *, write: bool = False, rows: bool = True
) -> Character:
    """The character if the user may see it (its campaign's GM and players), 404 otherwise;
    with ``write``, 403 unless the user owns it or runs its campaign. ``rows=False`` leaves
    its disciplines, weapons and zones unread (a view that reads them again after its write)."""
    # get(), not first(): one row by its key needs no ORDER BY (the sheet page's hot path).
    # Who may see it is then checked on that one row (Character.is_visible_to), which costs
    # far less than building visible_to()'s subqueries on every request.
    try:
        character = Character.objects.select_related("campaign", "owner").get(pk=pk)
    except Character.DoesNotExist:
        raise Http404("No such character.") from None
    if not character.is_visible_to(request.user):
        raise Http404("No such character.")
    if rows:
        attach_rows([character])
    if write and not character.can_edit(request.user):
        raise PermissionDenied("Only the character's player and the GM can change this sheet.")
    return character
