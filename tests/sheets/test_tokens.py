from __future__ import annotations

import pytest
from django.urls import reverse

from sheets.models import ApiToken, hash_token

pytestmark = [pytest.mark.django_db, pytest.mark.both_databases]

URL = reverse("sheets:token_list")


def test_anonymous_is_sent_to_login(client):
    assert client.get(URL).status_code == 302


def test_it_creates_a_token_and_shows_the_key_once(table, client_for):
    client = client_for(table.player)
    response = client.post(URL, {"name": "Discord bot"})
    assert response.status_code == 200
    token = ApiToken.objects.get(user=table.player)
    key = response.context["new_key"]
    assert token.key_hash == hash_token(key)
    assert key in response.text
    assert key not in client.get(URL).text


def test_it_revokes_only_my_tokens(table, client_for):
    mine, _ = ApiToken.objects.create_token(user=table.player, name="mine")
    theirs, _ = ApiToken.objects.create_token(user=table.gm, name="theirs")
    client = client_for(table.player)
    assert client.post(reverse("sheets:token_revoke", args=[theirs.pk])).status_code == 404
    assert ApiToken.objects.filter(pk=theirs.pk).exists()
    response = client.post(
        reverse("sheets:token_revoke", args=[mine.pk]), headers={"HX-Request": "true"}
    )
    assert response.status_code == 200
    assert 'id="tokens"' in response.text
    assert not ApiToken.objects.filter(pk=mine.pk).exists()


def test_it_redirects_after_revoking_without_htmx(table, client_for):
    mine, _ = ApiToken.objects.create_token(user=table.player, name="mine")
    response = client_for(table.player).post(reverse("sheets:token_revoke", args=[mine.pk]))
    assert response.status_code == 302


def test_it_requires_a_name(table, client_for):
    response = client_for(table.player).post(URL, {"name": ""})
    assert "This field is required." in response.text
    assert not ApiToken.objects.exists()
