from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from tests.factories import PASSWORD, make_user

pytestmark = pytest.mark.django_db


def test_it_signs_up_and_logs_in():
    from django.test import Client

    client = Client()
    response = client.post(
        reverse("sheets:signup"),
        {
            "username": "newbie",
            "password1": "a-long-pass-phrase",
            "password2": "a-long-pass-phrase",
        },
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("sheets:dashboard")
    assert client.get(reverse("sheets:dashboard")).status_code == 200
    assert get_user_model().objects.filter(username="newbie").exists()


def test_it_refuses_mismatched_passwords(client):
    response = client.post(
        reverse("sheets:signup"),
        {"username": "newbie", "password1": "a-long-pass-phrase", "password2": "different-one"},
    )
    assert response.status_code == 200
    assert "didn’t match" in response.text
    assert not get_user_model().objects.filter(username="newbie").exists()


def test_it_follows_a_safe_next_url_after_signup(client):
    response = client.post(
        reverse("sheets:signup"),
        {
            "username": "newbie",
            "password1": "a-long-pass-phrase",
            "password2": "a-long-pass-phrase",
            "next": "/campaigns/join/?code=ABCD2345",
        },
    )
    assert response["Location"] == "/campaigns/join/?code=ABCD2345"


def test_it_ignores_an_offsite_next_url(client):
    response = client.post(
        reverse("sheets:signup"),
        {
            "username": "newbie",
            "password1": "a-long-pass-phrase",
            "password2": "a-long-pass-phrase",
            "next": "//evil.example/",
        },
    )
    assert response["Location"] == reverse("sheets:dashboard")


def test_it_logs_in_and_out(client):
    make_user("ann")
    response = client.post(reverse("login"), {"username": "ann", "password": PASSWORD})
    assert response.status_code == 302
    assert client.get(reverse("sheets:dashboard")).status_code == 200
    client.post(reverse("logout"))
    assert client.get(reverse("sheets:dashboard")).status_code == 302


def test_it_refuses_a_wrong_password(client):
    make_user("ann")
    response = client.post(reverse("login"), {"username": "ann", "password": "nope"})
    assert response.status_code == 200
    assert "Please enter a correct username and password" in response.text


def test_it_changes_the_password(client):
    user = make_user("ann")
    client.force_login(user)
    response = client.post(
        reverse("password_change"),
        {
            "old_password": PASSWORD,
            "new_password1": "brand-new-phrase-9",
            "new_password2": "brand-new-phrase-9",
        },
    )
    assert response.status_code == 302
    user.refresh_from_db()
    assert user.check_password("brand-new-phrase-9")


def test_the_home_page_invites_anonymous_visitors(client):
    response = client.get(reverse("sheets:home"))
    assert response.status_code == 200
    assert reverse("sheets:signup") in response.text


def test_the_home_page_sends_users_to_the_dashboard(client):
    client.force_login(make_user())
    assert client.get(reverse("sheets:home"))["Location"] == reverse("sheets:dashboard")
