"""``check_resolved``: sent once a check's transaction commits (never when it rolls back), for
the webhooks (integrations.hooks) and anything else that follows the table's rolls. A secret
check is sent too, and again when the GM reveals it: listeners redact what they must.

``calls_changed``: sent once a change to the GM's calls commits (a call, an answer, an undo),
naming whose open pages are out of date, for the live feed."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import TYPE_CHECKING

from django.db import transaction
from django.dispatch import Signal

from sheets.models import Campaign

if TYPE_CHECKING:
    from checks.models import Check

check_resolved = Signal()


def announce(check: Check) -> None:
    transaction.on_commit(
        partial(check_resolved.send_robust, sender=type(check), check=check), robust=True
    )


#: Sent once a change to the GM's calls commits, for the live feed (checks.live):
#: ``campaign_id``, and ``news``: for each user whose open pages are out of date, what to
#: fetch again (:data:`PROMPTS`, the calls waiting for their characters; ``call-<id>``, the
#: GM's results of one call). It carries no result, not even a secret roll's: the pages fetch
#: what changed through the views, which check who may see it.
calls_changed = Signal()
PROMPTS = "prompts"


def call_event(call_id: int) -> str:
    return f"call-{call_id}"


def announce_calls(campaign: Campaign, asked: Iterable[tuple[int, int]]) -> None:
    """Once the transaction commits, tell the players of the asked characters (``asked``:
    pairs of call id and owner id) to fetch their prompts, and the GM each call's results."""
    news: dict[int, set[str]] = {}
    for call_id, owner_id in asked:
        news.setdefault(owner_id, set()).add(PROMPTS)
        news.setdefault(campaign.gm_id, set()).add(call_event(call_id))
    if news:
        transaction.on_commit(
            partial(calls_changed.send_robust, sender=Campaign, campaign_id=campaign.pk, news=news),
            robust=True,
        )
