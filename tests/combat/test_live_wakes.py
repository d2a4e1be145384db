"""Access taken away closes the open streams at once (combat/live/wakes.py): a player removed
from the campaign, the campaign deleted (page and API), an account deleted, an encounter
deleted. Each stream concerned is sent ``gone`` and ends well before the next heartbeat (15 s);
the others carry on. The streams are opened through the ASGI app, as a browser's are."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.db import transaction
from django.test import AsyncClient, Client
from django.urls import reverse
from rest_framework.test import APIClient

from checks import live as campaign
from combat import display, services
from combat.live import broadcast, push, stream
from combat.models import Encounter
from live import pusher
from sheets import accounts
from sheets import services as sheets_services
from sheets.models import Campaign, Membership
from tests import polling
from tests.combat.helpers import received

pytestmark = [pytest.mark.django_db(transaction=True)]

SOON = 5.0  # seconds: a third of the heartbeat, which would otherwise have noticed


def encounter_url(encounter: Encounter) -> str:
    return reverse("live:encounter_events", args=[encounter.pk])


def campaign_url(campaign_id: int) -> str:
    return reverse("live:campaign_events", args=[campaign_id])


async def open_stream(user: Any, url: str) -> AsyncIterator[bytes]:
    client = AsyncClient()
    if user is not None:
        await client.aforce_login(user)
    response = await client.get(url)
    assert response.status_code == 200, url
    chunks = aiter(response.streaming_content)  # type: ignore[attr-defined]  # a streaming response
    assert (await asyncio.wait_for(anext(chunks), SOON)).startswith(b"event: hello")
    return chunks


async def settled() -> None:
    """The passes the streams' own arrival caused are over (each arrival is announced to the
    GM's list, and that pass checks access too): what ends a stream after this is the wake."""
    await stream.presence_news().flushed()
    await asyncio.sleep(0.5)


async def gone_at_once(chunks: AsyncIterator[bytes]) -> bool:
    """Whether the stream is sent ``gone`` within :data:`SOON` seconds and then ends (what it
    is sent before, a GM's list of who is connected say, is skipped)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SOON
    try:
        while b"event: gone" not in await asyncio.wait_for(anext(chunks), deadline - loop.time()):
            pass
        await asyncio.wait_for(anext(chunks), deadline - loop.time())
    except StopAsyncIteration:
        return True
    except TimeoutError:
        return False
    return False  # it went on after gone


async def still_open(chunks: AsyncIterator[bytes]) -> bool:
    """Whether the stream neither ends nor says ``gone`` for half a second."""
    try:
        while True:
            chunk = await asyncio.wait_for(anext(chunks), 0.5)
            if b"event: gone" in chunk:
                return False
    except TimeoutError:
        return True
    except StopAsyncIteration:
        return False


async def closed(*streams: AsyncIterator[bytes]) -> None:
    for chunks in streams:
        await chunks.aclose()  # type: ignore[attr-defined]  # an async generator


def test_a_removed_player_loses_the_fights_and_the_campaigns_streams_at_once(fight):
    table = fight.table
    gm = Client()
    gm.force_login(table.gm)
    remove = reverse("sheets:campaign_remove_player", args=[table.campaign.pk, table.player.pk])

    async def scenario() -> dict[str, bool]:
        player_fight = await open_stream(table.player, encounter_url(fight.encounter))
        player_campaign = await open_stream(table.player, campaign_url(table.campaign.pk))
        gm_fight = await open_stream(table.gm, encounter_url(fight.encounter))
        gm_campaign = await open_stream(table.gm, campaign_url(table.campaign.pk))
        await settled()
        assert (await sync_to_async(gm.post)(remove)).status_code == 302
        out = {
            "player_fight": await gone_at_once(player_fight),
            "player_campaign": await gone_at_once(player_campaign),
            "gm_fight": await still_open(gm_fight),
            "gm_campaign": await still_open(gm_campaign),
        }
        await closed(gm_fight, gm_campaign)
        return out

    assert async_to_sync(scenario)() == dict.fromkeys(
        ("player_fight", "player_campaign", "gm_fight", "gm_campaign"), True
    )


@pytest.mark.parametrize("how", ["page", "api"])
def test_deleting_the_campaign_ends_every_stream_of_it_at_once(fight, how):
    table = fight.table
    link = display.make_link(campaign=table.campaign, actor=table.gm)
    screen = reverse("display:events", args=[link.secret, fight.encounter.pk])
    elsewhere = Campaign.objects.get(name="Elsewhere")

    def delete() -> int:
        if how == "page":
            client = Client()
            client.force_login(table.gm)
            return client.post(
                reverse("sheets:campaign_delete", args=[table.campaign.pk])
            ).status_code
        api = APIClient()
        api.force_authenticate(table.gm)
        return api.delete(f"/api/campaigns/{table.campaign.pk}/").status_code

    async def scenario() -> tuple[list[bool], bool]:
        streams = [
            await open_stream(table.gm, encounter_url(fight.encounter)),
            await open_stream(table.player, encounter_url(fight.encounter)),
            await open_stream(None, screen),
            await open_stream(table.gm, campaign_url(table.campaign.pk)),
            await open_stream(table.player, campaign_url(table.campaign.pk)),
        ]
        other = await open_stream(table.other_gm, campaign_url(elsewhere.pk))
        await settled()
        assert await sync_to_async(delete)() in (204, 302)
        ended = [await gone_at_once(chunks) for chunks in streams]
        other_open = await still_open(other)
        await closed(other)
        return ended, other_open

    ended, other_open = async_to_sync(scenario)()
    assert ended == [True] * 5
    assert other_open  # another campaign's stream is not concerned


@pytest.mark.parametrize("who", ["player", "gm"])
def test_deleting_an_account_ends_its_streams_at_once(fight, who):
    table = fight.table
    user = getattr(table, who)

    async def scenario() -> list[bool]:
        streams = [
            await open_stream(user, encounter_url(fight.encounter)),
            await open_stream(user, campaign_url(table.campaign.pk)),
        ]
        await settled()
        await sync_to_async(accounts.delete_account)(user=user, characters="give")
        return [await gone_at_once(chunks) for chunks in streams]

    assert async_to_sync(scenario)() == [True, True]


def test_deleting_an_encounter_ends_its_streams_at_once(fight):
    table = fight.table
    services.finish_encounter(encounter=fight.encounter, actor=table.gm)

    async def scenario() -> list[bool]:
        streams = [
            await open_stream(table.gm, encounter_url(fight.encounter)),
            await open_stream(table.player, encounter_url(fight.encounter)),
        ]
        await settled()
        await sync_to_async(services.delete_encounter)(encounter=fight.encounter, actor=table.gm)
        return [await gone_at_once(chunks) for chunks in streams]

    assert async_to_sync(scenario)() == [True, True]


@pytest.mark.django_db(transaction=False)
def test_one_commit_wakes_each_feed_once_and_a_rollback_none(
    fight, django_capture_on_commit_callbacks
):
    table = fight.table
    feeds = campaign_listener(table.campaign.pk)
    fights = encounter_listener(fight.encounter.pk)
    with (
        django_capture_on_commit_callbacks(execute=True),
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        sheets_services.remove_player(
            user=table.gm, campaign=table.campaign, user_id=table.player.pk
        )
        raise RuntimeError("the request failed after the service")
    assert Membership.objects.filter(user=table.player).exists()
    assert received(feeds) == received(fights) == []
    # A campaign of two players and a fight deleted: one wake for its feeds, one for the fight.
    Membership.objects.create(campaign=table.campaign, user=table.outsider)
    with django_capture_on_commit_callbacks(execute=True):
        table.campaign.delete()
    assert received(feeds) == [{"type": campaign.WAKE}]
    assert received(fights) == [{"type": "encounter.wake"}]


def campaign_listener(campaign_id: int) -> str:
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(campaign.group_name(campaign_id), channel)
    return channel


def encounter_listener(encounter_id: int) -> str:
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    assert pusher.flush_pushes()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(push.group_name(encounter_id), channel)
    return channel


def test_the_broadcasters_are_gone_with_their_streams(fight):
    """No broadcaster or campaign feed outlives the streams a deletion ended."""
    table = fight.table

    async def scenario() -> tuple[int, int]:
        streams = [
            await open_stream(table.player, encounter_url(fight.encounter)),
            await open_stream(table.player, campaign_url(table.campaign.pk)),
        ]
        await settled()
        await sync_to_async(sheets_services.remove_player)(
            user=table.gm, campaign=table.campaign, user_id=table.player.pk
        )
        assert [await gone_at_once(chunks) for chunks in streams] == [True, True]
        await polling.wait_for_async(lambda: not broadcast._broadcasters and not campaign._feeds)
        return len(broadcast._broadcasters), len(campaign._feeds)

    assert async_to_sync(scenario)() == (0, 0)
