"""Live events across processes: two uvicorn servers on PostgreSQL, Redis between them.

Runs in the PostgreSQL run of scripts/test.sh, which starts a throwaway PostgreSQL and Redis.
"""

from __future__ import annotations

import pytest
from channels.layers import channel_layers
from django.db import connection
from django.test import Client

from combat import services
from combat.models import CombatLogEntry
from tests.factories import make_thug, make_ysolde
from tests.polling import wait_for
from tests.servers import AsgiServer, SseClient, redis_url, start_asgi_server

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def redis_layer(settings):
    """This test process publishes through the same Redis as the servers."""
    url = redis_url()
    settings.CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [url]}}
    }
    channel_layers.backends.clear()
    yield url
    channel_layers.backends.clear()


def test_every_client_on_every_process_gets_every_event_and_catches_up(table, redis_layer):
    assert connection.vendor == "postgresql"
    ysolde = make_ysolde(table.campaign, table.player)
    thug = make_thug(table.campaign, table.gm)
    encounter, _ = services.create_encounter(campaign=table.campaign, name="Ambush", actor=table.gm)
    services.add_participants(encounter=encounter, characters=[ysolde, thug], actor=table.gm)
    services.start_encounter(encounter=encounter, actor=table.gm)

    client = Client()
    client.force_login(table.gm)
    cookie = client.cookies["sessionid"].value

    servers: list[AsgiServer] = [start_asgi_server({"REDIS_URL": redis_layer}) for _ in range(2)]
    try:
        path = f"/encounters/{encounter.pk}/events/"
        clients = [SseClient(f"{s.url}{path}", cookie).start() for s in servers]

        expected = [services.next_turn(encounter=encounter, actor=table.gm).pk for _ in range(6)]
        for c in clients:
            assert wait_for(lambda c=c: c.entries == expected), (c.url, c.entries, expected)  # type: ignore[misc]  # c bound

        # Process A dies mid-stream; its client reconnects to B with the last id it saw.
        servers[0].stop()
        assert clients[0].closed.wait(10)
        missed = [services.next_turn(encounter=encounter, actor=table.gm).pk for _ in range(3)]
        again = SseClient(f"{servers[1].url}{path}", cookie, last_id=clients[0].last_id)
        again.start()
        assert wait_for(lambda: again.entries == missed), (again.entries, missed)
        assert wait_for(lambda: clients[1].entries == expected + missed, 20), (
            clients[1].entries,
            expected + missed,
        )
        logged = list(
            CombatLogEntry.objects.filter(encounter=encounter, pk__gt=expected[0] - 1)
            .order_by("pk")
            .values_list("pk", flat=True)
        )
        assert logged == expected + missed
    finally:
        for s in servers:
            s.stop()


def test_a_hundred_pages_on_two_processes_get_every_event_in_order(table, redis_layer):
    """A hundred open pages (the GM's and a player's, half on each process) each
    receive every entry once, in order; the broadcaster of each process feeds them all."""
    ysolde = make_ysolde(table.campaign, table.player)
    thug = make_thug(table.campaign, table.gm)
    encounter, _ = services.create_encounter(campaign=table.campaign, name="Crowd", actor=table.gm)
    services.add_participants(encounter=encounter, characters=[ysolde, thug], actor=table.gm)
    services.start_encounter(encounter=encounter, actor=table.gm)
    cookies = []
    for user in (table.gm, table.player):
        client = Client()
        client.force_login(user)
        cookies.append(client.cookies["sessionid"].value)

    servers = [start_asgi_server({"REDIS_URL": redis_layer}) for _ in range(2)]
    try:
        path = f"/encounters/{encounter.pk}/events/"
        clients = [
            SseClient(f"{servers[i % 2].url}{path}", cookies[(i // 2) % 2]).start()
            for i in range(100)
        ]
        expected = [services.next_turn(encounter=encounter, actor=table.gm).pk for _ in range(5)]
        assert wait_for(lambda: all(c.entries == expected for c in clients), 30), [
            c.entries for c in clients if c.entries != expected
        ][:3]
    finally:
        for s in servers:
            s.stop()
