from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client, override_settings
from rest_framework.test import APIClient

from tests.factories import make_campaign, make_user


@dataclass
class Table:
    """One campaign with every role around it."""

    campaign: Any
    gm: Any
    player: Any
    outsider: Any
    other_gm: Any


@pytest.fixture
def table(db: None) -> Table:
    gm = make_user("gm")
    player = make_user("player")
    outsider = make_user("outsider")
    other_gm = make_user("other_gm")
    campaign = make_campaign(gm, players=(player,), name="The Sunken Keep")
    make_campaign(other_gm, name="Elsewhere")
    return Table(campaign=campaign, gm=gm, player=player, outsider=outsider, other_gm=other_gm)


@pytest.fixture
def client_for():
    """client_for(user) -> a logged-in Django test client (None: anonymous)."""

    def make(user: Any) -> Client:
        client = Client()
        if user is not None:
            client.force_login(user)
        return client

    return make


@pytest.fixture
def api_for():
    """api_for(user) -> a DRF APIClient authenticated as user (None: anonymous)."""

    def make(user: Any) -> APIClient:
        client = APIClient()
        if user is not None:
            client.force_authenticate(user)
        return client

    return make


@pytest.fixture
def cache_down(monkeypatch: Any) -> Any:
    """A real Redis cache backend whose server is gone (nothing listens on the port)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # The warning is once per interval and process: start this test with none given yet.
    monkeypatch.setattr("config.throttling._warned_at", None, raising=False)
    redis = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": f"redis://127.0.0.1:{port}/0",
    }
    with override_settings(CACHES={"default": redis}):
        yield
