"""Login attempts are throttled per username and per address (config/throttling.py); the
rules API is throttled per caller (rules/api/)."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from tests.factories import PASSWORD, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def low_limits(settings: Any, throttle_clock: float) -> Any:
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "login": "3/min",
            "rules_anon": "2/min",
            "rules_user": "3/min",
        },
    }
    cache.clear()
    yield
    cache.clear()


def attempt(username: str, guess: str = "wrong", ip: str = "10.0.0.1") -> Any:
    return Client(REMOTE_ADDR=ip).post(reverse("login"), {"username": username, "password": guess})


def test_it_throttles_guesses_at_one_username_from_many_addresses():
    make_user("victim")
    codes = [attempt("victim", ip=f"10.0.0.{i}").status_code for i in range(1, 5)]
    assert codes == [200, 200, 200, 429]


def test_it_counts_a_username_however_its_case_is_typed():
    make_user("victim")
    names = ["victim", "Victim", " VICTIM "]
    codes = [attempt(name, ip=f"10.1.0.{i}").status_code for i, name in enumerate(names)]
    assert codes == [200, 200, 200]
    assert attempt("ViCtIm", ip="10.1.0.9").status_code == 429


def test_it_throttles_one_address_guessing_many_usernames():
    codes = [attempt(f"user{i}", ip="10.2.0.1").status_code for i in range(4)]
    assert codes == [200, 200, 200, 429]


def test_it_answers_429_with_a_clear_page_and_retry_after():
    for _ in range(3):
        attempt("victim")
    response = attempt("victim")
    assert response.status_code == 429
    assert 1 <= int(response["Retry-After"]) <= 60
    page = response.content.decode()
    assert "Too many login attempts" in page
    assert f"Wait {response['Retry-After']} second" in page
    assert "Content-Security-Policy" in response


def test_it_does_not_check_the_password_while_throttled():
    make_user("victim")
    for _ in range(3):
        attempt("victim")
    client = Client(REMOTE_ADDR="10.3.0.1")
    response = client.post(reverse("login"), {"username": "victim", "password": PASSWORD})
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session


def test_it_leaves_other_users_and_addresses_alone():
    make_user("victim")
    make_user("bystander")
    for i in range(4):
        attempt("victim", ip=f"10.4.0.{i}")
    response = attempt("bystander", PASSWORD, ip="10.4.1.1")
    assert response.status_code == 302


def test_it_lets_a_table_of_players_behind_one_router_log_in():
    players = [make_user(f"player{i}") for i in range(6)]
    codes = [attempt(p.get_username(), PASSWORD, ip="192.168.1.1").status_code for p in players]
    assert codes == [302] * 6


def test_it_opens_again_in_the_next_window(monkeypatch, throttle_clock):
    start = throttle_clock
    for _ in range(3):
        attempt("victim")
    assert attempt("victim").status_code == 429
    monkeypatch.setattr("config.throttling.time.time", lambda: start + 61)
    assert attempt("victim").status_code == 200


def test_it_does_not_throttle_the_login_page_itself():
    for _ in range(5):
        attempt("victim")
    assert Client(REMOTE_ADDR="10.0.0.1").get(reverse("login")).status_code == 200


def admin_attempt(username: str, guess: str = "wrong", ip: str = "10.0.0.1") -> Any:
    return Client(REMOTE_ADDR=ip).post(
        reverse("admin:login"), {"username": username, "password": guess}
    )


def test_it_counts_admin_login_attempts_with_the_login_page_ones():
    make_user("victim", is_staff=True)
    assert [attempt("victim", ip=f"10.8.0.{i}").status_code for i in range(3)] == [200] * 3
    response = admin_attempt("victim", ip="10.8.1.1")
    assert response.status_code == 429
    assert 1 <= int(response["Retry-After"]) <= 60
    assert "Too many login attempts" in response.content.decode()


def test_it_counts_login_page_attempts_with_the_admin_ones():
    make_user("victim", is_staff=True)
    assert [admin_attempt("victim", ip=f"10.9.0.{i}").status_code for i in range(3)] == [200] * 3
    assert attempt("victim", ip="10.9.1.1").status_code == 429


def test_it_throttles_one_address_guessing_many_usernames_on_both_pages():
    codes = [admin_attempt(f"user{i}", ip="10.10.0.1").status_code for i in range(2)]
    codes += [attempt("user2", ip="10.10.0.1").status_code]
    assert codes == [200, 200, 200]
    assert admin_attempt("user3", ip="10.10.0.1").status_code == 429


def test_it_lets_a_correct_admin_login_through_under_the_limit():
    make_user("boss", is_staff=True, is_superuser=True)
    assert [admin_attempt("boss", ip="10.11.0.1").status_code for _ in range(2)] == [200, 200]
    client = Client(REMOTE_ADDR="10.11.0.1")
    response = client.post(reverse("admin:login"), {"username": "boss", "password": PASSWORD})
    assert response.status_code == 302
    assert client.get(reverse("admin:index")).status_code == 200
    # The success was given back: the two failures leave one more try.
    assert admin_attempt("boss", ip="10.11.0.2").status_code == 200
    assert admin_attempt("boss", ip="10.11.0.3").status_code == 429


def rules_post(client: Client) -> Any:
    return client.post(
        "/api/rules/omg/check/",
        json.dumps({"pro": 70, "dif": 20, "roll": 43}),
        content_type="application/json",
    )


def test_it_throttles_anonymous_rules_callers_per_address():
    codes = [rules_post(Client(REMOTE_ADDR="10.5.0.1")).status_code for _ in range(3)]
    assert codes == [200, 200, 429]
    response = rules_post(Client(REMOTE_ADDR="10.5.0.1"))
    assert response.json()["detail"]
    assert int(response["Retry-After"]) >= 1
    assert rules_post(Client(REMOTE_ADDR="10.5.0.2")).status_code == 200


def test_it_throttles_logged_in_rules_callers_at_their_own_rate():
    client = Client(REMOTE_ADDR="10.6.0.1")
    client.force_login(make_user("roller"))
    codes = [rules_post(client).status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]


def test_it_lets_logins_and_rules_calls_through_while_the_cache_is_down(cache_down, caplog):
    make_user("alice")
    with caplog.at_level(logging.WARNING, logger="config.throttling"):
        assert attempt("alice", PASSWORD).status_code == 302
        assert [attempt("alice").status_code for _ in range(5)] == [200] * 5
        assert [rules_post(Client(REMOTE_ADDR="10.7.0.1")).status_code for _ in range(3)] == [
            200
        ] * 3
        client = Client(REMOTE_ADDR="10.7.0.2")
        client.force_login(make_user("roller"))
        assert [rules_post(client).status_code for _ in range(4)] == [200] * 4
    warnings = [r for r in caplog.records if r.name == "config.throttling"]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    assert warnings[0].levelno == logging.WARNING
    assert "cache" in warnings[0].getMessage()


def test_it_warns_again_about_a_cache_still_down_after_the_interval(cache_down, caplog):
    import config.throttling as throttling

    with caplog.at_level(logging.WARNING, logger="config.throttling"):
        attempt("alice")
        throttling._warned_at -= throttling.CACHE_WARNING_INTERVAL + 1
        attempt("alice")
        attempt("alice")
    assert len([r for r in caplog.records if r.name == "config.throttling"]) == 2


def forged(ip: str, forwarded: str) -> Client:
    return Client(REMOTE_ADDR=ip, headers={"x-forwarded-for": forwarded})


def test_a_forged_forwarded_for_does_not_make_a_new_address():
    """With no trusted proxy (the default) X-Forwarded-For is the client's own word: 150
    rules calls and login guesses, each naming a new address, are all counted against the
    one they come from (before, every one of them passed)."""
    codes = [
        rules_post(forged("10.7.0.1", f"198.51.100.{i % 250}, 203.0.113.{i // 250}")).status_code
        for i in range(150)
    ]
    assert codes[:2] == [200, 200] and set(codes[2:]) == {429}
    logins = [
        forged("10.7.0.2", f"198.51.100.{i}").post(
            reverse("login"), {"username": f"user{i}", "password": "wrong"}
        )
        for i in range(4)
    ]
    assert [r.status_code for r in logins] == [200, 200, 200, 429]


def test_behind_a_trusted_proxy_the_client_is_the_address_it_forwarded(settings):
    """From a proxy in TRUSTED_PROXIES, the client is the rightmost forwarded address that is
    not a proxy: what the client itself put further left changes nothing."""
    settings.TRUSTED_PROXIES = ["127.0.0.1", "10.9.0.0/16"]
    via = "127.0.0.1"
    codes = [
        rules_post(forged(via, f"198.51.100.{i}, 203.0.113.7, 10.9.0.4")).status_code
        for i in range(3)
    ]
    assert codes == [200, 200, 429]  # all 203.0.113.7, whatever it forged to the left
    assert rules_post(forged(via, "203.0.113.8")).status_code == 200  # another client
    assert rules_post(forged("10.7.0.9", "203.0.113.99")).status_code == 200
    # A client that is not a trusted proxy is itself, whatever it forwards.
    assert rules_post(forged("10.7.0.9", "203.0.113.100")).status_code == 200
    assert rules_post(forged("10.7.0.9", "203.0.113.101")).status_code == 429


def test_a_trusted_proxies_typo_stops_the_start(monkeypatch):
    from django.core.exceptions import ImproperlyConfigured

    from config.settings import env_networks

    monkeypatch.setenv("TRUSTED_PROXIES", "10.0.0.1, 192.168.0.0/16")
    assert env_networks("TRUSTED_PROXIES") == ["10.0.0.1", "192.168.0.0/16"]
    monkeypatch.setenv("TRUSTED_PROXIES", "10.0.0.1, nginx")
    with pytest.raises(ImproperlyConfigured, match="nginx"):
        env_networks("TRUSTED_PROXIES")
