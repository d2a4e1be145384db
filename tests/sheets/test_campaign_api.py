from __future__ import annotations

import pytest

from sheets.models import Campaign

pytestmark = pytest.mark.django_db

LIST = "/api/campaigns/"


def detail(campaign: Campaign) -> str:
    return f"/api/campaigns/{campaign.pk}/"


def test_anonymous_gets_401(table, api_for):
    response = api_for(None).get(LIST)
    assert response.status_code in (401, 403)
    assert api_for(None).get(detail(table.campaign)).status_code in (401, 403)


def test_it_lists_only_my_campaigns(table, api_for):
    names = [c["name"] for c in api_for(table.player).get(LIST).json()["results"]]
    assert names == ["The Sunken Keep"]
    assert api_for(table.outsider).get(LIST).json()["results"] == []


@pytest.mark.parametrize(
    ("role", "status"), [("gm", 200), ("player", 200), ("outsider", 404), ("other_gm", 404)]
)
def test_retrieve_per_role(table, api_for, role, status):
    assert api_for(getattr(table, role)).get(detail(table.campaign)).status_code == status


def test_the_join_code_is_for_the_gm_only(table, api_for):
    assert (
        api_for(table.gm).get(detail(table.campaign)).json()["join_code"]
        == table.campaign.join_code
    )
    assert api_for(table.player).get(detail(table.campaign)).json()["join_code"] is None


def test_it_creates_with_me_as_gm(table, api_for):
    response = api_for(table.outsider).post(LIST, {"name": "Night Market"}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert body["gm"] == "outsider"
    assert body["is_gm"] is True
    assert Campaign.objects.get(pk=body["id"]).gm == table.outsider


@pytest.mark.parametrize("payload", [{}, {"name": ""}, {"name": "x" * 121}, {"name": ["a"]}])
def test_it_explains_bad_input(table, api_for, payload):
    response = api_for(table.gm).post(LIST, payload, format="json")
    assert response.status_code == 400
    assert "name" in response.json()


def test_it_rejects_malformed_json(table, api_for):
    response = api_for(table.gm).post(LIST, "{not json", content_type="application/json")
    assert response.status_code == 400


@pytest.mark.parametrize(("role", "status"), [("gm", 200), ("player", 403), ("outsider", 404)])
def test_update_per_role(table, api_for, role, status):
    response = api_for(getattr(table, role)).patch(
        detail(table.campaign), {"name": "Renamed"}, format="json"
    )
    assert response.status_code == status
    table.campaign.refresh_from_db()
    assert (table.campaign.name == "Renamed") == (status == 200)


@pytest.mark.parametrize(("role", "status"), [("player", 403), ("outsider", 404), ("gm", 204)])
def test_delete_per_role(table, api_for, role, status):
    assert api_for(getattr(table, role)).delete(detail(table.campaign)).status_code == status
    assert Campaign.objects.filter(pk=table.campaign.pk).exists() == (status != 204)


def test_it_joins_with_a_code(table, api_for):
    client = api_for(table.outsider)
    response = client.post(LIST + "join/", {"code": table.campaign.join_code}, format="json")
    assert response.status_code == 201
    assert table.campaign.is_member(table.outsider)
    again = client.post(LIST + "join/", {"code": table.campaign.join_code}, format="json")
    assert again.status_code == 200


@pytest.mark.parametrize("payload", [{}, {"code": ""}, {"code": "NOPE2345"}, {"code": 12}])
def test_join_explains_bad_codes(table, api_for, payload):
    response = api_for(table.outsider).post(LIST + "join/", payload, format="json")
    assert response.status_code == 400
    assert "code" in response.json()
    assert not table.campaign.is_member(table.outsider)


def test_regenerate_code_is_for_the_gm(table, api_for):
    url = detail(table.campaign) + "regenerate-code/"
    old = table.campaign.join_code
    assert api_for(table.player).post(url).status_code == 403
    assert api_for(table.outsider).post(url).status_code == 404
    response = api_for(table.gm).post(url)
    assert response.status_code == 200
    assert response.json()["join_code"] != old


def test_remove_player(table, api_for):
    url = detail(table.campaign) + "remove-player/"
    payload = {"user_id": table.player.pk}
    assert api_for(table.player).post(url, payload, format="json").status_code == 403
    response = api_for(table.gm).post(url, payload, format="json")
    assert response.status_code == 200
    assert response.json()["players"] == []
    again = api_for(table.gm).post(url, payload, format="json")
    assert again.status_code == 400


class TestTokenAuth:
    def test_a_token_authenticates(self, table):
        from rest_framework.test import APIClient

        from sheets.models import ApiToken

        _, key = ApiToken.objects.create_token(user=table.player, name="bot")
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        response = client.get(LIST)
        assert response.status_code == 200
        assert [c["name"] for c in response.json()["results"]] == ["The Sunken Keep"]
        assert ApiToken.objects.get(name="bot").last_used_at is not None

    @pytest.mark.parametrize("header", ["Token nope", "Token", "Token a b"])
    def test_a_bad_token_is_refused(self, table, header):
        from rest_framework.test import APIClient

        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=header)
        response = client.get(LIST)
        assert response.status_code == 401
        assert response["WWW-Authenticate"] == "Bearer"

    def test_a_token_post_needs_no_csrf(self, table):
        from rest_framework.test import APIClient

        from sheets.models import ApiToken

        _, key = ApiToken.objects.create_token(user=table.gm, name="bot")
        client = APIClient(enforce_csrf_checks=True)
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        assert client.post(LIST, {"name": "Via bot"}, format="json").status_code == 201

    def test_a_session_post_needs_csrf(self, table):
        from rest_framework.test import APIClient

        client = APIClient(enforce_csrf_checks=True)
        client.force_login(table.gm)
        response = client.post(LIST, {"name": "No token"}, format="json")
        assert response.status_code == 403
        assert not Campaign.objects.filter(name="No token").exists()
