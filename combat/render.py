"""The tracker drawn for the live feed: once per audience after an event
(:class:`LiveTracker`), and the GM's list of who is connected (:func:`presence_panel`). The
read model it draws is combat/tracker.py; the feed that sends it is combat/live/broadcast.py."""

from __future__ import annotations

import re
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

from django.template.loader import render_to_string

from combat import access
from combat.live.presence import present_users
from combat.models import CombatLogEntry, Encounter
from combat.tracker import load_state, view_context
from live.sse import Message

if TYPE_CHECKING:
    from sheets.users import AnyUser

PAGE = "combat/encounter.html"


def presence_context(encounter: Encounter) -> dict[str, Any]:
    """The campaign's players, each with whether a page of theirs follows the encounter."""
    memberships = list(
        encounter.campaign.memberships.select_related("user").order_by("user__username")
    )
    here = present_users(encounter, [m.user_id for m in memberships])
    return {"players": [(m.user, m.user_id in here) for m in memberships]}


def presence_panel(encounter: Encounter, user: AnyUser) -> str | None:
    """Who is connected, for the live feed: the GM's page only."""
    if not encounter.campaign.is_gm(user):
        return None
    return render_to_string(f"{PAGE}#presence", presence_context(encounter))


_LINE_BREAKS = re.compile(r"\s*\n\s*")


class LiveTracker:
    """What the live feed draws after an event: the encounter loaded once
    (:func:`load_state`), then the tracker once per audience. The audiences: the GM; the
    players who own no hidden participant, all sharing one render (hidden numbers masked, each
    player's controls switched on in their browser); and, each on their own, a player whose
    character is hidden in the fight (they see its numbers) or who was in the latest roll
    against a hidden participant (the result card tells them what the others may not read).

    The tracker carries no CSRF token (the page's ``<body hx-headers>`` sends it with every
    htmx request), so one render serves every stream of its audience."""

    def __init__(self, encounter: Encounter) -> None:
        self.state = load_state(encounter)
        self._renders: dict[Hashable, dict[str, str]] = {}
        self._encoded: dict[Hashable, list[str]] = {}
        self.gm_id = encounter.campaign.gm_id
        hidden = self.state.hidden
        secret = set()
        latest = self.state.log[0] if self.state.log else None
        if latest is not None and latest.kind == CombatLogEntry.Kind.ROLL:
            involves = set(latest.involves)
            if involves & hidden:
                secret = involves
        # Players who see more than the shared render shows.
        self.own_audience = {
            p.character.owner_id
            for p in self.state.participants
            if (p.pk in hidden or p.pk in secret) and p.character.owner_id != self.gm_id
        }

    def audience(self, user: AnyUser) -> Hashable:
        if user.pk is not None and user.pk < 0:
            return "display"  # every table display of the fight (combat/display.py)
        if user.pk == self.gm_id or user.pk in self.own_audience:
            return ("viewer", user.pk)
        return "players"

    def hidden_for(self, user: AnyUser) -> set[int]:
        return access.hidden_ids(self.state.encounter, user, self.state.participants)

    def panels(self, user: AnyUser) -> dict[str, str]:
        key = self.audience(user)
        if key == "display" and key not in self._renders:
            from combat.display import board_html

            self._renders[key] = {"tracker": _LINE_BREAKS.sub(" ", board_html(self.state)).strip()}
        if key not in self._renders:
            shared = key == "players"
            context = view_context(self.state, user, shared=shared)
            html = render_to_string(
                f"{PAGE}#tracker", {**context, "user": user, "live_fragment": True}
            )
            # One line: an SSE event gets a "data:" line per line of HTML, each read and
            # joined again by every browser. The tracker holds no <pre> or <textarea>, so a
            # line break and its indent are the same white space as one blank.
            self._renders[key] = {"tracker": _LINE_BREAKS.sub(" ", html).strip()}
        return self._renders[key]

    def encoded(self, user: AnyUser) -> list[str]:
        """The panels as server-sent events, encoded once per audience."""
        key = self.audience(user)
        if key not in self._encoded:
            self._encoded[key] = [
                Message(event, html).encode() for event, html in self.panels(user).items()
            ]
        return self._encoded[key]


def tracker_panels(encounter: Encounter, user: AnyUser) -> dict[str, str]:
    """The tracker panel as the live feed sends it to ``user``: ``{"tracker": html}``."""
    return LiveTracker(encounter).panels(user)
