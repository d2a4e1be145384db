"""Structured logging: one JSON line per request with its id, user, path, status and duration;
no credential in any line; JSON or text chosen by LOG_FORMAT / DEBUG."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import User
from django.db.models.signals import post_delete
from django.http import HttpResponse
from django.test import AsyncClient, Client, RequestFactory
from django.urls import reverse

from combat import services
from config.logging import REDACTED, JsonFormatter, RequestContextFilter, scrub
from config.request_log import RequestLogMiddleware
from sheets.models import ApiToken
from tests.factories import PASSWORD, make_user

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def log():
    """What the root logger writes, through the production formatter and filter."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RequestContextFilter())
    root, requests = logging.getLogger(), logging.getLogger("omg.request")
    level = requests.level
    root.addHandler(handler)
    requests.setLevel(logging.INFO)

    class Log:
        @property
        def text(self) -> str:
            return stream.getvalue()

        def lines(self) -> list[dict]:
            return [json.loads(line) for line in self.text.splitlines()]

        def requests(self) -> list[dict]:
            return [line for line in self.lines() if line["logger"] == "omg.request"]

    yield Log()
    root.removeHandler(handler)
    requests.setLevel(level)


@pytest.mark.django_db
def test_it_logs_one_json_line_per_request(client, log):
    response = client.get("/healthz")
    [line] = log.requests()
    assert line["request_id"] == response["X-Request-ID"]
    assert len(line["request_id"]) == 32
    assert line["level"] == "INFO"
    assert line["method"] == "GET"
    assert line["path"] == "/healthz"
    assert line["status"] == 200
    assert line["user_id"] is None
    assert 0 <= line["duration_ms"] < 60_000
    assert line["message"].startswith("GET /healthz 200 ")
    assert line["time"].endswith("+00:00")
    assert line["pid"] == os.getpid()


@pytest.mark.django_db
def test_it_logs_the_user_of_a_session(client, log):
    user = make_user()
    client.force_login(user)
    client.get(reverse("sheets:dashboard"))
    [line] = log.requests()
    assert (line["user_id"], line["status"], line["path"]) == (user.pk, 200, "/dashboard/")


@pytest.mark.django_db
def test_it_logs_the_user_of_a_token_but_never_the_token(client, log):
    user = make_user()
    _, key = ApiToken.objects.create_token(user=user, name="bot")
    response = client.get("/api/characters/", headers={"Authorization": f"Token {key}"})
    assert response.status_code == 200
    [line] = log.requests()
    assert (line["user_id"], line["path"]) == (user.pk, "/api/characters/")
    assert key not in log.text
    assert key[:12] not in log.text


@pytest.mark.django_db(transaction=True)
def test_it_logs_the_user_of_an_account_deletion_that_failed_at_commit(log):
    """Django clears a deleted user's pk before the COMMIT. When the COMMIT then fails (here
    a row written in the same transaction still points at the user, as the rows of a strike
    committed meanwhile used to), the account is still there, and the 500 is logged with
    its user: reading the cleared pk raised TypeError in the log middleware instead."""
    user = make_user()
    client = Client(raise_request_exception=False)
    client.force_login(user)

    def meanwhile(sender: Any, instance: Any, **kwargs: Any) -> None:
        # A bare row: create_token itself would find the account gone and refuse.
        ApiToken.objects.create(
            user=instance, name="written meanwhile", key_hash="0" * 64, prefix="00000000"
        )

    post_delete.connect(meanwhile, sender=type(user), dispatch_uid="test_meanwhile")
    try:
        response = client.post(reverse("sheets:account_delete"), {"password": PASSWORD})
    finally:
        post_delete.disconnect(sender=type(user), dispatch_uid="test_meanwhile")
    assert response.status_code == 500
    [line] = log.requests()
    assert (line["status"], line["level"], line["user_id"]) == (500, "ERROR", user.pk)
    assert type(user).objects.filter(pk=user.pk).exists()


def test_it_logs_no_user_for_one_the_request_deleted(log):
    """A user deleted by the request has no pk any more (Django clears it): no user id."""
    request = RequestFactory().post("/account/delete/")
    request.user = User(username="gone")
    RequestLogMiddleware(lambda request: HttpResponse(status=302))(request)
    [line] = log.requests()
    assert (line["status"], line["user_id"]) == (302, None)


@pytest.mark.django_db
def test_it_never_logs_passwords_tokens_or_session_keys(client, log):
    user = make_user("dana")
    client.post(reverse("login"), {"username": "dana", "password": "wrong-" + PASSWORD})
    client.post(reverse("login"), {"username": "dana", "password": PASSWORD})
    session_key = client.cookies["sessionid"].value
    client.get("/api/characters/?token=query-secret-123&password=query-pass-456")
    Client().get("/api/characters/", headers={"Authorization": "Token not-a-real-key-789xyz"})
    Client().get("/api/characters/", headers={"Authorization": "Basic ZGFuYTpodW50ZXIy"})

    statuses = [(line["path"], line["status"]) for line in log.requests()]
    assert statuses == [
        ("/accounts/login/", 200),
        ("/accounts/login/", 302),
        ("/api/characters/", 200),
        ("/api/characters/", 401),
        ("/api/characters/", 401),
    ]
    assert log.requests()[1]["user_id"] == user.pk
    # django.request's own warning about each 401 went through the same formatter, with the
    # id of its request.
    warnings = [line for line in log.lines() if line["logger"] == "django.request"]
    assert [w["request_id"] for w in warnings] == [r["request_id"] for r in log.requests()[3:]]
    for secret in (
        PASSWORD,
        session_key,
        "query-secret-123",
        "query-pass-456",
        "not-a-real-key-789xyz",
        "ZGFuYTpodW50ZXIy",
    ):
        assert secret not in log.text


@pytest.mark.django_db
def test_it_puts_the_request_id_on_every_line_of_the_request(client, log, settings):
    from channels.layers import channel_layers

    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": ["redis://127.0.0.1:1/0"]},
        }
    }
    channel_layers.backends.clear()
    try:
        response = client.get("/healthz", headers={"X-Request-ID": "proxy-id-0001"})
    finally:
        channel_layers.backends.clear()
    assert response.status_code == 503
    assert response["X-Request-ID"] == "proxy-id-0001"
    warning = next(line for line in log.lines() if line["logger"] == "config.health")
    assert warning["request_id"] == "proxy-id-0001"
    assert log.requests()[0]["request_id"] == "proxy-id-0001"
    assert log.requests()[0]["level"] == "ERROR"  # a 503 is a server error


@pytest.mark.django_db
def test_it_makes_its_own_id_when_the_given_one_is_not_sane(client, log):
    response = client.get("/healthz", headers={"X-Request-ID": "a b\u00e9" * 30})
    assert response["X-Request-ID"] != "a b\u00e9" * 30
    assert log.requests()[0]["request_id"] == response["X-Request-ID"]


@pytest.mark.django_db(transaction=True)
def test_it_logs_asgi_requests_and_the_start_of_an_event_stream(log, table):
    encounter, _ = services.create_encounter(campaign=table.campaign, name="Ambush", actor=table.gm)

    async def scenario() -> None:
        client = AsyncClient()
        await client.aforce_login(table.player)
        await client.get("/healthz")
        response = await client.get(f"/encounters/{encounter.pk}/events/")
        chunks = aiter(response.streaming_content)  # type: ignore[attr-defined]  # a streaming response
        assert (await anext(chunks)).startswith(b"event: hello")
        await chunks.aclose()

    async_to_sync(scenario)()
    health, stream = log.requests()
    assert (health["path"], health["status"], health["user_id"]) == ("/healthz", 200, None)
    assert stream["path"] == f"/encounters/{encounter.pk}/events/"
    assert (stream["status"], stream["streaming"]) == (200, True)
    assert stream["user_id"] == table.player.pk


def _record(msg: str = "hello", *args: object, exc: bool = False, **extra: object):
    record = logging.LogRecord("omg.test", logging.WARNING, __file__, 1, msg, args, None)
    if exc:
        try:
            raise ValueError("password=hunter2 in an error")
        except ValueError:
            record.exc_info = sys.exc_info()
    for name, value in extra.items():
        setattr(record, name, value)
    return json.loads(JsonFormatter().format(record))


def test_it_redacts_fields_that_name_a_credential():
    line = _record(
        password="hunter2",
        api_key="k-123",
        headers={"Authorization": "Token abcdefghijkl", "Accept": "text/html"},
        user_id=7,
        tags=["a", 1],
    )
    assert line["password"] == REDACTED
    assert line["api_key"] == REDACTED
    assert line["headers"] == {"Authorization": REDACTED, "Accept": "text/html"}
    assert (line["user_id"], line["tags"]) == (7, ["a", 1])


def test_it_scrubs_credentials_written_in_messages_and_tracebacks():
    line = _record("sent %s", "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.x", exc=True)
    assert line["message"] == "sent Authorization: Bearer [redacted]"
    assert "hunter2" not in line["exc"]
    assert "ValueError: password=[redacted] in an error" in line["exc"]
    assert scrub("/x?next=/a&csrfmiddlewaretoken=abc&token=t0k") == (
        "/x?next=/a&csrfmiddlewaretoken=[redacted]&token=[redacted]"
    )
    assert scrub('{"password": "p w", "name": "Ysolde"}') == (
        '{"password": [redacted], "name": "Ysolde"}'
    )
    assert scrub("Token revoked; 12 tokens left") == "Token revoked; 12 tokens left"


@pytest.mark.parametrize(
    "text",
    ["/" + "a" * 10_000, "token" * 2_000, 'token="' * 1_500, "a" + " " * 10_000 + "b"],
)
def test_it_scrubs_a_long_text_in_time_proportional_to_its_length(text):
    """A 404 logs its path: the old pattern tried every word from each of its letters, and a
    path of 10,000 letters took about 25 s to scrub (a worker held by one request). The
    bound is generous; the reading is linear (config/logging.py, _scrub_pairs)."""
    started = time.monotonic()
    scrub(text)
    assert time.monotonic() - started < 1


def test_it_still_finds_a_secret_pair_inside_another_pairs_value():
    assert scrub("next=/a?token=t0k&x=1") == "next=/a?token=[redacted]&x=1"
    assert scrub("a=api-key=abc") == "a=api-key=[redacted]"
    assert scrub("secret='never closed") == "secret=[redacted]"


def test_it_leaves_out_objects_that_are_not_plain_data():
    class Request:
        def __str__(self) -> str:
            return "<ASGIRequest: GET '/x?token=leak'>"

    line = _record(request=Request(), status_code=401, color_message="\x1b[36mhello\x1b[0m")
    assert "request" not in line
    assert "color_message" not in line  # uvicorn's coloured copy of the message
    assert line["status_code"] == 401


def test_it_writes_one_line_per_record_whatever_the_message():
    record = logging.LogRecord("omg.test", logging.INFO, __file__, 1, "two\nlines", (), None)
    assert "\n" not in JsonFormatter().format(record)


# --- The settings, in a process of their own -------------------------------------------------

REQUEST = (
    "from django.test import Client;"
    "r = Client().get('/healthz', secure=True,"
    " headers={'Authorization': 'Token sub-process-secret-key'});"
    "print(r.status_code)"
)


def _serve_one_request(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "REDIS_URL", "LOG_FORMAT", "LOG_LEVEL", "DEBUG"}
    }
    environ.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        SECRET_KEY="x" * 64,
        ALLOWED_HOSTS="testserver",
        **env,
    )
    return subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", REQUEST],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_it_writes_json_lines_in_production(tmp_path):
    result = _serve_one_request(tmp_path, DEBUG="0")
    assert result.stdout.strip() == "200", result.stderr
    lines = [json.loads(line) for line in result.stderr.splitlines()]
    [line] = [line for line in lines if line["logger"] == "omg.request"]
    assert (line["path"], line["status"], line["user_id"]) == ("/healthz", 200, None)
    assert {"request_id", "duration_ms", "time", "level", "pid"} <= line.keys()
    assert "sub-process-secret-key" not in result.stderr


def test_it_writes_text_on_a_laptop_or_when_asked(tmp_path):
    for env in ({"DEBUG": "1"}, {"DEBUG": "0", "LOG_FORMAT": "text"}):
        result = _serve_one_request(tmp_path, **env)
        assert result.stdout.strip() == "200", result.stderr
        assert " INFO omg.request GET /healthz 200 " in result.stderr
        assert not result.stderr.lstrip().startswith("{")


def test_it_follows_log_level(tmp_path):
    result = _serve_one_request(tmp_path, DEBUG="0", LOG_LEVEL="warning")
    assert result.stdout.strip() == "200", result.stderr
    assert "omg.request" not in result.stderr


def test_it_refuses_an_unknown_format_or_level(tmp_path):
    result = _serve_one_request(tmp_path, LOG_FORMAT="xml")
    assert result.returncode != 0
    assert "LOG_FORMAT must be json or text" in result.stderr
    result = _serve_one_request(tmp_path, LOG_LEVEL="loud")
    assert result.returncode != 0
    assert "LOG_LEVEL must be one of" in result.stderr
