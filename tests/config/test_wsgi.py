"""The WSGI entry point (config/wsgi.py) refuses live streams at once, and the fight page it
serves opens none: a WSGI server would read a stream into memory until it ends, which it never
does, and the worker would never answer again."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.conf import settings
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.test import AsyncClient, Client
from django.urls import reverse

from combat.display import make_link
from config.wsgi import STREAM_REFUSED, application
from tests.factories import make_fight

pytestmark = pytest.mark.django_db


@pytest.fixture
def wsgi() -> Iterator[Any]:
    """``call(path, user)`` -> (status, headers, body) from config.wsgi.application, as a WSGI
    server would call it, logged in as ``user`` (None: anonymous)."""
    # The handler closes "old" connections as a request starts and ends: inside the test's
    # transaction that would close its connection (Django's test client does the same).
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)

    def call(path: str, user: Any = None) -> tuple[str, dict[str, str], bytes]:
        environ = {
            "REQUEST_METHOD": "GET",
            "PATH_INFO": path,
            "QUERY_STRING": "",
            "SERVER_NAME": "testserver",
            "SERVER_PORT": "80",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "wsgi.input": io.BytesIO(b""),
            "wsgi.url_scheme": "http",
            "wsgi.errors": io.StringIO(),
        }
        if user is not None:
            client = Client()
            client.force_login(user)
            session = client.cookies[settings.SESSION_COOKIE_NAME].value
            environ["HTTP_COOKIE"] = f"{settings.SESSION_COOKIE_NAME}={session}"
        started: dict[str, Any] = {}

        def start_response(status: str, headers: list[tuple[str, str]], *_: Any) -> None:
            started["status"], started["headers"] = status, dict(headers)

        response = application(environ, start_response)
        try:
            body = b"" if started["status"].startswith("200") else b"".join(response)
        finally:
            response.close()
        return started["status"], started["headers"], body

    try:
        yield call
    finally:
        for signal in (request_started, request_finished):
            signal.connect(close_old_connections)


def test_it_answers_every_live_stream_501_at_once(wsgi, table):
    fight = make_fight(table)
    link = make_link(campaign=table.campaign, actor=table.gm)
    streams = [
        reverse("live:encounter_events", args=[fight.encounter.pk]),
        reverse("live:campaign_events", args=[table.campaign.pk]),
        reverse("display:events", args=[link.secret, fight.encounter.pk]),
    ]
    for url in streams:
        status, headers, body = wsgi(url, table.player)
        assert status.startswith("501"), url
        assert headers["Content-Type"].startswith("text/plain")
        assert body.decode() == STREAM_REFUSED


def test_it_serves_everything_else_as_django_does(wsgi, table):
    fight = make_fight(table)
    page = reverse("combat:encounter_detail", args=[fight.encounter.pk])
    status, headers, _ = wsgi(page, table.gm)
    assert status.startswith("200") and headers["Content-Type"].startswith("text/html")
    # Who may not follow the fight still gets the refusal the stream gives them, not the 501.
    assert wsgi(reverse("live:encounter_events", args=[fight.encounter.pk]))[0].startswith("403")


def test_the_fight_page_opens_the_stream_only_when_the_asgi_server_sent_it(table):
    fight = make_fight(table)
    url = reverse("combat:encounter_detail", args=[fight.encounter.pk])
    stream = reverse("live:encounter_events", args=[fight.encounter.pk])
    over_wsgi = Client()
    over_wsgi.force_login(table.player)
    page = over_wsgi.get(url).text
    assert stream not in page and 'hx-ext="sse"' not in page
    assert "Live updates are off on this server" in page

    async def over_asgi() -> str:
        client = AsyncClient()
        await client.aforce_login(table.player)
        return (await client.get(url)).content.decode()

    page = async_to_sync(over_asgi)()
    assert f'sse-connect="{stream}?after=' in page and 'hx-ext="sse"' in page
    assert "Connecting to the live feed" in page
