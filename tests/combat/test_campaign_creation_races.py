"""A row created in a campaign while the campaign (or its GM's account) is deleted, on
PostgreSQL.

Each of these writes inserted its row without a lock of the campaign: behind a deletion
holding the campaign, the INSERT's foreign key waited for it and then failed (an
``IntegrityError``, a 500) for a new sheet, a logged roll, a webhook, a prepared encounter, a
check call; a join found the campaign by its code and failed the same way. They now lock
the campaign first (``sheets.services.lock_campaign``; a join finds the campaign by its code
with the lock), so they wait for the deletion and answer a 404 (a join: the unknown code's
400), with nothing left behind. Starting a prepared fight locked the GM's library NPCs
before the campaign while the GM's account deletion reaches the NPCs last: the two
deadlocked; both now take the one documented order (docs/architecture.md).

Held as tests/combat/test_fight_deletion_races.py holds its races: one side stopped inside
its transaction until the other is seen waiting for a lock in ``pg_stat_activity``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from typing import Any

import pytest
from django.db import models
from django.db.models.signals import post_save

from checks.models import CheckCall
from combat.models import DisplayLink, Encounter
from integrations.models import WebhookEndpoint
from prep import services as prep_services
from prep.models import LibraryNpc, PreparedEncounter, PreparedGroup
from prep.starter import STARTERS
from rules.models import DiceRoll
from sheets.models import ApiToken, Campaign, Character, Membership
from tests.factories import Fight, make_fight
from tests.integrations.receiver import Receiver, start
from tests.locking import (
    DELETIONS,
    WAIT,
    Outcomes,
    api,
    deletion_held,
    join,
    nothing_left,
    sheet_ids,
    start_thread,
    wait_for_a_lock_waiter,
)
from tests.locking import web as _new_web

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


_logged_in: dict[int, Any] = {}


def _web(user: Any) -> Any:
    """The user's page client, logged in once before anything is held: logging in writes the
    user's row (last_login), which the account's deletion holds."""
    if user.pk not in _logged_in:
        _logged_in[user.pk] = _new_web(user)
    return _logged_in[user.pk]


@pytest.fixture
def fight(table: Any) -> Iterator[Fight]:
    _logged_in.clear()
    for user in (table.gm, table.player, table.outsider):
        _web(user)
    yield make_fight(table)
    _logged_in.clear()


@pytest.fixture
def hook_url() -> Iterator[Callable[[], str]]:
    """hook_url() -> a webhook address the app accepts (the tests' receiver; nothing is sent to
    it). Started on first use: only the webhook creations need it, and stopping a receiver took
    0.3 s of each test's teardown (its serve_forever looks for the stop twice a second)."""
    started: list[tuple[Receiver, ThreadingHTTPServer]] = []

    def url() -> str:
        if not started:
            started.append(start())
        return started[0][0].url

    yield url
    for _, server in started:
        server.shutdown()
        server.server_close()


@dataclass(frozen=True)
class Creation:
    """A write that makes a ``model`` row in the campaign (``field``: its campaign's id),
    as its user sends it; ``refused``: its answer once the campaign is gone."""

    send: Callable[[Fight, Callable[[], str]], Any]
    model: type[models.Model]
    refused: int = 404
    field: str = "campaign_id"


#: A whole sheet as the creation page takes it.
BRANNOC = {"name": "Brannoc", "archetype": "warrior", "foc": 2, "spd": 3, "skl": 3}
BRANNOC.update({"vgr": 4, "nrv": 2, "chr": 1, "svy": 2})


def _campaign(f: Fight) -> int:
    return int(f.table.campaign.pk)


CREATIONS: dict[str, Creation] = {
    "character page": Creation(
        lambda f, _: _web(f.table.player).post(
            f"/campaigns/{_campaign(f)}/characters/new/", BRANNOC
        ),
        Character,
    ),
    "character API": Creation(
        lambda f, _: api(f.table.player).post(
            "/api/characters/", {"campaign": _campaign(f), "name": "Late"}, format="json"
        ),
        Character,
    ),
    "dice page": Creation(
        lambda f, _: _web(f.table.player).post(
            f"/dice/campaigns/{_campaign(f)}/ore/",
            {"pool": 7, "penalty": 0, "difficulty": 0, "dice": "3 4 4 4 6 8 10", "action": "read"},
        ),
        DiceRoll,
    ),
    "dice API": Creation(
        lambda f, _: api(f.table.player).post(
            "/api/rules/omg/check/",
            {"pro": 70, "dif": 20, "roll": 43, "campaign": _campaign(f)},
            format="json",
        ),
        DiceRoll,
    ),
    # An unknown code is a form's error or a 400: so is the code of a deleted campaign.
    "join page": Creation(
        lambda f, _: _web(f.table.outsider).post(
            "/campaigns/join/", {"code": f.table.campaign.join_code}
        ),
        Membership,
        refused=200,
    ),
    "join API": Creation(
        lambda f, _: api(f.table.outsider).post(
            "/api/campaigns/join/", {"code": f.table.campaign.join_code}, format="json"
        ),
        Membership,
        refused=400,
    ),
    "webhook page": Creation(
        lambda f, url: _web(f.table.gm).post(
            f"/campaigns/{_campaign(f)}/webhooks/",
            {"url": url(), "events": ["roll.resolved"], "format": "json"},
        ),
        WebhookEndpoint,
    ),
    "webhook API": Creation(
        lambda f, url: api(f.table.gm).post(
            f"/api/campaigns/{_campaign(f)}/webhooks/",
            {"url": url(), "events": ["roll.resolved"]},
            format="json",
        ),
        WebhookEndpoint,
    ),
    "prepared page": Creation(
        lambda f, _: _web(f.table.gm).post(
            f"/campaigns/{_campaign(f)}/prepared/", {"name": "Late"}
        ),
        PreparedEncounter,
    ),
    "prepared API": Creation(
        lambda f, _: api(f.table.gm).post(
            f"/api/campaigns/{_campaign(f)}/prepared/", {"name": "Late"}, format="json"
        ),
        PreparedEncounter,
    ),
    "display link page": Creation(
        lambda f, _: _web(f.table.gm).post(f"/campaigns/{_campaign(f)}/display/new/"),
        DisplayLink,
    ),
    "check call API": Creation(
        lambda f, _: api(f.table.gm).post(
            "/api/check-calls/",
            {
                "campaign": _campaign(f),
                "everyone": True,
                "kind": "composite",
                "composite": "STM",
                "against": "Formidable",
            },
            format="json",
        ),
        CheckCall,
    ),
}


def _left(creation: Creation, campaign: int) -> list[Any]:
    return list(creation.model._default_manager.filter(**{creation.field: campaign}))


@pytest.mark.parametrize("how", ["campaign API", "GM's account"])
@pytest.mark.parametrize("what", sorted(CREATIONS))
def test_a_row_created_behind_the_deletion_of_its_campaign_is_refused(fight, hook_url, what, how):
    """The INSERT's foreign key waited for the deletion holding the campaign, then failed."""
    creation = CREATIONS[what]
    sheets, campaign = sheet_ids(fight), _campaign(fight)
    _, deleted = DELETIONS[how]
    outcomes = Outcomes()
    with deletion_held(fight, how, outcomes) as release:
        creator = start_thread(outcomes.run, "create", lambda: creation.send(fight, hook_url))
        wait_for_a_lock_waiter(creator)
        release.set()
    join(creator)
    assert outcomes.errors == []
    assert outcomes.of("delete") == [deleted]
    assert outcomes.of("create") == [creation.refused]
    assert _left(creation, campaign) == []
    nothing_left(fight, sheets)


@contextmanager
def _creation_held(
    creation: Creation, fight: Fight, hook_url: Callable[[], str], outcomes: Outcomes
) -> Iterator[threading.Event]:
    """The creation, stopped inside its transaction once its row is saved, until the event."""
    reached, release = threading.Event(), threading.Event()
    creator: list[threading.Thread] = []

    def pause(sender: Any, **kwargs: Any) -> None:
        if threading.current_thread() in creator and not reached.is_set():
            reached.set()
            assert release.wait(WAIT)

    post_save.connect(pause, sender=creation.model, dispatch_uid="test_pause_creation")
    try:
        creator.append(start_thread(outcomes.run, "create", lambda: creation.send(fight, hook_url)))
        assert reached.wait(WAIT)
        yield release
    finally:
        release.set()
        join(*creator)
        post_save.disconnect(sender=creation.model, dispatch_uid="test_pause_creation")


#: What each creation answers when it is done.
CREATED = {
    "character page": 302,
    "character API": 201,
    "dice page": 302,
    "dice API": 200,
    "join page": 302,
    "join API": 201,
    "webhook page": 302,
    "webhook API": 201,
    "prepared page": 302,
    "prepared API": 201,
    "check call API": 201,
    "display link page": 302,
}


@pytest.mark.parametrize("what", sorted(CREATIONS))
def test_a_deletion_behind_a_creation_waits_and_deletes_its_row_too(fight, hook_url, what):
    creation = CREATIONS[what]
    sheets, campaign = sheet_ids(fight), _campaign(fight)
    _, deleted = DELETIONS["campaign API"]
    outcomes = Outcomes()
    with _creation_held(creation, fight, hook_url, outcomes) as release:
        deleter = start_thread(outcomes.run, "delete", lambda: DELETIONS["campaign API"][0](fight))
        wait_for_a_lock_waiter(deleter)
        release.set()
        join(deleter)
    assert outcomes.errors == []
    assert outcomes.of("create") == [CREATED[what]]
    assert outcomes.of("delete") == [deleted]
    assert _left(creation, campaign) == []
    nothing_left(fight, sheets)


# --- Starting a prepared fight, or putting library NPCs into one --------------------------


def _prepared(fight: Fight) -> PreparedEncounter:
    """A prepared fight in the campaign: two of the GM's starter NPCs and Ysolde."""
    gm = fight.table.gm
    npcs = prep_services.add_starter_set(owner=gm)[:2]
    prepared = PreparedEncounter.objects.create(campaign=fight.table.campaign, name="Late")
    prepared.expected.set([fight.ysolde.character])
    PreparedGroup.objects.bulk_create(PreparedGroup(prepared=prepared, npc=n) for n in npcs)
    return prepared


def _start(fight: Fight, prepared: PreparedEncounter) -> Any:
    return api(fight.table.gm).post(f"/api/prepared/{prepared.pk}/start/")


def _put_npcs(fight: Fight, npc: LibraryNpc) -> Any:
    return api(fight.table.gm).post(
        f"/api/encounters/{fight.encounter.pk}/library/",
        {"picks": [{"npc": npc.pk, "count": 2}]},
        format="json",
    )


@pytest.mark.parametrize("how", sorted(DELETIONS))
@pytest.mark.parametrize("what", ["start", "put NPCs"])
def test_prep_behind_a_deletion_waits_and_is_not_found(fight, how, what):
    """The prep locked the GM's library NPCs, then waited for the campaign; the GM's account
    deletion, holding the campaign, then waited for the NPCs: a deadlock (a 500)."""
    prepared = _prepared(fight)
    npc = prepared.groups.order_by("pk").first().npc
    gm, campaign, sheets = fight.table.gm.pk, _campaign(fight), sheet_ids(fight)
    send = {"start": lambda: _start(fight, prepared), "put NPCs": lambda: _put_npcs(fight, npc)}
    _, deleted = DELETIONS[how]
    outcomes = Outcomes()
    with deletion_held(fight, how, outcomes) as release:
        creator = start_thread(outcomes.run, "create", send[what])
        wait_for_a_lock_waiter(creator)
        release.set()
    join(creator)
    assert outcomes.errors == []
    assert outcomes.of("delete") == [deleted]
    assert outcomes.of("create") == [404]
    assert not Encounter.objects.filter(campaign_id=campaign).exists()
    assert not Character.objects.filter(campaign_id=campaign).exists()
    assert not Campaign.objects.filter(pk=campaign).exists()
    if how == "GM's account":
        assert not LibraryNpc.objects.filter(owner_id=gm).exists()
    nothing_left(fight, sheets)


@pytest.mark.parametrize("what", ["start", "put NPCs"])
def test_the_gms_account_deletion_behind_prep_waits_and_deletes_everything(fight, what):
    prepared = _prepared(fight)
    npc = prepared.groups.order_by("pk").first().npc
    gm, campaign, sheets = fight.table.gm.pk, _campaign(fight), sheet_ids(fight)
    send = {"start": lambda: _start(fight, prepared), "put NPCs": lambda: _put_npcs(fight, npc)}
    reached, release = threading.Event(), threading.Event()
    creator: list[threading.Thread] = []
    outcomes = Outcomes()

    def pause(sender: Any, **kwargs: Any) -> None:
        # Once the prep has made its first sheet: its locks are all taken.
        if threading.current_thread() in creator and not reached.is_set():
            reached.set()
            assert release.wait(WAIT)

    post_save.connect(pause, sender=Character, dispatch_uid="test_pause_prep")
    try:
        creator.append(start_thread(outcomes.run, "create", send[what]))
        assert reached.wait(WAIT)
        deleter = start_thread(outcomes.run, "delete", lambda: DELETIONS["GM's account"][0](fight))
        wait_for_a_lock_waiter(deleter)
        release.set()
        join(deleter, *creator)
    finally:
        release.set()
        post_save.disconnect(sender=Character, dispatch_uid="test_pause_prep")
    assert outcomes.errors == []
    assert outcomes.of("create") == [201]
    assert outcomes.of("delete") == [302]
    assert not Encounter.objects.filter(campaign_id=campaign).exists()
    assert not Character.objects.filter(campaign_id=campaign).exists()
    assert not LibraryNpc.objects.filter(owner_id=gm).exists()
    nothing_left(fight, sheets)


# --- A library NPC added while its owner's account is deleted ------------------------------


def _library_npc(f: Fight) -> Any:
    stat_block = next(iter(STARTERS.values()))
    return api(f.table.gm).post("/api/library/", stat_block, format="json")


def _starter_set(f: Fight) -> Any:
    return api(f.table.gm).post("/api/library/starter-set/")


def _api_token(f: Fight) -> Any:
    return api(f.table.gm).post("/api/tokens/", {"name": "bot"}, format="json")


def _token_page(f: Fight) -> Any:
    return _web(f.table.gm).post("/account/tokens/", {"name": "bot"})


LIBRARY_WRITES: dict[str, Callable[[Fight], Any]] = {
    "library NPC API": _library_npc,
    "starter set API": _starter_set,
}
# An API token is the user's own row too (sheets.models.lock_user).
TOKEN_WRITES: dict[str, Callable[[Fight], Any]] = {
    "token API": _api_token,
    "token page": _token_page,
}


@pytest.mark.parametrize("what", sorted(LIBRARY_WRITES))
def test_a_library_npc_added_behind_the_gms_account_deletion_is_refused(fight, what):
    """The new NPC was not among what the deletion collected: the starter set's NPCs pointed
    at the deleted account at COMMIT (a 500); a single NPC was committed, then deleted."""
    gm, sheets = fight.table.gm.pk, sheet_ids(fight)
    outcomes = Outcomes()
    with deletion_held(fight, "GM's account", outcomes) as release:
        creator = start_thread(outcomes.run, "create", lambda: LIBRARY_WRITES[what](fight))
        wait_for_a_lock_waiter(creator)
        release.set()
    join(creator)
    assert outcomes.errors == []
    assert outcomes.of("delete") == [302]
    assert outcomes.of("create") == [404]
    assert not LibraryNpc.objects.filter(owner_id=gm).exists()
    nothing_left(fight, sheets)


@pytest.mark.parametrize("what", sorted(TOKEN_WRITES))
def test_an_api_token_made_behind_the_account_deletion_is_refused(fight, what):
    """The token's row pointed at the deleted account at COMMIT: a 500."""
    gm, sheets = fight.table.gm.pk, sheet_ids(fight)
    _web(fight.table.gm)  # logged in before the account's row is held
    outcomes = Outcomes()
    with deletion_held(fight, "GM's account", outcomes) as release:
        creator = start_thread(outcomes.run, "create", lambda: TOKEN_WRITES[what](fight))
        wait_for_a_lock_waiter(creator)
        release.set()
    join(creator)
    assert outcomes.errors == []
    assert outcomes.of("delete") == [302]
    assert outcomes.of("create") == [404]
    assert not ApiToken.objects.filter(user_id=gm).exists()
    nothing_left(fight, sheets)


@pytest.mark.parametrize("what", sorted(LIBRARY_WRITES))
def test_the_gms_account_deletion_behind_a_library_npc_waits_and_deletes_it(fight, what):
    gm, sheets = fight.table.gm.pk, sheet_ids(fight)
    reached, release = threading.Event(), threading.Event()
    creator: list[threading.Thread] = []
    outcomes = Outcomes()

    def pause(sender: Any, **kwargs: Any) -> None:
        if threading.current_thread() in creator and not reached.is_set():
            reached.set()
            assert release.wait(WAIT)

    post_save.connect(pause, sender=LibraryNpc, dispatch_uid="test_pause_library")
    try:
        creator.append(start_thread(outcomes.run, "create", lambda: LIBRARY_WRITES[what](fight)))
        assert reached.wait(WAIT)
        deleter = start_thread(outcomes.run, "delete", lambda: DELETIONS["GM's account"][0](fight))
        wait_for_a_lock_waiter(deleter)
        release.set()
        join(deleter, *creator)
    finally:
        release.set()
        post_save.disconnect(sender=LibraryNpc, dispatch_uid="test_pause_library")
    assert outcomes.errors == []
    assert outcomes.of("create") == [201 if what == "library NPC API" else 200]
    assert outcomes.of("delete") == [302]
    assert not LibraryNpc.objects.filter(owner_id=gm).exists()
    nothing_left(fight, sheets)
