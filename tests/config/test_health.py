"""/healthz when the database is down, and how database connections are kept in production
(the database and channel-layer checks that pass are in test_platform.py)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "REDIS_URL", "CONN_MAX_AGE", "CONN_HEALTH_CHECKS", "DEBUG"}
        and not k.startswith("DB_POOL_")
    }
    environ.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        SECRET_KEY="x" * 64,
        ALLOWED_HOSTS="testserver",
        LOG_LEVEL="ERROR",
        **env,
    )
    return subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", code],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_it_answers_503_when_the_database_is_down():
    result = _run(
        "from django.test import Client;"
        "r = Client().get('/healthz', secure=True);"
        "print(r.status_code, r.content.decode())",
        DEBUG="0",
        DATABASE_URL=f"postgres://omg@127.0.0.1:{_closed_port()}/omg",
    )
    status, body = result.stdout.split(" ", 1)
    assert status == "503", result.stderr
    assert json.loads(body) == {"status": "error", "database": "error", "channel_layer": "ok"}


SHOW_DB = (
    "from django.conf import settings;"
    "db = settings.DATABASES['default'];"
    "print(db['ENGINE'], db['CONN_MAX_AGE'], db['CONN_HEALTH_CHECKS'])"
)


def test_it_opens_a_connection_per_request_by_default_in_production():
    # Under ASGI a kept connection is never reused (each request has its own thread), so
    # persistent connections stay off unless asked for; see config/settings.py.
    result = _run(SHOW_DB, DEBUG="0", DATABASE_URL="postgres://omg@db.example:5432/omg")
    assert result.stdout.split() == ["django.db.backends.postgresql", "0", "True"], result.stderr


def test_it_takes_connection_reuse_and_health_checks_from_the_environment():
    result = _run(
        SHOW_DB,
        DEBUG="0",
        DATABASE_URL="postgres://omg@db.example:5432/omg",
        DB_POOL_MAX="0",
        CONN_MAX_AGE="30",
        CONN_HEALTH_CHECKS="0",
    )
    assert result.stdout.split() == ["django.db.backends.postgresql", "30", "False"], result.stderr


SHOW_POOL = (
    "from django.conf import settings;"
    "print(settings.DATABASES['default'].get('OPTIONS', {}).get('pool'))"
)


def test_it_pools_postgresql_connections_by_default():
    result = _run(SHOW_POOL, DEBUG="0", DATABASE_URL="postgres://omg@db.example:5432/omg")
    assert result.stdout.strip() == "{'min_size': 2, 'max_size': 20, 'timeout': 5.0}", result.stderr


def test_it_sizes_the_pool_from_the_environment():
    result = _run(
        SHOW_POOL,
        DEBUG="0",
        DATABASE_URL="postgres://omg@db.example:5432/omg",
        DB_POOL_MIN="1",
        DB_POOL_MAX="8",
        DB_POOL_TIMEOUT="2.5",
    )
    assert result.stdout.strip() == "{'min_size': 1, 'max_size': 8, 'timeout': 2.5}", result.stderr


def test_it_turns_the_pool_off_with_a_max_of_0_and_never_pools_sqlite():
    off = _run(SHOW_POOL, DATABASE_URL="postgres://omg@db.example:5432/omg", DB_POOL_MAX="0")
    assert off.stdout.strip() == "None", off.stderr
    sqlite = _run(SHOW_POOL, DATABASE_URL="sqlite:///:memory:")
    assert sqlite.stdout.strip() == "None", sqlite.stderr


def test_it_refuses_persistent_connections_with_the_pool():
    # Django refuses them too, but only at the first query; this says so at start-up.
    result = _run(SHOW_POOL, DATABASE_URL="postgres://omg@db.example:5432/omg", CONN_MAX_AGE="60")
    assert result.returncode != 0
    assert "CONN_MAX_AGE must be 0 with the connection pool" in result.stderr


SHOW_LAYER = (
    "from django.conf import settings; c = settings.CHANNEL_LAYERS['default']['CONFIG']; "
    "h = c['hosts'][0]; "
    "print(h['max_connections'], h['socket_connect_timeout'], c['capacity'], c['group_expiry'])"
)


def test_it_sizes_the_channel_layer_from_the_environment():
    default = _run(SHOW_LAYER, REDIS_URL="redis://127.0.0.1:6379/0")
    assert default.stdout.strip() == "100 2 100 120", default.stderr
    sized = _run(
        SHOW_LAYER,
        REDIS_URL="redis://127.0.0.1:6379/0",
        CHANNEL_LAYER_MAX_CONNECTIONS="40",
        CHANNEL_LAYER_CAPACITY="500",
    )
    assert sized.stdout.strip() == "40 2 500 120", sized.stderr
