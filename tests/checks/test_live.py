"""The campaign's live feed for checks: the GM's call reaches the asked players' open streams
(and no one else's), an answer the GM's; a secret roll's result goes to no player's stream;
the pages a player is at follow the stream instead of polling."""

from __future__ import annotations

import asyncio
import random
import re
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.layers import channel_layers, get_channel_layer
from django.db import transaction
from django.test import AsyncClient
from django.urls import reverse

from checks import live as campaign
from checks import services
from checks.models import CheckCall
from combat import services as combat_services
from live.pusher import flush_pushes
from tests import polling
from tests.combat.helpers import received
from tests.factories import make_campaign
from tests.servers import redis_url

HX = {"HTTP_HX_REQUEST": "true"}
HELLO = b"event: hello\ndata: \n\n"
QUIET = 0.5  # seconds a stream that should hear nothing is listened to


# The Redis case runs with the other deployed-stack tests, in scripts/test.sh's PostgreSQL leg
# (which starts the Redis); the SQLite leg has none.
@pytest.fixture(params=["in-memory", pytest.param("redis", marks=pytest.mark.postgres)])
def layer(request, settings):
    """The streams on a laptop's in-memory channel layer, and on Redis as deployed."""
    if request.param == "redis":
        settings.CHANNEL_LAYERS = {
            "default": {
                "BACKEND": "channels_redis.core.RedisChannelLayer",
                "CONFIG": {"hosts": [redis_url()]},
            }
        }
    channel_layers.backends.clear()
    yield request.param
    channel_layers.backends.clear()


def polled(page: str) -> list[str]:
    return [t for t in re.findall(r'hx-trigger="([^"]*)"', page) if "every" in t]


def events_url(campaign_id: int) -> str:
    return reverse("live:campaign_events", args=[campaign_id])


async def open_stream(user: Any, campaign_id: int) -> AsyncIterator[bytes]:
    client = AsyncClient()
    await client.aforce_login(user)
    response = await client.get(events_url(campaign_id))
    assert response.status_code == 200
    assert response["Content-Type"] == "text/event-stream"
    chunks = aiter(response.streaming_content)  # type: ignore[attr-defined]  # a streaming response
    assert await asyncio.wait_for(anext(chunks), 5) == HELLO
    return chunks


async def heard(chunks: AsyncIterator[bytes]) -> str:
    return (await asyncio.wait_for(anext(chunks), 5)).decode()


async def silent(chunks: AsyncIterator[bytes]) -> bool:
    """Whether the stream says nothing for QUIET seconds (it ends then: the wait is cancelled,
    as a closing page cancels it)."""
    try:
        await asyncio.wait_for(anext(chunks), QUIET)
    except TimeoutError:
        return True
    return False


def athletics() -> services.Target:
    return services.parse_target(kind="discipline", discipline="Athletics", against="Ambitious")


@pytest.mark.django_db(transaction=True)
def test_a_call_reaches_the_asked_players_stream_only(table, layer):
    # The asked player also plays in another campaign, whose stream is told nothing.
    elsewhere = make_campaign(table.other_gm, players=(table.owner, table.player))

    async def scenario() -> dict[str, Any]:
        asked = await open_stream(table.owner, table.campaign.pk)
        unasked = await open_stream(table.player, table.campaign.pk)
        other_campaign = await open_stream(table.owner, elsewhere.pk)
        gm = await open_stream(table.gm, table.campaign.pk)
        call = await sync_to_async(services.call_checks)(
            user=table.gm, campaign=table.campaign, characters=[table.ysolde], target=athletics()
        )
        out = {"call": call, "asked": await heard(asked), "gm": await heard(gm)}
        out["unasked"] = await silent(unasked)
        out["other_campaign"] = await silent(other_campaign)
        for chunks in (asked, gm):
            await chunks.aclose()  # type: ignore[attr-defined]  # an async generator
        return out

    out = async_to_sync(scenario)()
    assert out["asked"] == "event: prompts\ndata: \n\n"
    assert out["gm"] == f"event: call-{out['call'].pk}\ndata: \n\n"
    assert out["unasked"] and out["other_campaign"]


@pytest.mark.django_db(transaction=True)
def test_a_secret_rolls_news_goes_to_the_gms_stream_and_no_players(client, table, layer):
    call = services.call_checks(
        user=table.gm,
        campaign=table.campaign,
        characters=[table.ysolde, table.bram],
        target=athletics(),
        secret=True,
    )

    async def scenario() -> dict[str, Any]:
        gm = await open_stream(table.gm, table.campaign.pk)
        roller = await open_stream(table.owner, table.campaign.pk)
        other = await open_stream(table.player, table.campaign.pk)
        asked = await sync_to_async(call.requests.get)(character=table.ysolde)
        check = await sync_to_async(services.answer)(
            user=table.owner, request=asked, rng=random.Random(3)
        )
        out = {"check": check, "gm": await heard(gm), "roller": await heard(roller)}
        out["other"] = await silent(other)
        out["roller_after"] = await silent(roller)
        await gm.aclose()  # type: ignore[attr-defined]  # an async generator
        return out

    out = async_to_sync(scenario)()
    # The GM's page of the call is told an answer came in, and fetches it.
    assert out["gm"] == f"event: call-{call.pk}\ndata: \n\n"
    client.force_login(table.gm)
    results = client.get(reverse("checks:call_detail", args=[call.pk]), **HX).content.decode()
    assert out["check"].degree_label in results
    # The roller's pages only hear that their prompt is gone; the other player hears nothing.
    assert out["roller"] == "event: prompts\ndata: \n\n"
    assert out["roller_after"] and out["other"]
    # The call's answers are the GM's: the asked player is refused them (checks/access.py).
    client.force_login(table.owner)
    assert client.get(reverse("checks:call_detail", args=[call.pk])).status_code == 403


@pytest.mark.django_db(transaction=True)
def test_the_gm_hears_each_answer_and_the_players_a_closed_call(table):
    call = services.call_checks(
        user=table.gm,
        campaign=table.campaign,
        characters=[table.ysolde, table.bram],
        target=athletics(),
    )

    async def scenario() -> list[str]:
        gm = await open_stream(table.gm, table.campaign.pk)
        bram = await open_stream(table.player, table.campaign.pk)
        asked = await sync_to_async(call.requests.get)(character=table.ysolde)
        await sync_to_async(services.answer)(
            user=table.gm, request=asked, rng=random.Random(1), roll=40
        )
        answered = await heard(gm)
        await sync_to_async(services.close_call)(user=table.gm, call=call)
        out = [answered, await heard(gm), await heard(bram)]
        for chunks in (gm, bram):
            await chunks.aclose()  # type: ignore[attr-defined]  # an async generator
        return out

    answered, closed, prompt_gone = async_to_sync(scenario)()
    assert answered == closed == f"event: call-{call.pk}\ndata: \n\n"
    assert prompt_gone == "event: prompts\ndata: \n\n"


def test_outsiders_and_anonymous_get_no_stream(client, table):
    url = events_url(table.campaign.pk)
    assert client.get(url).status_code == 403
    client.force_login(table.outsider)
    assert client.get(url).status_code == 404


@pytest.mark.django_db(transaction=True)
def test_a_stream_is_refused_with_503_while_the_channel_layer_is_down(table, monkeypatch):
    async def down(*args: Any, **kwargs: Any) -> None:
        raise ConnectionError("Redis is restarting")

    monkeypatch.setattr(get_channel_layer(), "group_add", down)

    async def scenario() -> Any:
        client = AsyncClient()
        await client.aforce_login(table.owner)
        return await client.get(events_url(table.campaign.pk))

    response = async_to_sync(scenario)()
    assert response.status_code == 503
    assert response["Retry-After"] == "5"


def listen(group: str) -> str:
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(group, channel)
    return channel


def test_a_call_is_told_once_after_commit_and_not_when_it_rolls_back(
    table, django_capture_on_commit_callbacks
):
    feeds = listen(campaign.group_name(table.campaign.pk))
    with (
        django_capture_on_commit_callbacks(execute=True),
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        services.call_checks(
            user=table.gm, campaign=table.campaign, characters=[table.ysolde], target=athletics()
        )
        raise RuntimeError("the request failed after the service")
    assert received(feeds) == []
    with django_capture_on_commit_callbacks(execute=True):
        call = services.call_checks(
            user=table.gm, campaign=table.campaign, characters=[table.ysolde], target=athletics()
        )
    # One message for the campaign, naming each user told and what their pages fetch again.
    news = [[table.gm.pk, [f"call-{call.pk}"]], [table.owner.pk, ["prompts"]]]
    assert received(feeds) == [{"type": campaign.NEWS, "news": sorted(news)}]


def test_the_pages_a_player_is_at_follow_the_stream_and_do_not_poll(table):
    encounter, _ = combat_services.create_encounter(
        campaign=table.campaign, name="Ambush", actor=table.gm
    )
    services.call_checks(
        user=table.gm, campaign=table.campaign, characters=[table.ysolde], target=athletics()
    )
    # Served as OMG Table is served: over ASGI, whose requests can hold a stream.
    client = AsyncClient()
    async_to_sync(client.aforce_login)(table.owner)
    stream = events_url(table.campaign.pk)
    pages = player_pages(table, encounter)
    for url in pages:
        page = async_to_sync(client.get)(url).content.decode()
        assert f'sse-connect="{stream}"' in page, url
        assert 'hx-trigger="sse:hello, sse:prompts, refresh"' in page, url
        # The prompt is on the page as it opens, for a browser without JavaScript too.
        assert "The GM asks Ysolde Varr for a check" in page, url
        assert not polled(page), url
    # The GM's page of a call: its results are fetched on the call's own news.
    async_to_sync(client.aforce_login)(table.gm)
    call = CheckCall.objects.get()
    page = async_to_sync(client.get)(reverse("checks:call_detail", args=[call.pk])).content.decode()
    assert f'sse-connect="{stream}"' in page
    assert f'hx-trigger="sse:hello, sse:call-{call.pk}, refresh"' in page
    assert not polled(page)


def test_a_page_served_over_wsgi_opens_no_stream_and_looks_again_every_30_s(client, table):
    # A WSGI server cannot hold a stream (it would answer the page's connection with a 500):
    # the same pages fetch their prompts or results on a slow poll instead.
    encounter, _ = combat_services.create_encounter(
        campaign=table.campaign, name="Ambush", actor=table.gm
    )
    services.call_checks(
        user=table.gm, campaign=table.campaign, characters=[table.ysolde], target=athletics()
    )
    client.force_login(table.owner)
    stream = events_url(table.campaign.pk)
    for url in player_pages(table, encounter):
        page = client.get(url).content.decode()
        assert stream not in page, url
        assert polled(page) == ["every 30s, refresh"], url
        assert "The GM asks Ysolde Varr for a check" in page, url
    client.force_login(table.gm)
    call = CheckCall.objects.get()
    page = client.get(reverse("checks:call_detail", args=[call.pk])).content.decode()
    assert stream not in page
    assert polled(page) == ["every 30s, refresh"]


def player_pages(table: Any, encounter: Any) -> tuple[str, ...]:
    return (
        table.campaign.get_absolute_url(),
        reverse("checks:campaign_checks", args=[table.campaign.pk]),
        table.ysolde.get_absolute_url(),
        encounter.get_absolute_url(),
    )


@pytest.mark.django_db(transaction=True)
def test_a_processs_streams_of_a_campaign_share_one_member_of_its_group(table):
    """Pages opening and closing cost the channel layer nothing: one feed per campaign and
    process is the group's only member, and leaves it when the last stream closes."""
    group = campaign.group_name(table.campaign.pk)

    async def scenario() -> tuple[int, int, int, int]:
        layer = get_channel_layer()
        streams = [
            await open_stream(user, table.campaign.pk)
            for user in (table.gm, table.owner, table.player) * 4
        ]
        members = len(layer.groups.get(group, {}))  # type: ignore[attr-defined]  # in-memory
        feeds = len(campaign._feeds)
        # The pages close: their waits for news are cancelled, as a disconnect cancels them.
        waits = [asyncio.ensure_future(anext(chunks)) for chunks in streams]
        for chunks in streams:
            await polling.waiting_inside(chunks)
        for waiting in waits:
            waiting.cancel()
        await asyncio.gather(*waits, return_exceptions=True)
        # The feed's task leaves the group.
        await polling.wait_for_async(lambda: not layer.groups.get(group) and not campaign._feeds)  # type: ignore[attr-defined]  # in-memory
        return members, feeds, len(layer.groups.get(group, {})), len(campaign._feeds)  # type: ignore[attr-defined]  # in-memory

    assert async_to_sync(scenario)() == (1, 1, 0, 0)


@pytest.mark.django_db(transaction=True)
def test_the_heartbeat_checks_access_and_joins_the_group_again(table, monkeypatch):
    """Without any wake (one lost while Redis failed, say), the next heartbeat finds a removed
    player and ends their stream, and joins the group again (a restarted Redis forgot it)."""
    from sheets.models import Membership

    monkeypatch.setattr(campaign, "HEARTBEAT_SECONDS", 0.2)
    monkeypatch.setattr(campaign, "wake", lambda campaign_id: None, raising=False)  # none comes

    async def scenario() -> int:
        layer = get_channel_layer()
        gm = await open_stream(table.gm, table.campaign.pk)
        player = await open_stream(table.player, table.campaign.pk)
        layer.groups.clear()  # type: ignore[attr-defined]  # what a restarted Redis remembers
        await sync_to_async(Membership.objects.filter(user=table.player).delete)()
        text = ""
        deadline = asyncio.get_running_loop().time() + 5  # some twenty heartbeats
        while asyncio.get_running_loop().time() < deadline:
            try:
                text += await heard(player)
            except StopAsyncIteration:
                break
        assert text.endswith("event: gone\ndata: \n\n"), text
        group = campaign.group_name(table.campaign.pk)
        members = len(layer.groups.get(group, {}))  # type: ignore[attr-defined]  # in-memory
        await gm.aclose()  # type: ignore[attr-defined]  # an async generator
        return members

    assert async_to_sync(scenario)() == 1  # the GM's stream's feed, in the group again


@pytest.mark.django_db(transaction=True)
def test_the_call_answers_without_waiting_for_the_channel_layer(table, api_for, monkeypatch):
    """The news goes out after the commit, off the request's thread: a slow channel layer
    (Redis across the network) does not hold the GM's call."""
    layer = get_channel_layer()
    gate = threading.Event()
    sent: list[dict[str, Any]] = []

    async def slow_send(group: str, message: dict[str, Any]) -> None:
        await asyncio.get_running_loop().run_in_executor(None, gate.wait, 5)
        sent.append(message)

    monkeypatch.setattr(layer, "group_send", slow_send)
    body = {"campaign": table.campaign.pk, "characters": [table.ysolde.pk]}
    body |= {"kind": "aptitude", "aptitude": "SPD", "against": "Moderate"}
    for _ in range(2):
        assert api_for(table.gm).post("/api/check-calls/", body, format="json").status_code == 201
    assert sent == []  # both calls answered while the first message waits
    gate.set()
    assert flush_pushes()
    assert [m["type"] for m in sent] == [campaign.NEWS, campaign.NEWS]
