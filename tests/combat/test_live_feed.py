"""The live feed: events after commit only, per-viewer rendering, replay, the SSE stream."""

from __future__ import annotations

import asyncio
import re
import threading

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.layers import get_channel_layer
from django.db import connection, transaction
from django.test import AsyncClient
from django.test.utils import CaptureQueriesContext

from combat import services
from combat.live import broadcast, presence, push, stream
from combat.models import CombatLogEntry, Encounter
from live import pusher, sse
from tests import polling
from tests.combat.helpers import received
from tests.factories import make_ysolde
from tests.feed import events, stream_text, stream_texts

pytestmark = pytest.mark.django_db


def listen(encounter_id: int) -> str:
    layer = get_channel_layer()
    assert pusher.flush_pushes()  # what was committed before listening is not heard
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(push.group_name(encounter_id), channel)
    return channel


def test_it_pushes_each_entry_once_after_commit(fight, django_capture_on_commit_callbacks):
    channel = listen(fight.encounter.pk)
    with django_capture_on_commit_callbacks(execute=True):
        entry = services.next_turn(encounter=fight.encounter, actor=fight.table.gm)
    assert received(channel) == [{"type": "encounter.entry", "id": entry.pk}]


def test_the_push_leaves_the_request_at_once_and_goes_out_in_order(
    fight, api_for, monkeypatch, django_capture_on_commit_callbacks
):
    # A channel layer that is slow to send (Redis across the network): the requests answer
    # without waiting for it, and the encounter's pushes still go out in the entries' order.
    layer = get_channel_layer()
    gate = threading.Event()
    sent: list[int] = []

    async def slow_send(group: str, message: dict) -> None:
        await asyncio.get_running_loop().run_in_executor(None, gate.wait, 5)
        sent.append(message["id"])

    monkeypatch.setattr(layer, "group_send", slow_send)
    gm = api_for(fight.table.gm)
    for _ in range(3):
        with django_capture_on_commit_callbacks(execute=True):
            r = gm.post(f"/api/encounters/{fight.encounter.pk}/next-turn/")
        assert r.status_code == 200
    assert sent == []  # three requests answered while the first push is still waiting
    gate.set()
    assert pusher.flush_pushes()
    entries = list(fight.encounter.log.order_by("-seq").values_list("pk", flat=True)[:3])
    assert sent == entries[::-1]


def test_it_pushes_nothing_when_the_action_rolls_back(fight, django_capture_on_commit_callbacks):
    channel = listen(fight.encounter.pk)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        try:
            with transaction.atomic():
                services.next_turn(encounter=fight.encounter, actor=fight.table.gm)
                raise RuntimeError("the request failed after the service")
        except RuntimeError:
            pass
    assert callbacks == []
    assert received(channel) == []


def test_a_hidden_npcs_numbers_never_reach_a_player(fight):
    gm, player = fight.table.gm, fight.table.player
    before = CombatLogEntry.objects.filter(encounter=fight.encounter).latest("pk").pk
    zone = fight.thug.character.zones.get(name="chest")
    services.adjust_zone(encounter=fight.encounter, zone=zone, amount=5, actor=gm)
    gm_feed, player_feed = (events(t) for t in stream_texts(fight.encounter, [gm, player], before))
    gm_view = "".join(m.data for m in gm_feed)
    player_view = "".join(m.data for m in player_feed)
    assert "Salvager Thug #1" in gm_view
    assert "5" in gm_view
    assert gm_view != player_view
    # The player reads that the NPC was hurt, never by how much nor how it stands.
    import html
    import re

    def texts(view: str) -> str:
        return re.sub(r"#\d+", "", html.unescape(re.sub(r"<[^>]+>", "", view)))

    assert "5" in texts(gm_view)
    player_entries = "".join(m.data for m in player_feed if m.event == "entry")
    assert not re.search(r"\d", texts(player_entries))
    # The tracker drawn for the player keeps the thug's vitality and zones out.
    (tracker,) = [m.data for m in player_feed if m.event == "tracker"]
    thug = fight.thug.pk
    assert f'data-testid="vit-{thug}"' not in tracker
    assert f'data-testid="zone-{zone.pk}"' not in tracker
    assert "numbers hidden by the GM" in tracker
    (gm_tracker,) = [m.data for m in gm_feed if m.event == "tracker"]
    assert f'data-testid="zone-{zone.pk}"' in gm_tracker


def test_the_panels_show_the_turn_as_it_is_now_not_as_the_stream_opened(fight):
    # A stream keeps the Encounter it loaded when the page connected; the fight moves on.
    opened = Encounter.objects.get(pk=fight.encounter.pk)
    seen = broadcast.latest_entry_id(opened)
    assert opened.turn_id == fight.ysolde.pk
    services.next_turn(encounter=fight.encounter, actor=fight.table.gm)
    services.next_turn(encounter=fight.encounter, actor=fight.table.gm)
    feed = events(stream_text(opened, fight.table.player, seen))
    (tracker,) = [m.data for m in feed if m.event == "tracker"]
    assert 'Round <span data-testid="round">2</span>' in tracker
    assert f'<span data-testid="turn">{fight.ysolde.name}</span>' in tracker
    assert 'data-testid="status">Running<' in tracker


def test_it_shows_a_start_to_screens_that_connected_before_it(table):
    encounter, _ = services.create_encounter(campaign=table.campaign, name="Later", actor=table.gm)
    ysolde = make_ysolde(table.campaign, table.player)
    services.add_participants(encounter=encounter, characters=[ysolde], actor=table.gm)
    opened = Encounter.objects.get(pk=encounter.pk)
    seen = broadcast.latest_entry_id(opened)
    services.start_encounter(encounter=encounter, actor=table.gm)
    (tracker,) = [
        m.data for m in events(stream_text(opened, table.gm, seen)) if m.event == "tracker"
    ]
    assert 'data-testid="status">Running<' in tracker
    assert "Start: roll initiative" not in tracker
    assert 'data-testid="next-turn"' in tracker


def test_it_replays_the_entries_after_the_last_seen_id(fight):
    gm = fight.table.gm
    seen = CombatLogEntry.objects.filter(encounter=fight.encounter).latest("pk").pk
    first = services.next_turn(encounter=fight.encounter, actor=gm)
    second = services.next_turn(encounter=fight.encounter, actor=gm)
    messages = events(stream_text(fight.encounter, gm, seen))
    assert [m.id for m in messages if m.event == "entry"] == [first.pk, second.pk]
    assert stream_text(fight.encounter, gm, second.pk) == ""


def test_a_gap_too_long_to_replay_resets_the_page(fight, monkeypatch):
    monkeypatch.setattr(broadcast, "REPLAY_LIMIT", 2)
    gm = fight.table.gm
    seen = CombatLogEntry.objects.filter(encounter=fight.encounter).earliest("pk").pk
    messages = events(stream_text(fight.encounter, gm, seen))
    latest = CombatLogEntry.objects.filter(encounter=fight.encounter).latest("pk").pk
    assert messages[0].event == "reset" and messages[0].id == latest
    assert not [m for m in messages if m.event == "entry"]


def test_an_sse_message_is_well_formed():
    text = sse.Message("entry", "<li>one</li>\n<li>two</li>", 7).encode()
    assert text == "event: entry\nid: 7\ndata: <li>one</li>\ndata: <li>two</li>\n\n"


@pytest.mark.django_db(transaction=True)
def test_the_stream_sends_new_entries_to_an_open_page(table):

    ysolde = make_ysolde(table.campaign, table.player)
    encounter, _ = services.create_encounter(campaign=table.campaign, name="Ambush", actor=table.gm)
    services.add_participants(encounter=encounter, characters=[ysolde], actor=table.gm)

    async def scenario() -> list[str]:
        client = AsyncClient()
        await client.aforce_login(table.player)
        response = await client.get(f"/encounters/{encounter.pk}/events/")
        assert response["Content-Type"] == "text/event-stream"
        chunks = aiter(response.streaming_content)  # type: ignore[attr-defined]  # a streaming response
        hello = (await anext(chunks)).decode()
        # The GM acts in another request while the player's page is open.
        await sync_to_async(services.start_encounter)(encounter=encounter, actor=table.gm)
        entry = (await asyncio.wait_for(anext(chunks), 5)).decode()
        await chunks.aclose()
        return [hello, entry]

    hello, entry = async_to_sync(scenario)()
    assert hello.startswith("event: hello\nid: ")
    assert "event: entry" in entry


@pytest.mark.django_db(transaction=True)
def test_a_page_with_nothing_to_catch_up_on_is_greeted_at_once(table):
    ysolde = make_ysolde(table.campaign, table.player)
    encounter, _ = services.create_encounter(campaign=table.campaign, name="Ambush", actor=table.gm)
    services.add_participants(encounter=encounter, characters=[ysolde], actor=table.gm)
    seen = broadcast.latest_entry_id(encounter)

    async def scenario() -> str:
        client = AsyncClient()
        await client.aforce_login(table.player)
        response = await client.get(f"/encounters/{encounter.pk}/events/?after={seen}")
        chunks = aiter(response.streaming_content)  # type: ignore[attr-defined]  # a streaming response
        # Well before the first heartbeat (15 s): a player has no presence list to send.
        first = (await asyncio.wait_for(anext(chunks), 2)).decode()
        await chunks.aclose()
        return first

    assert async_to_sync(scenario)() == f"event: hello\nid: {seen}\ndata: \n\n"


def test_outsiders_and_anonymous_get_no_stream(fight, client_for):
    url = f"/encounters/{fight.encounter.pk}/events/"
    assert client_for(None).get(url).status_code == 403
    assert client_for(fight.table.outsider).get(url).status_code == 404


@pytest.mark.django_db(transaction=True)
def test_the_gm_hears_when_a_player_connects_and_leaves(table):

    ysolde = make_ysolde(table.campaign, table.player)
    encounter, _ = services.create_encounter(campaign=table.campaign, name="Ambush", actor=table.gm)
    url = f"/encounters/{encounter.pk}/events/"

    async def scenario() -> tuple[str, str, str]:
        gm, player = AsyncClient(), AsyncClient()
        await gm.aforce_login(table.gm)
        await player.aforce_login(table.player)
        gm_chunks = aiter((await gm.get(url)).streaming_content)  # type: ignore[attr-defined]  # a streaming response
        await anext(gm_chunks)  # hello
        await asyncio.wait_for(anext(gm_chunks), 5)  # the GM's own arrival
        player_chunks = aiter((await player.get(url)).streaming_content)  # type: ignore[attr-defined]  # a streaming response
        await anext(player_chunks)
        # The player's page waits for news; closing it cancels that wait, as a disconnect does.
        waiting = asyncio.ensure_future(anext(player_chunks))
        came = (await asyncio.wait_for(anext(gm_chunks), 5)).decode()
        waiting.cancel()
        left = (await asyncio.wait_for(anext(gm_chunks), 5)).decode()
        # The player's stream never carries the GM's list.
        player_chunks = aiter((await player.get(url)).streaming_content)  # type: ignore[attr-defined]  # a streaming response
        await anext(player_chunks)
        await sync_to_async(services.add_participants)(
            encounter=encounter, characters=[ysolde], actor=table.gm
        )
        player_next = (await asyncio.wait_for(anext(player_chunks), 5)).decode()
        await player_chunks.aclose()
        await gm_chunks.aclose()
        return came, left, player_next

    came, left, player_next = async_to_sync(scenario)()
    assert came.startswith("event: presence\n")
    assert 'data-testid="presence-player"' in came and "connected" in came
    assert left.startswith("event: presence\n") and "away" in left and "connected" not in left
    assert "presence" not in player_next


@pytest.mark.django_db(transaction=True)
def test_a_viewer_arriving_is_news_to_the_gms_streams_only(table):
    """n phones connecting cost n messages, not n squared: the players' streams are not told."""
    encounter, _ = services.create_encounter(campaign=table.campaign, name="Ambush", actor=table.gm)
    layer = get_channel_layer()
    everyone = listen(encounter.pk)  # stands for a player's stream
    gms = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(push.presence_group_name(encounter.pk), gms)
    url = f"/encounters/{encounter.pk}/events/"

    async def connect_and_leave() -> None:
        player = AsyncClient()
        await player.aforce_login(table.player)
        chunks = aiter((await player.get(url)).streaming_content)  # type: ignore[attr-defined]  # a streaming response
        await anext(chunks)  # hello: connected
        await stream.presence_news().flushed()
        # Leaving cancels the stream's wait for news, as a disconnect does.
        waiting = asyncio.ensure_future(anext(chunks))
        await polling.waiting_inside(chunks)
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)
        await stream.presence_news().flushed()

    async_to_sync(connect_and_leave)()
    assert [m["type"] for m in received(gms)] == [push.PRESENCE, push.PRESENCE]
    assert received(everyone) == []


def test_the_presence_panel_is_the_gms_alone(fight):
    presence.mark_present(fight.encounter.pk, fight.table.player.pk)
    from combat.render import presence_panel

    html = presence_panel(fight.encounter, fight.table.gm)
    assert html is not None and "player" in html and "connected" in html
    assert presence_panel(fight.encounter, fight.table.player) is None
    presence.mark_absent(fight.encounter.pk, fight.table.player.pk)
    assert "away" in (presence_panel(fight.encounter, fight.table.gm) or "")


def test_it_serves_the_gms_page_and_streams_while_the_cache_is_down(fight, client_for, cache_down):
    """Presence lives in the cache (Redis in a deployment): while it is down, the GM's page
    answers and lists nobody as connected, and a stream can still mark its viewer present."""
    presence.mark_present(fight.encounter.pk, fight.table.player.pk)
    presence.mark_absent(fight.encounter.pk, fight.table.player.pk)
    assert presence.present_users(fight.encounter, [fight.table.player.pk]) == set()
    page = client_for(fight.table.gm).get(fight.encounter.get_absolute_url())
    assert page.status_code == 200


# --- The broadcaster: one load, one render per audience -------------------------------------


def _subscribers(users, after):
    return [broadcast.Subscriber(u, after, None, greeted=True) for u in users]


def test_one_pass_draws_once_per_audience_whatever_the_number_of_pages(
    fight, django_assert_max_num_queries, monkeypatch
):
    from combat import render
    from tests.factories import make_user

    other = make_user("other_player")
    from sheets.models import Membership

    Membership.objects.create(campaign=fight.table.campaign, user=other)
    gm, player = fight.table.gm, fight.table.player
    before = broadcast.latest_entry_id(fight.encounter)
    services.next_turn(encounter=fight.encounter, actor=gm)
    drawn = []
    real = render.view_context  # type: ignore[attr-defined]  # the name render imported
    monkeypatch.setattr(render, "view_context", lambda *a, **k: drawn.append(k) or real(*a, **k))  # type: ignore[func-returns-value]  # then real
    pages = _subscribers([gm, player, other] * 40, before)
    with django_assert_max_num_queries(25):
        out = broadcast.fan_out(fight.encounter, pages)
    # The GM's render and the players' shared one: two, for 120 pages.
    assert len(drawn) == 2
    # The same text, not equal copies, for every page of an audience.
    player_pages = [out[s] for s in pages if s.user != gm]
    assert all(chunks[-1] is player_pages[0][-1] for chunks in player_pages)
    assert all(s.after > before for s in pages)
    # Nothing twice: a second pass with nothing new sends nothing.
    assert all(chunks == [] for chunks in broadcast.fan_out(fight.encounter, pages).values())


def test_the_players_shared_render_carries_no_hidden_numbers_and_no_token(fight):
    gm, player = fight.table.gm, fight.table.player
    thug_zone = fight.zone(fight.thug, "chest")
    before = broadcast.latest_entry_id(fight.encounter)
    services.adjust_zone(encounter=fight.encounter, zone=thug_zone, amount=3, actor=gm)
    out = broadcast.fan_out(fight.encounter, _subscribers([player, gm], before))
    player_text, gm_text = ("".join(chunks) for chunks in out.values())
    assert "csrfmiddlewaretoken" not in player_text + gm_text
    assert f'data-testid="zone-{thug_zone.pk}"' not in player_text
    assert f'data-testid="vit-{fight.thug.pk}"' not in player_text
    assert f'data-testid="zone-{thug_zone.pk}"' in gm_text


def test_the_page_itself_keeps_the_token_in_every_form(fight, client_for):
    page = client_for(fight.table.player).get(fight.encounter.get_absolute_url()).content.decode()
    forms = page.count("<form ")
    assert forms and page.count('name="csrfmiddlewaretoken"') == forms
    assert f'data-viewer="{fight.table.player.pk}"' in page


def test_a_players_own_controls_are_marked_for_them_in_the_shared_render(fight):
    """It is Ysolde's turn: the next-turn and declare controls are the player's, switched on
    in their browser by static/js/live.js; the page drawn for them has them outright."""
    from combat.render import LiveTracker

    player = fight.table.player
    html = LiveTracker(fight.encounter).panels(player)["tracker"]
    assert f'data-testid="next-turn-form" data-owner="{player.pk}" hidden' in html
    assert f'id="declare-panel" open data-owner="{player.pk}" hidden' in html
    # The thug is the GM's: no control of the GM's reaches the players' render.
    assert f'data-owner="{fight.table.gm.pk}"' not in html


def test_an_attack_on_a_players_character_is_docked_for_its_owner_only(fight):
    from combat.render import LiveTracker

    gm, player = fight.table.gm, fight.table.player
    services.next_turn(encounter=fight.encounter, actor=gm)  # the thug's turn
    services.declare_attack(
        encounter=fight.encounter,
        attacker=fight.thug,
        target=fight.ysolde,
        action="fast",
        zone=fight.zone(fight.ysolde, "chest"),
        weapon=fight.weapon(fight.thug),
        actor=gm,
    )
    html = LiveTracker(fight.encounter).panels(player)["tracker"]
    assert 'data-incoming="' in html and f'data-owner="{player.pk}" hidden' in html
    assert f'data-not-owner="{player.pk}"' in html  # the list's copy, for everyone else


def test_a_player_whose_character_is_hidden_gets_a_render_of_their_own(table):
    """A player's own hidden character would be masked in the shared render: they are an
    audience of their own and see its numbers; the other players do not."""
    from combat.render import LiveTracker
    from sheets.models import Membership
    from tests.factories import make_user

    other = make_user("other_player")
    Membership.objects.create(campaign=table.campaign, user=other)
    ysolde = make_ysolde(table.campaign, table.player)
    encounter, _ = services.create_encounter(campaign=table.campaign, name="Ambush", actor=table.gm)
    services.add_participants(encounter=encounter, characters=[ysolde], actor=table.gm)
    services.start_encounter(encounter=encounter, actor=table.gm)
    y = encounter.participants.select_related("character", "encounter__campaign").get()
    # The GM hides the numbers of a player's character (the row menu's "hide numbers").
    services.update_participant(participant=y, hidden=True, actor=table.gm)
    encounter.refresh_from_db()
    tracker = LiveTracker(encounter)
    assert tracker.audience(table.player) != tracker.audience(other) == "players"
    vit = f'data-testid="vit-{y.pk}"'
    assert vit in tracker.panels(table.player)["tracker"]
    assert vit not in tracker.panels(other)["tracker"]
    before = broadcast.latest_entry_id(encounter)
    services.next_turn(encounter=encounter, actor=table.gm)
    out = broadcast.fan_out(encounter, _subscribers([table.player, other], before))
    mine, theirs = ("".join(chunks) for chunks in out.values())
    assert vit in mine and vit not in theirs


def test_a_pass_tells_a_removed_player_they_are_gone_and_the_others_carry_on(fight):
    from sheets.models import Membership

    gm, player = fight.table.gm, fight.table.player
    before = broadcast.latest_entry_id(fight.encounter)
    Membership.objects.filter(user=player).delete()
    services.next_turn(encounter=fight.encounter, actor=gm)
    pages = _subscribers([player, gm], before)
    out = broadcast.fan_out(fight.encounter, pages)
    assert out[pages[0]] == [sse.Message(sse.GONE, "").encode()]
    assert any(c.startswith("event: entry") for c in out[pages[1]])


@pytest.mark.django_db(transaction=True)
def test_many_pages_in_one_process_share_one_broadcaster(table):
    ysolde = make_ysolde(table.campaign, table.player)
    encounter, _ = services.create_encounter(campaign=table.campaign, name="Ambush", actor=table.gm)
    services.add_participants(encounter=encounter, characters=[ysolde], actor=table.gm)

    async def scenario() -> tuple[int, list[str]]:
        streams = []
        for user in (table.gm, table.player) * 5:
            client = AsyncClient()
            await client.aforce_login(user)
            chunks = aiter(
                (await client.get(f"/encounters/{encounter.pk}/events/")).streaming_content  # type: ignore[attr-defined]  # a streaming response
            )
            assert (await asyncio.wait_for(anext(chunks), 5)).decode().startswith("event: hello")
            streams.append(chunks)
        broadcasters = len(broadcast._broadcasters)
        await sync_to_async(services.start_encounter)(encounter=encounter, actor=table.gm)
        got = []
        for chunks in streams:
            text = ""
            while "event: entry" not in text:
                text = (await asyncio.wait_for(anext(chunks), 5)).decode()
            got.append(text)
        for chunks in streams:
            await chunks.aclose()
        return broadcasters, got

    broadcasters, got = async_to_sync(scenario)()
    assert broadcasters == 1
    assert len(got) == 10
    assert not broadcast._broadcasters  # the last page gone, the broadcaster stops


def test_an_entry_committed_during_a_pass_is_sent_once(fight, monkeypatch):
    """The pass reads the new entries once (the newest of them is where every stream is then):
    one committed after that read waits for the next pass instead of being sent now and again
    then."""
    gm = fight.table.gm
    before = broadcast.latest_entry_id(fight.encounter)
    first = services.next_turn(encounter=fight.encounter, actor=gm)
    real = broadcast.hidden_ids  # type: ignore[attr-defined]  # called once the entries are read
    late: list[CombatLogEntry] = []

    def commit_then_hidden(*args, **kwargs):
        if not late:
            late.append(services.next_turn(encounter=fight.encounter, actor=gm))
        return real(*args, **kwargs)

    monkeypatch.setattr(broadcast, "hidden_ids", commit_then_hidden)
    (page,) = _subscribers([gm], before)
    sent = broadcast.fan_out(fight.encounter, [page])[page]
    assert late
    sent += broadcast.fan_out(fight.encounter, [page])[page]
    ids = [int(c.split("\n")[1][4:]) for c in sent if c.startswith("event: entry")]
    assert ids == [first.pk, late[0].pk]


def test_a_pass_loads_at_most_the_replay_window_and_resets_the_far_behind(fight, monkeypatch):
    """A page back from a long gap gets a reset, not hundreds of entries; the entries it
    would have missed are not even loaded. A page one entry behind still gets that entry."""
    monkeypatch.setattr(broadcast, "REPLAY_LIMIT", 3)
    first = broadcast.latest_entry_id(fight.encounter)
    for _ in range(5):
        services.next_turn(encounter=fight.encounter, actor=fight.table.gm)
    near_after = broadcast.latest_entry_id(fight.encounter)
    services.next_turn(encounter=fight.encounter, actor=fight.table.gm)
    far, near = _subscribers([fight.table.gm, fight.table.gm], first)
    near.after = near_after
    with CaptureQueriesContext(connection) as queries:
        out = broadcast.fan_out(fight.encounter, [far, near])
    assert out[far][0].startswith("event: reset")
    entries = [chunk for chunk in out[near] if chunk.startswith("event: entry")]
    assert len(entries) == 1
    loads = [q["sql"] for q in queries.captured_queries if "combat_combatlogentry" in q["sql"]]
    # The window's own query: the newest REPLAY_LIMIT + 1 entries (4 here), no more.
    assert any(re.search(r"LIMIT 4\b", sql) for sql in loads), loads


def test_a_pass_checks_access_in_one_query_however_many_viewers(fight, django_assert_num_queries):
    """A table where every page is a different player: who may still follow the encounter is
    one query for all of them, not one per viewer."""
    from sheets.models import Membership
    from tests.factories import make_user

    gm = fight.table.gm
    players = [fight.table.player]
    for i in range(12):
        players.append(make_user(f"viewer{i}"))
        Membership.objects.create(campaign=fight.table.campaign, user=players[-1])
    outsider = fight.table.outsider
    few = _subscribers([gm, players[0]], broadcast.latest_entry_id(fight.encounter))
    many = _subscribers([gm, *players, outsider], broadcast.latest_entry_id(fight.encounter))
    services.next_turn(encounter=fight.encounter, actor=gm)
    with CaptureQueriesContext(connection) as with_few:
        broadcast.fan_out(fight.encounter, few)
    with django_assert_num_queries(len(with_few)):
        out = broadcast.fan_out(fight.encounter, many)
    assert out[many[-1]] == [sse.Message(sse.GONE, "").encode()]  # not in the campaign
    assert all(any(c.startswith("event: entry") for c in out[s]) for s in many[:-1])


@pytest.mark.django_db(transaction=True)
def test_a_burst_of_messages_during_a_pass_is_served_by_one_next_pass(table):
    """A hundred pages opening at once announce themselves a hundred times: the messages that
    come while a pass runs are served by one pass after it, not one pass each, so an entry
    committed meanwhile does not queue behind them."""
    encounter, _ = services.create_encounter(campaign=table.campaign, name="Crowd", actor=table.gm)

    async def scenario() -> list[bool]:
        feed = broadcast.Broadcaster(encounter)
        passes: list[bool] = []
        release = asyncio.Event()

        async def slow_pass(*, presence: bool = False, heartbeat: bool = False) -> None:
            passes.append(presence)
            await release.wait()

        feed._pass = slow_pass  # type: ignore[method-assign]  # slowed on purpose
        feed.wake.set()  # the first pass starts, and holds on
        assert await polling.wait_for_async(lambda: bool(passes), 5)
        layer = get_channel_layer()
        for _ in range(30):
            await layer.group_send(push.presence_group_name(encounter.pk), {"type": push.PRESENCE})

        def all_heard() -> bool:  # the feed read every message off its in-memory channel
            group = push.presence_group_name(encounter.pk)
            channels = layer.groups.get(group, {})  # type: ignore[attr-defined]  # in-memory
            queues = [layer.channels.get(c) for c in channels]  # type: ignore[attr-defined]
            return feed.presence_due and all(q is None or q.empty() for q in queues)

        assert await polling.wait_for_async(all_heard, 5)
        release.set()
        assert await polling.wait_for_async(lambda: len(passes) == 2, 5)
        await polling.nothing_within(0.2)  # and no third pass comes
        feed.task.cancel()
        await asyncio.gather(feed.task, return_exceptions=True)
        return passes

    assert async_to_sync(scenario)() == [False, True]


def test_a_live_stream_is_not_wrapped_to_give_a_connection_back_per_chunk(fight, rf):
    """The stream reads nothing (its broadcaster does): config.db_pool leaves it alone, rather
    than hop to a thread after every chunk of every open page."""
    from config.db_pool import ConnectionPoolMiddleware

    request = rf.get(f"/encounters/{fight.encounter.pk}/events/")

    async def view(request):
        return await stream.encounter_stream(request, fight.encounter.pk)

    request.user = fight.table.gm
    response = async_to_sync(ConnectionPoolMiddleware(view))(request)
    assert response.status_code == 200
    # The stream's own generator, not config.db_pool's _giving_back around it.
    assert response._iterator.__name__ == "_stream"


@pytest.mark.django_db(transaction=True)
def test_a_broadcaster_joins_its_groups_again_at_each_heartbeat(table, monkeypatch):
    """A Redis that restarted under a broadcaster whose connection held has forgotten its
    groups (and the layer forgets a member after its group_expiry): each heartbeat joins them
    again, so the next events are heard."""
    monkeypatch.setattr(broadcast, "HEARTBEAT_SECONDS", 0.1)
    encounter, _ = services.create_encounter(campaign=table.campaign, name="Ambush", actor=table.gm)
    groups = (push.group_name(encounter.pk), push.presence_group_name(encounter.pk))

    async def scenario() -> list[int]:
        layer = get_channel_layer()
        feed = broadcast.Broadcaster(encounter)
        feed.add(broadcast.Subscriber(table.gm, None, asyncio.Queue()))
        assert await feed.wait_subscribed(5)
        layer.groups.clear()  # type: ignore[attr-defined]  # what a restarted Redis remembers

        def members() -> list[int]:
            return [len(layer.groups.get(group, {})) for group in groups]  # type: ignore[attr-defined]  # in-memory

        await polling.wait_for_async(lambda: members() == [1, 1], 5)  # fifty heartbeats
        seen = members()
        feed.task.cancel()
        await asyncio.gather(feed.task, return_exceptions=True)
        return seen

    assert async_to_sync(scenario)() == [1, 1]


def test_a_push_while_redis_is_down_is_one_warning_line(settings, caplog):
    """Actions go on while Redis is down; each failed push is a line, not a traceback."""
    import socket

    from channels.layers import channel_layers

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once closed
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [f"redis://127.0.0.1:{port}/0"]},
        }
    }
    channel_layers.backends.clear()
    try:
        pusher.pusher.send(push.group_name(1), {"type": push.ENTRY, "id": 1})
        assert pusher.flush_pushes()
    finally:
        channel_layers.backends.clear()
    failed = [r for r in caplog.records if r.name == "live.pusher"]
    assert [(r.levelname, r.exc_info) for r in failed] == [("WARNING", None)]
    assert "ConnectionError" in failed[0].getMessage()
