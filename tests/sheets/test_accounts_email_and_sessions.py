"""An email address of one's own, confirmed by a link before it is used; the sessions someone
is logged in with, and ending the others."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.core import mail, signing
from django.test import Client
from django.urls import reverse

from sheets import accounts
from tests.factories import PASSWORD, make_campaign, make_user

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "a-brand-new-phrase-7"


def confirm_link() -> str:
    body = str(mail.outbox[-1].body)
    match = re.search(r"https?://[^/\s]+(/account/email/\S+/)", body)
    assert match, body
    return match.group(1)


def test_it_keeps_an_address_given_at_signup_until_it_is_confirmed():
    client = Client()
    response = client.post(
        reverse("sheets:signup"),
        {
            "username": "ann",
            "email": "ann@example.org",
            "password1": NEW_PASSWORD,
            "password2": NEW_PASSWORD,
        },
        follow=True,
    )
    assert "We mailed a link to ann@example.org" in response.text
    assert mail.outbox[-1].to == ["ann@example.org"]
    link = confirm_link()
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.get(username="ann")
    assert user.email == ""
    # Opening the link (a mail scanner does) changes nothing: the button does.
    assert client.get(link).status_code == 200
    user.refresh_from_db()
    assert user.email == ""
    response = client.post(link, follow=True)
    assert "ann@example.org is now your address" in response.text
    user.refresh_from_db()
    assert user.email == "ann@example.org"


def test_it_signs_up_without_an_address():
    client = Client()
    response = client.post(
        reverse("sheets:signup"),
        {"username": "ann", "password1": NEW_PASSWORD, "password2": NEW_PASSWORD},
    )
    assert response.status_code == 302
    assert mail.outbox == []


def test_it_changes_the_address_from_the_account_page(client):
    user = make_user("ann", email="old@example.org")
    client.force_login(user)
    response = client.post(reverse("sheets:account"), {"email": "new@example.org"})
    assert response.status_code == 302
    user.refresh_from_db()
    assert user.email == "old@example.org"
    client.post(confirm_link())
    user.refresh_from_db()
    assert user.email == "new@example.org"


def test_it_says_what_is_wrong_with_an_address(client):
    client.force_login(make_user("ann"))
    response = client.post(reverse("sheets:account"), {"email": "not an address"})
    assert response.status_code == 200
    assert "Enter a valid email address." in response.text
    assert mail.outbox == []


def test_it_uses_a_link_once(client):
    user = make_user("ann")
    client.force_login(user)
    client.post(reverse("sheets:account"), {"email": "first@example.org"})
    first = confirm_link()
    client.post(reverse("sheets:account"), {"email": "second@example.org"})
    second = confirm_link()
    client.post(second)
    response = client.post(first)
    assert response.status_code == 400
    assert "used, or a newer one replaced it" in response.text
    user.refresh_from_db()
    assert user.email == "second@example.org"


@pytest.mark.parametrize(
    ("token", "message"),
    [
        ("garbage", "not valid"),
        (lambda u: accounts.email_token(make_user("bob"), "x@example.org"), "another account"),
    ],
)
def test_it_refuses_a_wrong_link(client, token, message):
    user = make_user("ann")
    client.force_login(user)
    token = token(user) if callable(token) else token
    response = client.post(reverse("sheets:email_confirm", kwargs={"token": token}))
    assert response.status_code == 400
    assert message in response.text
    user.refresh_from_db()
    assert user.email == ""


def test_it_refuses_an_expired_link(client, monkeypatch):
    user = make_user("ann")
    client.force_login(user)
    token = accounts.email_token(user, "ann@example.org")
    real = signing.TimestampSigner.unsign

    def later(self: Any, value: str, max_age: Any = None) -> Any:
        if max_age is not None:
            max_age = -1  # the clock moved past the link's lifetime
        return real(self, value, max_age=max_age)

    monkeypatch.setattr(signing.TimestampSigner, "unsign", later)
    response = client.post(reverse("sheets:email_confirm", kwargs={"token": token}))
    assert response.status_code == 400
    assert "expired" in response.text


def test_it_refuses_an_address_another_account_has(client):
    make_user("bob", email="shared@example.org")
    user = make_user("ann")
    client.force_login(user)
    token = accounts.email_token(user, "Shared@example.org")
    response = client.post(reverse("sheets:email_confirm", kwargs={"token": token}))
    assert response.status_code == 400
    assert "belongs to another account" in response.text


def test_a_link_needs_its_account_logged_in(client):
    user = make_user("ann")
    token = accounts.email_token(user, "ann@example.org")
    url = reverse("sheets:email_confirm", kwargs={"token": token})
    response = client.post(url)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


# --- Sessions ---------------------------------------------------------------------------------


def logged_in(username: str = "ann") -> Client:
    client = Client()
    response = client.post(reverse("login"), {"username": username, "password": PASSWORD})
    assert response.status_code == 302
    return client


def test_it_logs_out_everywhere_else():
    make_user("ann")
    phone, laptop, stolen = logged_in(), logged_in(), logged_in()
    assert "also logged in 2 other times" in phone.get(reverse("sheets:account")).text
    response = phone.post(reverse("sheets:sessions_end"), follow=True)
    assert "Logged out everywhere else (2 other sessions)" in response.text
    assert phone.get(reverse("sheets:dashboard")).status_code == 200
    for other in (laptop, stolen):
        response = other.get(reverse("sheets:dashboard"))
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))


def test_it_leaves_other_accounts_logged_in():
    make_user("ann")
    make_user("bob")
    ann, bob = logged_in("ann"), logged_in("bob")
    ann.post(reverse("sheets:sessions_end"))
    assert bob.get(reverse("sheets:dashboard")).status_code == 200


def test_a_password_change_ends_the_other_sessions():
    user = make_user("ann")
    here, there = logged_in(), logged_in()
    response = here.post(
        reverse("password_change"),
        {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert response.status_code == 302
    assert here.get(reverse("sheets:dashboard")).status_code == 200
    assert there.get(reverse("sheets:dashboard")).status_code == 302
    assert user.login_sessions.count() == 1


def test_logging_out_forgets_the_session():
    user = make_user("ann")
    client = logged_in()
    assert user.login_sessions.count() == 1
    client.post(reverse("logout"))
    assert user.login_sessions.count() == 0


def test_the_account_page_is_for_its_user_only(client):
    response = client.get(reverse("sheets:account"))
    assert response.status_code == 302
    user = make_user("ann")
    make_campaign(user)
    client.force_login(user)
    page = client.get(reverse("sheets:account"))
    assert page.status_code == 200
    assert "Log out everywhere else" in page.text


def test_sessions_cleared_meanwhile_leave_the_list():
    from django.contrib.sessions.models import Session

    user = make_user("ann")
    logged_in()
    Session.objects.all().delete()  # expired, and cleared by clearsessions
    client = logged_in()
    assert user.login_sessions.count() == 1
    assert "No other session of yours is known" in client.get(reverse("sheets:account")).text
