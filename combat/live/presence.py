"""Who is connected: each open stream marks its viewer present in the cache (any process
sees it when the cache is shared: Redis in a deployment); the GM's page lists them."""

from __future__ import annotations

from django.core.cache import cache
from django.utils import timezone

from combat.models import Encounter
from config.throttling import CACHE_ERRORS, cache_unavailable

PRESENCE_SECONDS = 40  # a viewer counts as connected this long after its last heartbeat


def _presence_key(encounter_id: int, user_id: int) -> str:
    return f"presence:{encounter_id}:{user_id}"


# Presence is a nicety for the GM: with the cache down (Redis restarting), streams and pages
# carry on and the GM sees nobody as connected until it is back (docs/deploy.md).


def mark_present(encounter_id: int, user_id: int) -> None:
    try:
        cache.set(
            _presence_key(encounter_id, user_id), timezone.now().isoformat(), PRESENCE_SECONDS
        )
    except CACHE_ERRORS as exc:
        cache_unavailable(exc)


def mark_absent(encounter_id: int, user_id: int) -> None:
    try:
        cache.delete(_presence_key(encounter_id, user_id))
    except CACHE_ERRORS as exc:
        cache_unavailable(exc)


def present_users(encounter: Encounter, user_ids: list[int]) -> set[int]:
    """Which of ``user_ids`` have an open stream on the encounter (any process, when the cache
    is shared: Redis in a deployment). Nobody, while the cache cannot be reached."""
    try:
        found = cache.get_many([_presence_key(encounter.pk, uid) for uid in user_ids])
    except CACHE_ERRORS as exc:
        cache_unavailable(exc)
        return set()
    return {uid for uid in user_ids if _presence_key(encounter.pk, uid) in found}


def write_presence(touched: dict[int, set[int]], watching: dict[int, set[int]]) -> None:
    """The viewers still watching here are present; the others who left are not (a viewer who
    closes the last of two tabs on this process; one with a tab on another process shows as
    away until that tab's next heartbeat)."""
    now = timezone.now().isoformat()
    here = {
        _presence_key(eid, uid): now
        for eid, uids in watching.items()
        for uid in uids & touched[eid]
    }
    gone = [
        _presence_key(eid, uid)
        for eid, uids in touched.items()
        for uid in uids - watching.get(eid, set())
    ]
    try:
        if here:
            cache.set_many(here, PRESENCE_SECONDS)
        if gone:
            cache.delete_many(gone)
    except CACHE_ERRORS as exc:
        cache_unavailable(exc)
