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
        CONN_MAX_AGE="30",
        CONN_HEALTH_CHECKS="0",
    )
    assert result.stdout.split() == ["django.db.backends.postgresql", "30", "False"], result.stderr
