from __future__ import annotations

import pytest
from django.urls import reverse

from sheets.models import Campaign, Membership

pytestmark = pytest.mark.django_db


def detail_url(campaign: Campaign) -> str:
    return reverse("sheets:campaign_detail", args=[campaign.pk])


def test_it_redirects_anonymous_visitors_to_login(table, client_for):
    response = client_for(None).get(detail_url(table.campaign))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize(
    ("role", "status"), [("gm", 200), ("player", 200), ("outsider", 404), ("other_gm", 404)]
)
def test_it_shows_the_campaign_only_to_its_members(table, client_for, role, status):
    response = client_for(getattr(table, role)).get(detail_url(table.campaign))
    assert response.status_code == status


def test_it_shows_the_join_code_to_the_gm_only(table, client_for):
    code = table.campaign.join_code
    assert code in client_for(table.gm).get(detail_url(table.campaign)).text
    assert code not in client_for(table.player).get(detail_url(table.campaign)).text


def test_it_lists_my_campaigns_on_the_dashboard(table, client_for):
    page = client_for(table.player).get(reverse("sheets:dashboard")).text
    assert "The Sunken Keep" in page
    assert "Elsewhere" not in page


def test_it_creates_a_campaign_with_me_as_gm(table, client_for):
    response = client_for(table.outsider).post(
        reverse("sheets:campaign_create"), {"name": "Night Market", "description": ""}
    )
    campaign = Campaign.objects.get(name="Night Market")
    assert campaign.gm == table.outsider
    assert response.status_code == 302
    assert response["Location"] == detail_url(campaign)


def test_it_rejects_a_campaign_without_a_name(table, client_for):
    response = client_for(table.gm).post(reverse("sheets:campaign_create"), {"name": ""})
    assert response.status_code == 200
    assert "This field is required." in response.text
    assert Campaign.objects.count() == 2


@pytest.mark.parametrize(("role", "status"), [("player", 403), ("outsider", 404)])
def test_it_lets_only_the_gm_edit(table, client_for, role, status):
    url = reverse("sheets:campaign_edit", args=[table.campaign.pk])
    response = client_for(getattr(table, role)).post(url, {"name": "Hijacked"})
    assert response.status_code == status
    table.campaign.refresh_from_db()
    assert table.campaign.name == "The Sunken Keep"


def test_it_saves_the_gms_edit(table, client_for):
    url = reverse("sheets:campaign_edit", args=[table.campaign.pk])
    response = client_for(table.gm).post(url, {"name": "The Risen Keep", "description": "x"})
    assert response.status_code == 302
    table.campaign.refresh_from_db()
    assert table.campaign.name == "The Risen Keep"


@pytest.mark.parametrize(("role", "status"), [("player", 403), ("outsider", 404)])
def test_it_lets_only_the_gm_delete(table, client_for, role, status):
    url = reverse("sheets:campaign_delete", args=[table.campaign.pk])
    assert client_for(getattr(table, role)).post(url).status_code == status
    assert Campaign.objects.filter(pk=table.campaign.pk).exists()


def test_it_deletes_after_confirmation(table, client_for):
    url = reverse("sheets:campaign_delete", args=[table.campaign.pk])
    client = client_for(table.gm)
    assert client.get(url).status_code == 200
    assert Campaign.objects.filter(pk=table.campaign.pk).exists()
    assert client.post(url).status_code == 302
    assert not Campaign.objects.filter(pk=table.campaign.pk).exists()


class TestJoinCode:
    def url(self, table):
        return reverse("sheets:campaign_regenerate_code", args=[table.campaign.pk])

    def test_it_regenerates_the_code_and_redirects_without_htmx(self, table, client_for):
        old = table.campaign.join_code
        response = client_for(table.gm).post(self.url(table))
        assert response.status_code == 302
        table.campaign.refresh_from_db()
        assert table.campaign.join_code != old

    def test_it_returns_the_code_partial_with_htmx(self, table, client_for):
        response = client_for(table.gm).post(self.url(table), headers={"HX-Request": "true"})
        table.campaign.refresh_from_db()
        assert response.status_code == 200
        assert response.text.lstrip().startswith('<div id="join-code">')
        assert table.campaign.join_code in response.text
        assert "<html" not in response.text

    @pytest.mark.parametrize(("role", "status"), [("player", 403), ("outsider", 404)])
    def test_it_refuses_others(self, table, client_for, role, status):
        old = table.campaign.join_code
        assert client_for(getattr(table, role)).post(self.url(table)).status_code == status
        table.campaign.refresh_from_db()
        assert table.campaign.join_code == old

    def test_it_refuses_get(self, table, client_for):
        assert client_for(table.gm).get(self.url(table)).status_code == 405


class TestJoin:
    url = reverse("sheets:campaign_join")

    def test_it_prefills_the_code_from_the_link(self, table, client_for):
        page = client_for(table.outsider).get(self.url, {"code": "ABCD2345"}).text
        assert 'value="ABCD2345"' in page

    def test_it_joins_with_a_sloppily_typed_code(self, table, client_for):
        code = table.campaign.join_code
        sloppy = f"{code[:4].lower()}-{code[4:]} "
        response = client_for(table.outsider).post(self.url, {"code": sloppy})
        assert response.status_code == 302
        assert table.campaign.is_member(table.outsider)

    def test_it_explains_an_unknown_code(self, table, client_for):
        response = client_for(table.outsider).post(self.url, {"code": "NOPE2345"})
        assert response.status_code == 200
        assert "No campaign has this join code" in response.text
        assert not table.campaign.is_member(table.outsider)

    def test_it_does_not_duplicate_a_membership(self, table, client_for):
        client_for(table.player).post(self.url, {"code": table.campaign.join_code})
        assert Membership.objects.filter(campaign=table.campaign, user=table.player).count() == 1

    def test_the_gm_does_not_become_a_player(self, table, client_for):
        client_for(table.gm).post(self.url, {"code": table.campaign.join_code})
        assert not Membership.objects.filter(user=table.gm).exists()

    def test_an_old_code_stops_working(self, table, client_for):
        old = table.campaign.join_code
        table.campaign.regenerate_join_code()
        response = client_for(table.outsider).post(self.url, {"code": old})
        assert response.status_code == 200
        assert not table.campaign.is_member(table.outsider)


class TestRemovePlayer:
    def url(self, table, user):
        return reverse("sheets:campaign_remove_player", args=[table.campaign.pk, user.pk])

    def test_the_gm_removes_a_player_with_htmx(self, table, client_for):
        response = client_for(table.gm).post(
            self.url(table, table.player), headers={"HX-Request": "true"}
        )
        assert response.status_code == 200
        assert response.text.lstrip().startswith('<div id="players">')
        assert not table.campaign.is_member(table.player)

    def test_the_gm_removes_a_player_without_js(self, table, client_for):
        response = client_for(table.gm).post(self.url(table, table.player))
        assert response.status_code == 302
        assert not table.campaign.is_member(table.player)

    def test_a_player_cannot_remove_another(self, table, client_for):
        from tests.factories import make_user

        other = make_user()
        Membership.objects.create(campaign=table.campaign, user=other)
        response = client_for(table.player).post(self.url(table, other))
        assert response.status_code == 403
        assert table.campaign.is_member(other)

    def test_a_player_can_leave(self, table, client_for):
        url = reverse("sheets:campaign_leave", args=[table.campaign.pk])
        assert client_for(table.player).post(url).status_code == 302
        assert not table.campaign.is_member(table.player)

    def test_the_gm_cannot_leave_their_own_campaign(self, table, client_for):
        url = reverse("sheets:campaign_leave", args=[table.campaign.pk])
        assert client_for(table.gm).post(url).status_code == 302
        assert Campaign.objects.filter(pk=table.campaign.pk).exists()


def test_user_text_is_escaped(table, client_for):
    table.campaign.name = "<script>alert(1)</script>"
    table.campaign.description = "<img src=x onerror=alert(2)>"
    table.campaign.save()
    page = client_for(table.player).get(detail_url(table.campaign)).text
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<img src=x" not in page


def test_state_changes_need_a_csrf_token(table):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(table.gm)
    old = table.campaign.join_code
    response = client.post(reverse("sheets:campaign_regenerate_code", args=[table.campaign.pk]))
    assert response.status_code == 403
    table.campaign.refresh_from_db()
    assert table.campaign.join_code == old
