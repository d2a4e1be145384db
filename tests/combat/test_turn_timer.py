"""The turn timer: the GM switches it on per fight (seconds per turn); every screen, the table
display too, shows the time left; it never acts by itself."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone as django_timezone

from combat import display, render, services, timer
from combat.models import CombatLogEntry, Encounter

pytestmark = pytest.mark.django_db


def timer_url(fight) -> str:
    return reverse("combat:encounter_timer", args=[fight.encounter.pk])


def left_on(html: str) -> float | None:
    found = re.search(r'data-turn-timer data-left="([\d.]+)"', html)
    return float(found[1]) if found else None


def page(client, fight) -> str:
    return client.get(fight.encounter.get_absolute_url()).text


def test_the_gm_switches_it_on_and_every_screen_shows_it(fight, client_for):
    gm, player = client_for(fight.table.gm), client_for(fight.table.player)
    assert left_on(page(player, fight)) is None
    assert gm.post(timer_url(fight), {"seconds": "60"}).status_code == 302
    fight.encounter.refresh_from_db()
    assert fight.encounter.turn_seconds == 60
    for html in (page(gm, fight), page(player, fight)):
        assert 55 < left_on(html) <= 60
    shared = render.tracker_panels(fight.encounter, fight.table.player)["tracker"]
    assert 55 < left_on(shared) <= 60
    link = display.make_link(campaign=fight.table.campaign, actor=fight.table.gm)
    on_display = client_for(None).get(reverse("display:page", args=[link.secret])).text
    assert 55 < left_on(on_display) <= 60
    # Only the GM's screen has the switch.
    assert 'data-testid="timer-form"' in page(gm, fight)
    assert 'data-testid="timer-form"' not in page(player, fight) + shared + on_display


class LaterClock:
    """The timer's clock, ``ahead`` seconds after the real one (the log's stays real)."""

    def __init__(self) -> None:
        self.ahead = 0.0

    def now(self):
        return django_timezone.now() + timedelta(seconds=self.ahead)


def test_each_turn_gets_the_whole_time_and_running_out_changes_nothing(
    fight, client_for, monkeypatch
):
    clock = LaterClock()
    monkeypatch.setattr(timer, "timezone", clock)
    gm = fight.table.gm
    services.set_turn_timer(encounter=fight.encounter, seconds=30, actor=gm)
    player = client_for(fight.table.player)
    clock.ahead = 20
    assert 9 < left_on(page(player, fight)) <= 10
    # 100 seconds on: time is up, and the turn is still the same one.
    clock.ahead = 100
    turn = Encounter.objects.get(pk=fight.encounter.pk).turn_id
    assert left_on(page(player, fight)) == 0.0
    assert Encounter.objects.get(pk=fight.encounter.pk).turn_id == turn
    clock.ahead = 0
    services.next_turn(encounter=fight.encounter, actor=gm)
    assert 25 < left_on(page(player, fight)) <= 30


def test_an_empty_value_switches_it_off(fight, client_for):
    gm = client_for(fight.table.gm)
    gm.post(timer_url(fight), {"seconds": "45"})
    response = gm.post(timer_url(fight), {"seconds": ""}, headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert response.text.lstrip().startswith('<div id="tracker"')
    assert left_on(response.text) is None
    assert Encounter.objects.get(pk=fight.encounter.pk).turn_seconds is None


@pytest.mark.parametrize("seconds", ["5", "601", "abc", "1.5", "\u00b2", "-3", "9" * 30])
def test_it_refuses_what_is_not_a_turn_length_with_the_reason(fight, client_for, seconds):
    response = client_for(fight.table.gm).post(
        timer_url(fight), {"seconds": seconds}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 422
    assert "second" in response.text
    assert Encounter.objects.get(pk=fight.encounter.pk).turn_seconds is None


def test_a_finished_fight_has_no_timer_to_set(fight, client_for):
    services.finish_encounter(encounter=fight.encounter, actor=fight.table.gm)
    response = client_for(fight.table.gm).post(timer_url(fight), {"seconds": "60"})
    assert response.status_code == 302
    assert Encounter.objects.get(pk=fight.encounter.pk).turn_seconds is None


@pytest.mark.parametrize(("role", "status"), [("player", 403), ("outsider", 404)])
def test_only_the_gm_sets_it(fight, client_for, role, status):
    response = client_for(getattr(fight.table, role)).post(timer_url(fight), {"seconds": "60"})
    assert response.status_code == status
    assert Encounter.objects.get(pk=fight.encounter.pk).turn_seconds is None


def test_get_is_refused_and_anonymous_visitors_log_in(fight, client_for):
    assert client_for(fight.table.gm).get(timer_url(fight)).status_code == 405
    assert client_for(None).post(timer_url(fight), {"seconds": "60"}).status_code == 302
    assert Encounter.objects.get(pk=fight.encounter.pk).turn_seconds is None


def test_setting_it_is_in_the_log_and_can_be_undone(fight):
    services.set_turn_timer(encounter=fight.encounter, seconds=90, actor=fight.table.gm)
    entry = CombatLogEntry.objects.latest("pk")
    assert entry.kind == "timer" and entry.text == "Turn timer: 90 seconds a turn."
    services.undo_last(encounter=fight.encounter, actor=fight.table.gm)
    assert Encounter.objects.get(pk=fight.encounter.pk).turn_seconds is None
