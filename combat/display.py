"""The table display: a campaign's running fight on a screen the whole table can read (a TV,
a spare laptop), opened by a secret link without logging in.

- The link's secret is random (:data:`SECRET_BYTES` from :mod:`secrets`), never derived from
  ids. A request is looked up by the SHA-256 of the secret it carries, then the stored secret
  is compared with :func:`hmac.compare_digest`: the time an answer takes says nothing about
  how close a guess was.
- The GM makes, replaces and revokes the link (:func:`make_link`, :func:`revoke_link`);
  revoking wakes the broadcasters of the campaign's fights, which check access on every pass,
  so the display's open streams end at once.
- A display sees what a player who owns no hidden fighter sees: it follows the fight as
  :class:`DisplayViewer`, an anonymous viewer whose id is the negative of its link's
  (``combat.live.broadcast.allowed_users`` lets it follow while the link stands). Its board is
  drawn once per pass of the broadcaster for every display of the fight (one more audience of
  ``combat.render.LiveTracker``).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import TYPE_CHECKING, Any

from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.template.loader import render_to_string

from combat.live.push import wake
from combat.models import DisplayLink, Encounter
from sheets.services import lock_campaign

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from sheets.models import Campaign

SECRET_BYTES = 32  # 256 bits: not to be guessed, nor enumerated within any rate limit
BOARD = "combat/display.html#board"


class DisplayViewer(AnonymousUser):
    """A table display as a viewer: anonymous (no controls, every hidden number masked), with
    an id of its own, the negative of its link's, that no user has."""

    def __init__(self, link: DisplayLink) -> None:
        self.id = self.pk = -link.pk  # type: ignore[assignment]  # AnonymousUser's are None
        self.link = link


def digest_of(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def link_for_secret(secret: str) -> DisplayLink | None:
    """The display link whose secret is ``secret``, or None."""
    if not secret or len(secret) > 128:
        return None
    link = DisplayLink.objects.select_related("campaign").filter(digest=digest_of(secret)).first()
    if link is None or not hmac.compare_digest(link.secret.encode(), secret.encode()):
        return None
    return link


def _require_gm(campaign: Campaign, actor: User) -> None:
    if not campaign.is_gm(actor):
        raise PermissionDenied("Only the campaign's GM manages its table display.")


def make_link(*, campaign: Campaign, actor: User) -> DisplayLink:
    """A new display link for ``campaign``; the one it had, if any, stops working."""
    secret = secrets.token_urlsafe(SECRET_BYTES)
    with transaction.atomic():
        # The campaign's lock first (sheets.services.lock_campaign): behind a deletion of the
        # campaign it waits, then a 404, not a link pointing at nothing (a 500 at COMMIT);
        # two links made at once replace one another instead of breaking the one-to-one.
        campaign = lock_campaign(pk=campaign.pk)
        _require_gm(campaign, actor)
        had = DisplayLink.objects.filter(campaign=campaign).delete()[0]
        link = DisplayLink.objects.create(
            campaign=campaign, secret=secret, digest=digest_of(secret)
        )
        if had:
            _close_streams_after_commit(campaign)
    return link


def revoke_link(*, campaign: Campaign, actor: User) -> bool:
    """Turn the campaign's display off: its link stops working and its open streams end."""
    _require_gm(campaign, actor)
    with transaction.atomic():
        deleted = DisplayLink.objects.filter(campaign=campaign).delete()[0] > 0
        if deleted:
            _close_streams_after_commit(campaign)
    return deleted


def _close_streams_after_commit(campaign: Campaign) -> None:
    # Only fights not finished have open displays that follow them (an idle display reloads).
    ids = list(Encounter.objects.filter(campaign=campaign).active().values_list("pk", flat=True))

    def wake_all() -> None:
        for pk in ids:
            wake(pk)

    transaction.on_commit(wake_all)


def current_fight(campaign: Campaign) -> Encounter | None:
    """The fight the display follows: the campaign's running one (the latest started, should
    the GM run two at once)."""
    return (
        Encounter.objects.filter(campaign=campaign, status=Encounter.Status.RUNNING)
        .select_related("campaign")
        .order_by("-pk")
        .first()
    )


def board_context(state: Any) -> dict[str, Any]:
    """What the display's board shows of a loaded fight (``combat.tracker.TableState``): the
    players' view, with who acts next."""
    from combat.tracker import view_context

    context = view_context(state, AnonymousUser(), shared=True)
    rows = context["rows"]
    turn = context["turn"]
    upcoming = None
    if turn is not None:
        index = next((i for i, r in enumerate(rows) if r.p.pk == turn.pk), -1)
        after = rows[index + 1 :] + rows[: index + 1]
        upcoming = next((r.p for r in after if r.p.can_act and r.p.pk != turn.pk), None)
    return {**context, "upcoming": upcoming}


def board_html(state: Any) -> str:
    """The display's board, as the live feed sends it to every display of the fight."""
    return render_to_string(BOARD, {**board_context(state), "live_fragment": True})
