"""Tests that need the throwaway PostgreSQL and Redis that scripts/test.sh starts."""

from __future__ import annotations

import os

import pytest
from django.db import connection

from tests.workers import worker_redis_url

pytestmark = pytest.mark.postgres


@pytest.mark.django_db
def test_the_suite_really_runs_on_postgresql():
    assert connection.vendor == "postgresql"
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version_num")
        assert int(cursor.fetchone()[0]) >= 130000


@pytest.mark.django_db
def test_healthz_works_with_the_redis_channel_layer(client, settings):
    url = worker_redis_url()  # this xdist worker's own database on the shared Redis
    if not url:
        if os.environ.get("CI") == "true":
            pytest.fail("CI must provide TEST_REDIS_URL (scripts/test.sh starts a Redis)")
        pytest.skip("no TEST_REDIS_URL: scripts/test.sh starts a Redis when redis-server exists")
    from channels.layers import channel_layers

    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [url]},
        }
    }
    channel_layers.backends.clear()
    try:
        response = client.get("/healthz")
    finally:
        channel_layers.backends.clear()
    assert response.json() == {"status": "ok", "database": "ok", "channel_layer": "ok"}
