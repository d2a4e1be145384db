"""A forgotten password: reset by a link mailed to the account's confirmed address, through a
real SMTP server on localhost (aiosmtpd, in the test process)."""

from __future__ import annotations

import re
import runpy
import socket
import threading
from datetime import timedelta
from email import message_from_bytes
from email.message import Message
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.core.cache import cache
from django.db import connection
from django.tasks import task_backends
from django.tasks.backends.dummy import DummyBackend
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.factories import PASSWORD, make_user

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "a-brand-new-phrase-7"


class Inbox:
    """An SMTP server's handler: every message it accepts."""

    def __init__(self) -> None:
        self.messages: list[tuple[list[str], Message]] = []
        self.arrived = threading.Event()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.messages.append((list(envelope.rcpt_tos), message_from_bytes(envelope.content)))
        self.arrived.set()
        return "250 Message accepted for delivery"


@pytest.fixture
def smtp(settings: Any) -> Any:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    settings.MAILERS = {
        "default": {
            "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
            "OPTIONS": {"host": "127.0.0.1", "port": port, "use_tls": False, "timeout": 5},
        }
    }
    cache.clear()
    yield inbox
    controller.stop()
    cache.clear()


def ask_for_reset(email: str, client: Client | None = None, ip: str = "10.9.0.1") -> Any:
    client = client or Client(REMOTE_ADDR=ip)
    return client.post(reverse("password_reset"), {"email": email}, follow=True)


def reset_link(inbox: Inbox) -> str:
    (_, message), *_ = inbox.messages
    body = message.get_payload(decode=True).decode()  # type: ignore[union-attr]  # bytes: a text part
    match = re.search(r"https?://[^/\s]+(/accounts/password/reset/\S+/)", body)
    assert match, body
    return match.group(1)


def test_it_mails_a_link_that_resets_the_password_once(smtp):
    user = make_user("ann", email="ann@example.org")
    response = ask_for_reset("ANN@example.org")
    assert response.status_code == 200
    assert "Check your mail" in response.text
    assert len(smtp.messages) == 1
    recipients, message = smtp.messages[0]
    assert recipients == ["ann@example.org"]
    assert message["Subject"] == "Your OMG Table password"
    link = reset_link(smtp)

    client = Client()
    page = client.get(link, follow=True)
    assert "Choose a new password" in page.text
    done = client.post(
        page.redirect_chain[-1][0],
        {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
        follow=True,
    )
    assert "Password saved" in done.text
    user.refresh_from_db()
    assert user.check_password(NEW_PASSWORD)

    again = Client().get(link, follow=True)
    assert "This link does not work" in again.text
    assert "new_password1" not in again.text


def test_it_refuses_an_expired_link(smtp, settings, monkeypatch):
    user = make_user("ann", email="ann@example.org")
    ask_for_reset("ann@example.org")
    link = reset_link(smtp)
    later = PasswordResetTokenGenerator._now(PasswordResetTokenGenerator()) + timedelta(
        seconds=settings.PASSWORD_RESET_TIMEOUT + 1
    )
    monkeypatch.setattr(PasswordResetTokenGenerator, "_now", lambda self: later)
    response = Client().get(link, follow=True)
    assert "This link does not work" in response.text
    user.refresh_from_db()
    assert user.check_password(PASSWORD)


def test_it_expires_links_within_an_hour_by_default(settings):
    assert settings.PASSWORD_RESET_TIMEOUT <= 60 * 60


def test_it_refuses_a_wrong_token(smtp):
    user = make_user("ann", email="ann@example.org")
    ask_for_reset("ann@example.org")
    link = reset_link(smtp)
    uid = link.split("/")[-3]
    client = Client()
    for token in ("set-password", "abc-0123456789abcdef", link.split("/")[-2][:-1] + "x"):
        response = client.get(
            reverse("password_reset_confirm", kwargs={"uidb64": uid, "token": token}),
            follow=True,
        )
        assert "This link does not work" in response.text, token
        response = client.post(
            reverse("password_reset_confirm", kwargs={"uidb64": uid, "token": token}),
            {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
        )
        assert response.status_code == 200
    user.refresh_from_db()
    assert user.check_password(PASSWORD)


def test_it_answers_an_unknown_address_the_same_and_mails_nothing(smtp):
    make_user("ann", email="ann@example.org")
    known = ask_for_reset("ann@example.org", ip="10.9.0.2")
    unknown = ask_for_reset("nobody@example.org", ip="10.9.0.3")
    assert [r[1] for r in known.redirect_chain] == [r[1] for r in unknown.redirect_chain]
    assert known.redirect_chain[-1][0] == unknown.redirect_chain[-1][0]
    strip = re.compile(r'value="[^"]+"|"X-CSRFToken": "[^"]+"|nonce="[^"]+"')
    assert strip.sub("", known.text) == strip.sub("", unknown.text)
    assert [m[0] for m in smtp.messages] == [["ann@example.org"]]


def test_the_page_does_the_same_work_for_a_known_and_an_unknown_address(smtp, settings):
    """Whatever the address, the request queues one task with the same arguments and renders
    the same templates, with the same queries: the task finds the account and renders and
    sends the mail later, in the worker. (Done on the request path, that work made the answer
    for an account's address measurably slower: bench/bench_reset.py.)"""
    settings.TASKS = {"default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend"}}
    make_user("ann", email="ann@example.org")
    backend = task_backends["default"]
    assert isinstance(backend, DummyBackend)
    seen: dict[str, dict[str, Any]] = {}
    for name, email, ip in (
        ("known", "ann@example.org", "10.9.1.1"),
        ("unknown", "nobody@example.org", "10.9.1.2"),
    ):
        backend.clear()
        with CaptureQueriesContext(connection) as queries:
            response = Client(REMOTE_ADDR=ip).post(reverse("password_reset"), {"email": email})
        assert response.status_code == 302
        seen[name] = {
            "templates": [t.name for t in response.templates],
            "queries": [q["sql"].replace(email, "<email>") for q in queries],
            "tasks": [
                (r.task.name, {k: str(v).replace(email, "<email>") for k, v in r.kwargs.items()})
                for r in backend.results
            ],
            "results": list(backend.results),
        }
    known, unknown = seen["known"], seen["unknown"]
    for part in ("templates", "queries", "tasks"):
        assert known[part] == unknown[part], part
    assert len(known["tasks"]) == 1
    assert not any("email" in t for t in known["templates"])
    assert smtp.messages == []  # nothing mailed on the request path
    for result in known["results"] + unknown["results"]:
        result.task.call(*result.args, **result.kwargs)  # what the worker does
    assert [m[0] for m in smtp.messages] == [["ann@example.org"]]
    assert "/accounts/password/reset/" in reset_link(smtp)


def test_it_mails_no_link_to_an_address_not_yet_confirmed(smtp):
    client = Client()
    client.post(
        reverse("sheets:signup"),
        {
            "username": "ann",
            "email": "ann@example.org",
            "password1": NEW_PASSWORD,
            "password2": NEW_PASSWORD,
        },
    )
    assert [m[1]["Subject"] for m in smtp.messages] == ["Confirm your email address for OMG Table"]
    ask_for_reset("ann@example.org")
    assert len(smtp.messages) == 1


def test_it_limits_requests_per_address(smtp, settings, throttle_clock):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "password_reset": "2/hour",
        },
    }
    make_user("ann", email="ann@example.org")
    codes = [
        Client(REMOTE_ADDR=f"10.8.0.{i}")
        .post(reverse("password_reset"), {"email": " Ann@Example.org"})
        .status_code
        for i in range(1, 4)
    ]
    assert codes == [302, 302, 429]
    assert len(smtp.messages) == 2


def test_it_limits_requests_per_client(smtp, settings, throttle_clock):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "password_reset": "2/hour",
        },
    }
    client = Client(REMOTE_ADDR="10.7.0.1")
    codes = [
        client.post(reverse("password_reset"), {"email": f"u{i}@example.org"}).status_code
        for i in range(3)
    ]
    assert codes == [302, 302, 429]
    response = client.post(reverse("password_reset"), {"email": "u9@example.org"})
    assert response.status_code == 429
    assert 1 <= int(response["Retry-After"]) <= 3600
    assert "No mail was sent" in response.text


def test_a_reset_ends_every_session_of_the_account(smtp):
    user = make_user("ann", email="ann@example.org")
    thief = Client()
    thief.post(reverse("login"), {"username": "ann", "password": PASSWORD})
    assert thief.get(reverse("sheets:dashboard")).status_code == 200
    ask_for_reset("ann@example.org")
    client = Client()
    page = client.get(reset_link(smtp), follow=True)
    client.post(
        page.redirect_chain[-1][0],
        {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    response = thief.get(reverse("sheets:dashboard"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))
    assert not user.login_sessions.exists()


def test_the_login_page_links_to_the_reset(client):
    assert reverse("password_reset") in client.get(reverse("login")).text


def test_it_refuses_a_weak_new_password_with_the_validators_words(smtp):
    make_user("ann", email="ann@example.org")
    ask_for_reset("ann@example.org")
    client = Client()
    page = client.get(reset_link(smtp), follow=True)
    response = client.post(
        page.redirect_chain[-1][0], {"new_password1": "123", "new_password2": "123"}
    )
    assert response.status_code == 200
    assert "This password is too short" in response.text
    assert "This password is entirely numeric" in response.text


def mail_settings(monkeypatch: Any, **env: str) -> dict[str, Any]:
    """config/settings.py's MAILERS for this environment (read afresh, nothing installed)."""
    for name in ("EMAIL_HOST", "EMAIL_PORT", "EMAIL_USE_TLS", "EMAIL_USE_SSL", "DEBUG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SECRET_KEY", "x" * 50)
    monkeypatch.setenv("ALLOWED_HOSTS", "omg.example")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    path = Path(__file__).resolve().parents[2] / "config" / "settings.py"
    mailers: dict[str, Any] = runpy.run_path(str(path))["MAILERS"]["default"]
    return mailers


def test_a_laptop_prints_mail_on_the_console(monkeypatch):
    assert mail_settings(monkeypatch, DEBUG="1")["BACKEND"].endswith("console.EmailBackend")


def test_a_deployment_sends_mail_by_smtp(monkeypatch):
    local = mail_settings(monkeypatch, DEBUG="0")
    assert local["BACKEND"].endswith("smtp.EmailBackend")
    options = local["OPTIONS"]
    assert (options["host"], options["port"], options["use_tls"]) == ("localhost", 25, False)
    relay = mail_settings(monkeypatch, DEBUG="0", EMAIL_HOST="smtp.example.org")["OPTIONS"]
    assert (relay["host"], relay["port"], relay["use_tls"], relay["use_ssl"]) == (
        "smtp.example.org",
        587,
        True,
        False,
    )
    ssl = mail_settings(monkeypatch, EMAIL_HOST="smtp.example.org", EMAIL_USE_SSL="1")["OPTIONS"]
    assert (ssl["port"], ssl["use_tls"], ssl["use_ssl"]) == (465, False, True)
