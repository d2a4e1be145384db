"""The table display: the GM's secret link, the page it opens without logging in, and its live
feed, one more audience of the fight's broadcaster."""

from __future__ import annotations

import asyncio
import re

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.test import AsyncClient
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from combat import display, display_views, services, tracker
from combat.live import broadcast
from combat.models import DisplayLink
from live import sse
from tests.qr_decode import decode_svg

pytestmark = [pytest.mark.django_db, pytest.mark.both_databases]


@pytest.fixture(autouse=True)
def fresh_rate_limit():
    cache.clear()
    yield
    cache.clear()


def make_url(campaign) -> str:
    return reverse("display:link_make", args=[campaign.pk])


def revoke_url(campaign) -> str:
    return reverse("display:link_revoke", args=[campaign.pk])


def page_url(link: DisplayLink) -> str:
    return reverse("display:page", args=[link.secret])


def link_of(fight) -> DisplayLink:
    return display.make_link(campaign=fight.table.campaign, actor=fight.table.gm)


def hurt_the_thug(fight) -> None:
    chest = fight.zone(fight.thug, "chest")  # BZF 13: 15 wounds take 2 of its 7 Vitality
    services.adjust_zone(encounter=fight.encounter, zone=chest, amount=15, actor=fight.table.gm)


class TestTheLink:
    def test_the_gm_makes_one_and_the_campaign_page_shows_it_with_its_qr_code(
        self, table, client_for
    ):
        gm = client_for(table.gm)
        assert gm.post(make_url(table.campaign)).status_code == 302
        link = DisplayLink.objects.get(campaign=table.campaign)
        html = gm.get(table.campaign.get_absolute_url()).text
        url = f"http://testserver{page_url(link)}"
        assert f'data-testid="display-url" rel="noreferrer" target="_blank">{url}<' in html
        svg = re.search(r'data-testid="display-qr">.*?(<svg.*?</svg>)', html, re.S)[1]
        assert decode_svg(svg) == [url]

    def test_players_never_see_it(self, table, client_for):
        link = display.make_link(campaign=table.campaign, actor=table.gm)
        html = client_for(table.player).get(table.campaign.get_absolute_url()).text
        assert link.secret not in html
        assert "Table display" not in html

    def test_the_secret_is_random_and_long(self, table):
        first = display.make_link(campaign=table.campaign, actor=table.gm).secret
        second = display.make_link(campaign=table.campaign, actor=table.gm).secret
        assert first != second
        assert len(first) >= 43  # 32 random bytes
        assert str(table.campaign.pk) not in (first[:2], first[-2:])
        assert DisplayLink.objects.filter(campaign=table.campaign).count() == 1

    def test_with_htmx_the_gm_gets_the_section_back(self, table, client_for):
        response = client_for(table.gm).post(
            make_url(table.campaign), headers={"HX-Request": "true"}
        )
        assert response.status_code == 200
        assert response.text.lstrip().startswith('<section id="table-display"')
        assert "<html" not in response.text

    @pytest.mark.parametrize(("role", "status"), [("player", 403), ("outsider", 404)])
    def test_only_the_gm_makes_or_revokes_it(self, table, client_for, role, status):
        display.make_link(campaign=table.campaign, actor=table.gm)
        before = DisplayLink.objects.get().secret
        client = client_for(getattr(table, role))
        assert client.post(make_url(table.campaign)).status_code == status
        assert client.post(revoke_url(table.campaign)).status_code == status
        assert DisplayLink.objects.get().secret == before

    def test_anonymous_visitors_are_sent_to_log_in_and_get_is_refused(self, table, client_for):
        response = client_for(None).post(make_url(table.campaign))
        assert response.status_code == 302 and "/login/" in response["Location"]
        assert client_for(table.gm).get(make_url(table.campaign)).status_code == 405
        assert not DisplayLink.objects.exists()

    def test_a_lookup_needs_the_whole_secret(self, table):
        link = display.make_link(campaign=table.campaign, actor=table.gm)
        assert display.link_for_secret(link.secret) == link
        assert display.link_for_secret(link.secret[:-1]) is None
        assert display.link_for_secret(link.secret + "x") is None
        assert display.link_for_secret("") is None
        assert display.link_for_secret("x" * 10_000) is None


class TestThePage:
    def test_it_shows_the_running_fight_to_anyone_with_the_link(self, fight, client_for):
        link = link_of(fight)
        services.next_turn(encounter=fight.encounter, actor=fight.table.gm)
        response = client_for(None).get(page_url(link))
        assert response.status_code == 200
        html = response.text
        assert '<meta name="robots" content="noindex, nofollow">' in html
        assert response["X-Robots-Tag"] == "noindex, nofollow"
        assert response["Cache-Control"] == "no-store"
        assert "Ambush" in html and "Round 1" in html
        assert 'data-testid="display-turn"' in html
        assert "Ysolde" in html and "Salvager Thug #1" in html
        assert "<form" not in html and "csrfmiddlewaretoken" not in html

    def test_it_follows_the_stream_only_when_the_asgi_server_sent_it(self, fight, client_for):
        link = link_of(fight)
        stream = reverse("display:events", args=[link.secret, fight.encounter.pk])
        # Over WSGI (the test client, config/wsgi.py) there is no stream: the page reloads.
        html = client_for(None).get(page_url(link)).text
        assert stream not in html and 'hx-ext="sse"' not in html
        every = settings.DISPLAY_IDLE_SECONDS
        assert f'<meta http-equiv="refresh" content="{every}">' in html
        assert f"Updates every {every} s" in html

        async def over_asgi() -> str:
            return (await AsyncClient().get(page_url(link))).content.decode()

        html = async_to_sync(over_asgi)()
        assert f'sse-connect="{stream}?after=' in html and 'http-equiv="refresh"' not in html

    def test_it_never_shows_a_hidden_number(self, fight, client_for):
        link = link_of(fight)
        hurt_the_thug(fight)
        html = client_for(None).get(page_url(link)).text
        row = re.search(rf'data-testid="display-fighter-{fight.thug.pk}".*?</li>', html, re.S)[0]
        assert not re.search(r"\d", re.sub(r'data-testid="[^"]*"', "", row).replace("#1", ""))
        assert f'data-testid="display-vit-{fight.ysolde.pk}"' in html  # in plain sight

    def test_it_tells_a_hidden_foes_wounds_in_words_when_the_gm_chose_so(self, fight, client_for):
        link = link_of(fight)
        hurt_the_thug(fight)
        services.update_participant(
            participant=fight.thug, hidden_shows="words", actor=fight.table.gm
        )
        html = client_for(None).get(page_url(link)).text
        assert f'data-testid="display-words-{fight.thug.pk}">badly hurt<' in html

    def test_between_fights_it_waits_on_an_idle_screen(self, table, client_for):
        link = display.make_link(campaign=table.campaign, actor=table.gm)
        html = client_for(None).get(page_url(link)).text
        assert 'data-testid="display-idle"' in html
        assert '<meta http-equiv="refresh"' in html

    def test_a_revoked_link_and_a_made_up_one_say_the_same(self, fight, client_for):
        link = link_of(fight)
        assert display.revoke_link(campaign=fight.table.campaign, actor=fight.table.gm)
        revoked = client_for(None).get(page_url(link))
        made_up = client_for(None).get(reverse("display:page", args=["A" * 43]))
        assert revoked.status_code == made_up.status_code == 404
        assert revoked.text == made_up.text
        assert "This display was turned off" in revoked.text
        assert revoked["X-Robots-Tag"] == "noindex, nofollow"

    def test_a_revoked_or_made_up_links_stream_is_a_private_404(self, fight, client_for):
        link = link_of(fight)
        assert display.revoke_link(campaign=fight.table.campaign, actor=fight.table.gm)
        for secret in (link.secret, "A" * 43):
            url = reverse("display:events", args=[secret, fight.encounter.pk])
            response = client_for(None).get(url)
            assert response.status_code == 404
            # The secret is in the URL: the answer is never cached, indexed or passed on.
            assert response["Cache-Control"] == "no-store"
            assert response["X-Robots-Tag"] == "noindex, nofollow"
            assert response["Referrer-Policy"] == "no-referrer"
            assert "This display was turned off" in response.text

    def test_a_new_link_turns_the_old_one_off(self, fight, client_for):
        old = link_of(fight)
        new = link_of(fight)
        assert client_for(None).get(page_url(old)).status_code == 404
        assert client_for(None).get(page_url(new)).status_code == 200

    def test_it_is_rate_limited_per_address(self, table, client_for, monkeypatch, throttle_clock):
        monkeypatch.setattr(display_views, "RATE", 3)
        client = client_for(None)
        statuses = [client.get(f"/display/guess{i}/").status_code for i in range(5)]
        assert statuses == [404, 404, 404, 429, 429]


def _display_subscriber(link, after):
    viewer = display.DisplayViewer(link)
    # The feed serves any viewer with a user's few attributes; it is annotated for a user.
    return broadcast.Subscriber(viewer, after, None, greeted=True)  # type: ignore[arg-type]  # see the comment above


class TestTheFeed:
    def test_a_display_gets_the_board_without_hidden_numbers(self, fight):
        link = link_of(fight)
        before = broadcast.latest_entry_id(fight.encounter)
        hurt_the_thug(fight)
        screen = _display_subscriber(link, before)
        text = "".join(broadcast.fan_out(fight.encounter, [screen])[screen])
        assert 'data-testid="display-board"' in text
        assert f'data-testid="display-vit-{fight.thug.pk}"' not in text
        (board,) = re.findall(r"event: tracker\ndata: (.*?)\n\n", text, re.S)
        row = re.search(rf'data-testid="display-fighter-{fight.thug.pk}".*?</li>', board)[0]
        assert not re.search(r"\d", re.sub(r'data-testid="[^"]*"', "", row).replace("#1", ""))
        entries = "".join(re.findall(r"event: entry\nid: \d+\ndata: (.*?)\n\n", text, re.S))
        assert "15" not in re.sub(r"<[^>]+>", "", entries)

    def test_displays_are_one_audience_drawn_once_a_pass(self, fight, monkeypatch):
        link = link_of(fight)
        drawn = []
        real = display.board_html
        monkeypatch.setattr(display, "board_html", lambda state: drawn.append(1) or real(state))  # type: ignore[func-returns-value]  # then real
        before = broadcast.latest_entry_id(fight.encounter)
        services.next_turn(encounter=fight.encounter, actor=fight.table.gm)
        screens = [_display_subscriber(link, before) for _ in range(5)]
        player = broadcast.Subscriber(fight.table.player, before, None, greeted=True)
        out = broadcast.fan_out(fight.encounter, [*screens, player])
        assert len(drawn) == 1
        assert len({tuple(out[s]) for s in screens}) == 1
        # The display shares the players' entries: only the board is its own.
        assert out[screens[0]][:-1] == out[player][:-1]

    def test_an_open_display_costs_a_pass_no_query_more(self, fight, django_assert_num_queries):
        """The fan-out checks who may follow in one query, displays included: a display adds
        its board to a pass, not a round trip to the database."""
        link = link_of(fight)
        before = broadcast.latest_entry_id(fight.encounter)
        services.next_turn(encounter=fight.encounter, actor=fight.table.gm)

        def pages():
            return [
                broadcast.Subscriber(user, before, None, greeted=True)
                for user in (fight.table.gm, fight.table.player)
            ]

        broadcast.fan_out(fight.encounter, pages())  # warm: the same caches for both passes
        with CaptureQueriesContext(connection) as without:
            broadcast.fan_out(fight.encounter, pages())
        screen = _display_subscriber(link, before)
        with django_assert_num_queries(len(without)):
            out = broadcast.fan_out(fight.encounter, [*pages(), screen])
        assert 'data-testid="display-board"' in "".join(out[screen])

    def test_a_revoked_display_is_told_it_is_gone(self, fight):
        link = link_of(fight)
        before = broadcast.latest_entry_id(fight.encounter)
        display.revoke_link(campaign=fight.table.campaign, actor=fight.table.gm)
        screen = _display_subscriber(link, before)
        assert broadcast.fan_out(fight.encounter, [screen])[screen] == [
            sse.Message(sse.GONE, "").encode()
        ]

    def test_another_campaigns_display_cannot_follow_this_fight(self, fight, client_for):
        from tests.factories import make_campaign

        other = make_campaign(fight.table.other_gm)
        link = display.make_link(campaign=other, actor=fight.table.other_gm)
        url = reverse("display:events", args=[link.secret, fight.encounter.pk])
        assert client_for(None).get(url).status_code == 404
        screen = _display_subscriber(link, broadcast.latest_entry_id(fight.encounter))
        assert broadcast.fan_out(fight.encounter, [screen])[screen] == [
            sse.Message(sse.GONE, "").encode()
        ]

    def test_the_board_view_is_the_players_view(self, fight):
        context = display.board_context(tracker.load_state(fight.encounter))
        assert context["shared"] and not context["is_gm"]


@pytest.mark.django_db(transaction=True)
def test_revoking_ends_the_open_stream_at_once(fight):
    link = link_of(fight)
    url = reverse("display:events", args=[link.secret, fight.encounter.pk])

    async def scenario() -> list[str]:
        response = await AsyncClient().get(url)
        assert response["Content-Type"] == "text/event-stream"
        assert response["X-Robots-Tag"] == "noindex, nofollow"
        chunks = aiter(response.streaming_content)  # type: ignore[attr-defined]  # a streaming response
        hello = (await asyncio.wait_for(anext(chunks), 5)).decode()
        await sync_to_async(display.revoke_link)(
            campaign=fight.table.campaign, actor=fight.table.gm
        )
        # Well before the next heartbeat (15 s): the revoke woke the broadcaster.
        gone = (await asyncio.wait_for(anext(chunks), 5)).decode()
        with pytest.raises(StopAsyncIteration):
            await asyncio.wait_for(anext(chunks), 5)
        return [hello, gone]

    hello, gone = async_to_sync(scenario)()
    assert hello.startswith("event: hello")
    assert gone.startswith("event: gone")


def test_a_hidden_foes_roll_reaches_the_display_without_its_d100(fight, client_for):
    """The d100 of a roll the hidden thug is in bounds its numbers (docs/security.md): the
    display's page, its board and the entries of its stream carry the public text only."""
    link = link_of(fight)
    before = broadcast.latest_entry_id(fight.encounter)
    thug, ysolde = fight.thug, fight.ysolde
    services.strike(
        encounter=fight.encounter,
        attacker=thug,
        target=ysolde,
        action="fast",
        zone=fight.zone(ysolde, "chest"),
        weapon=fight.weapon(thug),
        defense="dodge",
        roll=77,
        actor=fight.table.gm,
    )
    page = client_for(None).get(page_url(link)).text
    screen = _display_subscriber(link, before)
    stream = "".join(broadcast.fan_out(fight.encounter, [screen])[screen])
    gm_page = client_for(fight.table.gm).get(fight.encounter.get_absolute_url()).text
    assert "77" in gm_page  # the GM's screen shows it: the check is not vacuous
    for text in (page, stream):
        visible = re.sub(r"<[^>]+>", " ", text)
        assert 'data-testid="display-result"' in text
        assert not re.search(r"\b77\b", visible)
