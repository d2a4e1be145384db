"""Sign-up as a new player meets it: a scanned join link ends in the campaign, and every error
says what is wrong."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from sheets.models import Membership
from tests.factories import make_campaign, make_user

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-pass-phrase"


def test_a_scanned_join_link_ends_in_the_campaign():
    campaign = make_campaign(name="The Sunken Keep")
    client = Client()
    join = f"{reverse('sheets:campaign_join')}?code={campaign.join_code}"
    to_login = client.get(join)
    assert to_login.status_code == 302
    login_page = client.get(to_login["Location"])
    signup_link = f"{reverse('sheets:signup')}?next={quote(join, safe='/')}"
    assert signup_link.replace("&", "&amp;") in login_page.text
    page = client.get(signup_link)
    assert "joins the campaign as soon as it is created" in page.text
    response = client.post(
        signup_link,
        {"username": "newbie", "password1": PASSWORD, "password2": PASSWORD, "next": join},
    )
    assert response.status_code == 302
    assert response["Location"] == campaign.get_absolute_url()
    user = get_user_model().objects.get(username="newbie")
    assert Membership.objects.filter(campaign=campaign, user=user).exists()
    assert "You joined “The Sunken Keep”" in client.get(response["Location"]).text


def test_a_wrong_code_leads_to_the_join_page_that_says_why():
    client = Client()
    join = f"{reverse('sheets:campaign_join')}?code=NOPE2345"
    response = client.post(
        reverse("sheets:signup"),
        {"username": "newbie", "password1": PASSWORD, "password2": PASSWORD, "next": join},
    )
    assert response["Location"] == join
    assert get_user_model().objects.filter(username="newbie").exists()
    assert not Membership.objects.exists()


@pytest.mark.parametrize(
    ("password", "message"),
    [
        ("short", "This password is too short. It must contain at least 8 characters."),
        ("password123", "This password is too common."),
        ("8675309123", "This password is entirely numeric."),
        ("newbie12", "The password is too similar to the username."),
    ],
)
def test_it_explains_the_password_rules(client, password, message):
    response = client.post(
        reverse("sheets:signup"),
        {"username": "newbie", "password1": password, "password2": password},
    )
    assert response.status_code == 200
    assert message in response.text
    assert 'aria-invalid="true"' in response.text
    assert not get_user_model().objects.filter(username="newbie").exists()


def test_it_says_a_username_is_taken(client):
    make_user("newbie")
    response = client.post(
        reverse("sheets:signup"),
        {"username": "Newbie", "password1": PASSWORD, "password2": PASSWORD},
    )
    assert "A user with that username already exists." in response.text


def test_it_refuses_an_invalid_address(client):
    response = client.post(
        reverse("sheets:signup"),
        {"username": "newbie", "email": "nope", "password1": PASSWORD, "password2": PASSWORD},
    )
    assert "Enter a valid email address." in response.text
    assert not get_user_model().objects.filter(username="newbie").exists()


def test_the_pages_use_the_sites_card_layout(client):
    for name in ("sheets:signup", "login", "password_reset"):
        page = client.get(reverse(name)).text
        assert 'class="auth-card"' in page, name
        assert 'autocomplete="username"' in page or name == "password_reset"


@pytest.mark.parametrize(
    "next_url", ["//evil.example/", "/\\evil.example/", "https://evil.example/"]
)
def test_it_never_sends_a_new_account_off_site(client, next_url):
    response = client.post(
        reverse("sheets:signup"),
        {"username": "newbie", "password1": PASSWORD, "password2": PASSWORD, "next": next_url},
    )
    assert response["Location"] == reverse("sheets:dashboard")
