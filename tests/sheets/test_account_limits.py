"""Limits on what a stranger could repeat: sign-ups per client, confirmation mails per client
and per address, join codes per client and per user (page and API). The test settings lift
these limits for the rest of the suite; here they are set low."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.cache import cache
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from tests.factories import make_campaign, make_user

pytestmark = pytest.mark.django_db

PASSWORD = "a-brand-new-phrase-7"


@pytest.fixture
def low_limits(settings: Any, throttle_clock: float) -> Any:
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "signup": "3/hour",
            "confirm_mail": "2/hour",
            "join": "3/min",
        },
    }
    cache.clear()
    yield
    cache.clear()


def sign_up(username: str, ip: str, email: str = "") -> Any:
    return Client(REMOTE_ADDR=ip).post(
        reverse("sheets:signup"),
        {"username": username, "email": email, "password1": PASSWORD, "password2": PASSWORD},
    )


def test_it_limits_sign_ups_per_client(low_limits):
    codes = [sign_up(f"user{i}", "10.1.0.1").status_code for i in range(3)]
    assert codes == [302, 302, 302]
    response = sign_up("one-more", "10.1.0.1")
    assert response.status_code == 429
    assert 1 <= int(response["Retry-After"]) <= 3600
    assert "Too many sign-ups from your network" in response.text
    assert 'value="one-more"' in response.text  # what was typed stays, but no password
    assert PASSWORD not in response.text
    assert not get_user_model().objects.filter(username="one-more").exists()
    # Every attempt counts (a name probed is one too), and others are left alone.
    taken = sign_up("user0", "10.1.0.1")
    assert taken.status_code == 429
    assert "already exists" not in taken.text
    assert sign_up("elsewhere", "10.1.0.2").status_code == 302


def test_it_limits_confirmation_mails_per_address(low_limits):
    victim = "victim@example.org"
    codes = [sign_up(f"user{i}", f"10.2.0.{i}", victim).status_code for i in range(2)]
    assert codes == [302, 302]
    assert len(mail.outbox) == 2
    # A third mail to that address, from another client and through the account page.
    make_user("ann")
    client = Client(REMOTE_ADDR="10.2.1.1")
    client.post(reverse("login"), {"username": "ann", "password": "correct-horse-battery"})
    response = client.post(reverse("sheets:account"), {"email": " Victim@Example.org"})
    assert response.status_code == 429
    assert "Too many confirmation mails" in response.text
    assert "none was sent" in response.text
    assert int(response["Retry-After"]) >= 1
    # And through the sign-up page: no account is made without its mail.
    refused = sign_up("mallory", "10.2.2.1", victim)
    assert refused.status_code == 429
    assert "leave it empty" in refused.text
    assert not get_user_model().objects.filter(username="mallory").exists()
    assert len(mail.outbox) == 2
    # Without an address the sign-up goes through.
    assert sign_up("mallory", "10.2.2.1").status_code == 302


def test_it_limits_confirmation_mails_per_client(low_limits):
    make_user("ann")
    client = Client(REMOTE_ADDR="10.3.0.1")
    client.post(reverse("login"), {"username": "ann", "password": "correct-horse-battery"})
    codes = [
        client.post(reverse("sheets:account"), {"email": f"a{i}@example.org"}).status_code
        for i in range(3)
    ]
    assert codes == [302, 302, 429]
    assert [m.to for m in mail.outbox] == [["a0@example.org"], ["a1@example.org"]]


def test_the_confirmation_mail_does_not_open_with_the_chosen_username(low_limits):
    sign_up("Cheap-pills.example", "10.4.0.1", "someone@example.org")
    (message,) = mail.outbox
    assert "Cheap-pills" not in message.body
    assert "Cheap-pills" not in message.subject


def join_page(client: Client, code: str) -> Any:
    return client.post(reverse("sheets:campaign_join"), {"code": code})


def test_it_limits_join_codes_per_user_on_the_page(low_limits):
    campaign = make_campaign(make_user("gm"))
    guesser = make_user("guesser")
    client = Client(REMOTE_ADDR="10.5.0.1")
    client.force_login(guesser)
    wrong = [join_page(client, f"WRONG{i:03}").status_code for i in range(3)]
    assert wrong == [200, 200, 200]
    response = join_page(client, campaign.join_code)  # even the right one, now
    assert response.status_code == 429
    assert "Too many join codes tried" in response.text
    assert int(response["Retry-After"]) >= 1
    assert not campaign.memberships.filter(user=guesser).exists()
    # From another address the same user is still refused; another user is not.
    other_ip = Client(REMOTE_ADDR="10.5.0.2")
    other_ip.force_login(guesser)
    assert join_page(other_ip, campaign.join_code).status_code == 429
    player = Client(REMOTE_ADDR="10.5.0.3")
    player.force_login(make_user("player"))
    assert join_page(player, campaign.join_code).status_code == 302


def test_it_limits_join_codes_per_client_on_the_page(low_limits):
    campaign = make_campaign(make_user("gm"))
    codes = []
    for i in range(4):
        client = Client(REMOTE_ADDR="10.6.0.1")
        client.force_login(make_user(f"sock{i}"))
        codes.append(join_page(client, campaign.join_code if i == 3 else "WRONG000").status_code)
    assert codes == [200, 200, 200, 429]
    assert not campaign.memberships.exists()


def test_it_limits_join_codes_through_the_api(low_limits):
    campaign = make_campaign(make_user("gm"))
    api = APIClient(REMOTE_ADDR="10.7.0.1")
    api.force_authenticate(make_user("guesser"))
    url = "/api/campaigns/join/"
    codes = [api.post(url, {"code": f"WRONG{i:03}"}, format="json").status_code for i in range(3)]
    assert codes == [400, 400, 400]
    response = api.post(url, {"code": campaign.join_code}, format="json")
    assert response.status_code == 429
    assert int(response["Retry-After"]) >= 1
    assert response.json()["detail"].startswith("Too many join codes tried.")
    assert not campaign.memberships.exists()
    # Per client too: another user from the same address.
    same_ip = APIClient(REMOTE_ADDR="10.7.0.1")
    same_ip.force_authenticate(make_user("sock"))
    assert same_ip.post(url, {"code": campaign.join_code}, format="json").status_code == 429
    elsewhere = APIClient(REMOTE_ADDR="10.7.0.2")
    elsewhere.force_authenticate(make_user("player"))
    assert elsewhere.post(url, {"code": campaign.join_code}, format="json").status_code == 201


def test_the_limits_fail_open_while_the_cache_is_down(low_limits, cache_down):
    assert sign_up("ann", "10.8.0.1", "ann@example.org").status_code == 302
    assert len(mail.outbox) == 1


def test_a_deployment_has_the_limits_on(monkeypatch):
    monkeypatch.setenv("SECRET_KEY", "x" * 50)
    monkeypatch.setenv("ALLOWED_HOSTS", "omg.example")
    path = Path(__file__).resolve().parents[2] / "config" / "settings.py"
    rates = runpy.run_path(str(path))["REST_FRAMEWORK"]["DEFAULT_THROTTLE_RATES"]
    assert (rates["signup"], rates["confirm_mail"], rates["join"]) == (
        "20/hour",
        "5/hour",
        "10/min",
    )
