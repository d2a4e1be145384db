"""API tokens end with a compromise: a password reset revokes every one of the account's
tokens (one minted through the API by another token too), a password change and "log out
everywhere else" do unless the owner unticks the box. The tokens page shows each one's last
use, written at most once a minute."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.tokens import default_token_generator
from django.db import connection, connections, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from rest_framework.test import APIClient

from sheets.models import ApiToken, lock_user
from tests.factories import PASSWORD, make_user

pytestmark = [pytest.mark.django_db, pytest.mark.both_databases]

NEW_PASSWORD = "a-brand-new-phrase-7"
TOKENS = "/api/tokens/"


def with_key(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


def thiefs_keys(user: Any) -> list[str]:
    """A token the thief used, and one they minted with it through the API."""
    _, key = ApiToken.objects.create_token(user=user, name="stolen")
    assert with_key(key).get(TOKENS).status_code == 200
    minted = with_key(key).post(TOKENS, {"name": "spare"}, format="json")
    assert minted.status_code == 201
    spare = minted.json()["key"]
    assert with_key(spare).get(TOKENS).status_code == 200
    return [key, spare]


def logged_in(username: str = "ann") -> Client:
    client = Client()
    response = client.post(reverse("login"), {"username": username, "password": PASSWORD})
    assert response.status_code == 302
    return client


def change_password(client: Client, **extra: str) -> Any:
    return client.post(
        reverse("password_change"),
        {
            "old_password": PASSWORD,
            "new_password1": NEW_PASSWORD,
            "new_password2": NEW_PASSWORD,
            **extra,
        },
        follow=True,
    )


def test_a_reset_revokes_every_token_and_says_so():
    user = make_user("ann", email="ann@example.org")
    keys = thiefs_keys(user)
    bystander = make_user("bob")
    _, bobs = ApiToken.objects.create_token(user=bystander, name="bob's")
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    link = reverse(
        "password_reset_confirm",
        kwargs={"uidb64": uid, "token": default_token_generator.make_token(user)},
    )
    client = Client()
    form = client.get(link, follow=True)
    done = client.post(
        form.redirect_chain[-1][0],
        {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
        follow=True,
    )
    assert "Password saved" in done.text
    assert "Every API token of the account is revoked" in done.text
    for key in keys:
        response = with_key(key).get(TOKENS)
        assert response.status_code == 401
        assert response.json()["detail"] == "Invalid or revoked token."
    assert not ApiToken.objects.filter(user=user).exists()
    assert with_key(bobs).get(TOKENS).status_code == 200


def test_a_password_change_revokes_every_token_by_default():
    user = make_user("ann")
    keys = thiefs_keys(user)
    other = make_user("cat")
    others_keys = thiefs_keys(other)
    client = logged_in()
    form = client.get(reverse("password_change"))
    box = form.text.split('name="revoke_tokens"')[1].split(">")[0]
    assert "checked" in box
    response = change_password(client, revoke_tokens="on")
    assert "Your 2 API tokens are revoked" in response.text
    assert [with_key(k).get(TOKENS).status_code for k in keys] == [401, 401]
    # Only the account's own tokens.
    assert [with_key(k).get(TOKENS).status_code for k in others_keys] == [200, 200]
    assert other.api_tokens.count() == 2


def test_a_password_change_keeps_the_tokens_when_unticked():
    user = make_user("ann")
    keys = thiefs_keys(user)
    response = change_password(logged_in())
    assert response.redirect_chain[-1][0] == reverse("password_change_done")
    assert "API tokens are revoked" not in response.text
    assert [with_key(k).get(TOKENS).status_code for k in keys] == [200, 200]


def test_logging_out_everywhere_else_revokes_the_tokens_when_ticked():
    user = make_user("ann")
    keys = thiefs_keys(user)
    client = logged_in()
    page = client.get(reverse("sheets:account"))
    assert 'name="revoke_tokens"' in page.text
    response = client.post(reverse("sheets:sessions_end"), {"revoke_tokens": "on"}, follow=True)
    assert "Logged out everywhere else" in response.text
    assert "Your 2 API tokens are revoked" in response.text
    assert [with_key(k).get(TOKENS).status_code for k in keys] == [401, 401]


def test_logging_out_everywhere_else_keeps_the_tokens_when_unticked():
    user = make_user("ann")
    keys = thiefs_keys(user)
    stolen = logged_in()
    client = logged_in()
    response = client.post(reverse("sheets:sessions_end"), follow=True)
    assert "Logged out everywhere else (1 other session)" in response.text
    assert "API tokens are revoked" not in response.text
    assert stolen.get(reverse("sheets:dashboard")).status_code == 302
    assert [with_key(k).get(TOKENS).status_code for k in keys] == [200, 200]


def test_the_tokens_page_shows_each_tokens_last_use():
    user = make_user("ann")
    used, key = ApiToken.objects.create_token(user=user, name="used")
    ApiToken.objects.create_token(user=user, name="idle")
    ApiToken.objects.update(created_at=timezone.now() - timedelta(days=3))
    assert with_key(key).get(TOKENS).status_code == 200
    used.refresh_from_db()
    assert used.last_used_at is not None
    page = logged_in().get(reverse("sheets:token_list")).text
    rows = {name: page.split(f"<td>{name}</td>")[1].split("</tr>")[0] for name in ("used", "idle")}
    shown = timezone.localtime(used.last_used_at).strftime("%Y-%m-%d %H:%M")
    assert f"<td>{shown}</td>" in rows["used"]
    assert "<td>never</td>" in rows["idle"]
    listed = {t["name"]: t["last_used_at"] for t in with_key(key).get(TOKENS).json()["results"]}
    assert listed["idle"] is None
    assert listed["used"] is not None


def test_it_writes_the_last_use_at_most_once_a_minute():
    user = make_user("ann")
    token, key = ApiToken.objects.create_token(user=user, name="bot")
    client = with_key(key)

    def writes() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get(TOKENS).status_code == 200
        return sum(q["sql"].startswith("UPDATE") and "apitoken" in q["sql"] for q in queries)

    assert [writes(), writes(), writes()] == [1, 0, 0]
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=timezone.now() - timedelta(seconds=61))
    assert writes() == 1


def test_a_revoked_token_mints_no_more():
    user = make_user("ann")
    token, key = ApiToken.objects.create_token(user=user, name="stolen")
    ApiToken.objects.revoke_all(user=user)
    with pytest.raises(Exception, match="revoked"):
        ApiToken.objects.create_token(user=user, name="spare", minted_by=token)
    assert not ApiToken.objects.exists()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_token_minted_while_the_reset_runs_is_refused():
    """The thief's request to mint a token is under way (authenticated) when the owner's
    reset revokes every token: it waits for the reset's lock, then is refused (401), and no
    token is left."""
    assert connection.vendor == "postgresql"
    user = make_user("ann")
    _, key = ApiToken.objects.create_token(user=user, name="stolen")
    answers: list[int] = []
    entered = threading.Event()

    def mint() -> None:
        try:
            entered.set()
            answers.append(with_key(key).post(TOKENS, {"name": "spare"}, format="json").status_code)
        finally:
            connections.close_all()

    with transaction.atomic():
        lock_user(user)
        thread = threading.Thread(target=mint)
        thread.start()
        entered.wait(5)
        # The thief's request is past authentication and waits for the lock.
        thread.join(1)
        assert thread.is_alive()
        ApiToken.objects.filter(user=user).delete()
    thread.join(10)
    assert answers == [401]
    assert not ApiToken.objects.exists()
