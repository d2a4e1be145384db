"""Settings, health check, OpenAPI schema, security headers, demo data."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

from sheets.models import Campaign

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.django_db
def test_healthz_checks_database_and_channel_layer(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "channel_layer": "ok"}


@pytest.mark.django_db
def test_healthz_reports_a_broken_channel_layer(client, settings):
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": ["redis://127.0.0.1:1/0"]},
        }
    }
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    try:
        response = client.get("/healthz")
    finally:
        channel_layers.backends.clear()
    assert response.status_code == 503
    assert response.json()["channel_layer"] == "error"


@pytest.mark.django_db
def test_pages_send_a_content_security_policy(client):
    response = client.get(reverse("login"))
    policy = response["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy


@pytest.mark.django_db
def test_pages_have_no_inline_scripts(client):
    import re

    page = client.get(reverse("login")).text
    for tag in re.findall(r"<script[^>]*>", page):
        assert "src=" in tag, tag


@pytest.mark.django_db
def test_the_schema_is_valid_openapi(tmp_path):
    out = tmp_path / "schema.yml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    assert "/api/campaigns/" in out.read_text()


@pytest.mark.django_db
def test_the_api_docs_are_served_by_the_app(client):
    response = client.get(reverse("api:docs"))
    assert response.status_code == 200
    assert "swagger-ui" in response.text
    assert "cdn" not in response.text.lower()


@pytest.mark.django_db
def test_demo_data_loads_twice_without_duplicates():
    call_command("demo")
    call_command("demo")
    campaign = Campaign.objects.get(name="The Sunken Keep")
    assert campaign.gm.username == "gm"
    assert sorted(m.user.username for m in campaign.memberships.all()) == ["alice", "bob"]
    assert Campaign.objects.count() == 1
    assert sorted(campaign.characters.values_list("name", flat=True)) == [
        "Drowned Knight",
        "Salvager Thug",
        "Salvager Thug #1",
        "Salvager Thug #2",
        "Tamsin Reed",
        "Ysolde Varr",
    ]
    assert campaign.characters.get(name="Ysolde Varr").owner.username == "alice"
    # A prepared encounter: the heroes against two hidden thugs, waiting for the GM.
    (encounter,) = campaign.encounters.all()
    assert encounter.status == "preparing"
    assert sorted(
        (p.character.name, p.hidden) for p in encounter.participants.select_related("character")
    ) == [
        ("Salvager Thug #1", True),
        ("Salvager Thug #2", True),
        ("Tamsin Reed", False),
        ("Ysolde Varr", False),
    ]


def _manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    environ.update({"DJANGO_SETTINGS_MODULE": "config.settings", **env})
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_production_mode_passes_the_deploy_check():
    result = _manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DEBUG="0",
        SECRET_KEY="x" * 64 + "-a-long-random-production-secret",
        ALLOWED_HOSTS="omg.example",
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_production_mode_refuses_a_missing_secret_key():
    result = _manage("check", DEBUG="0", SECRET_KEY="", ALLOWED_HOSTS="omg.example")
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_a_bad_boolean_is_reported():
    result = _manage("check", DEBUG="maybe")
    assert result.returncode != 0
    assert "DEBUG must be a boolean" in result.stderr


def test_redis_url_selects_the_redis_channel_layer():
    result = _manage(
        "shell",
        "--no-imports",
        "-c",
        "from django.conf import settings; print(settings.CHANNEL_LAYERS['default']['BACKEND'])",
        REDIS_URL="redis://127.0.0.1:6399/0",
    )
    assert result.stdout.strip() == "channels_redis.core.RedisChannelLayer", result.stderr
