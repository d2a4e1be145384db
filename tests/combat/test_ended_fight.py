"""A fight the GM has ended takes no more rolls: a Stamina test still marked due and Fate on
its last roll are refused by the services (a 400 on the API, with the reason), and nothing is
written."""

from __future__ import annotations

import pytest

from combat import services
from combat.models import CombatLogEntry, Participant
from tests.fight_steps import strike

pytestmark = pytest.mark.django_db


@pytest.fixture
def api_for(api_for):
    def make(user):
        client = api_for(user)
        client.default_format = "json"
        return client

    return make


def _ended_with_a_roll(fight):
    """Ysolde's fast strike at the thug (rolled 43), a Stamina test left due, then the end."""
    rolled = strike(
        fight.encounter,
        fight.ysolde,
        fight.thug,
        action="fast",
        actor=fight.table.player,
        defender=fight.table.gm,
        defense="dodge",
        roll=43,
    )
    Participant.objects.filter(pk=fight.ysolde.pk).update(stamina_due=True)
    services.finish_encounter(encounter=fight.encounter, actor=fight.table.gm)
    fight.refresh()
    return rolled


def _log_size(fight):
    return CombatLogEntry.objects.filter(encounter=fight.encounter).count()


def test_the_services_refuse_a_stamina_test_in_an_ended_fight(fight):
    _ended_with_a_roll(fight)
    before = _log_size(fight)
    for actor in (fight.table.player, fight.table.gm):
        with pytest.raises(services.CombatError, match="fight is over") as refused:
            services.stamina_check(participant=fight.ysolde, roll=50, actor=actor)
        assert not isinstance(refused.value, services.CombatConflict)
    fight.refresh()
    assert fight.ysolde.state == "active" and fight.ysolde.stamina_due
    assert _log_size(fight) == before


def test_the_api_refuses_a_stamina_test_in_an_ended_fight(fight, api_for):
    _ended_with_a_roll(fight)
    before = _log_size(fight)
    response = api_for(fight.table.player).post(
        f"/api/participants/{fight.ysolde.pk}/stamina/", {"roll": 5}
    )
    assert response.status_code == 400
    assert "fight is over" in response.json()["detail"]
    fight.refresh()
    assert fight.ysolde.state == "active"  # 5 would have knocked her out
    assert _log_size(fight) == before


@pytest.mark.parametrize("action", ["reroll", "revoke"])
def test_the_services_refuse_fate_in_an_ended_fight(fight, action):
    rolled = _ended_with_a_roll(fight)
    before = _log_size(fight)
    with pytest.raises(services.CombatError, match="fight is over") as refused:
        services.spend_fate(
            entry=rolled, spender=fight.ysolde, action=action, roll=90, actor=fight.table.player
        )
    assert not isinstance(refused.value, services.CombatConflict)
    fight.refresh()
    assert fight.ysolde.character.fate == 1
    assert _log_size(fight) == before


@pytest.mark.parametrize("action", ["reroll", "revoke"])
def test_the_api_refuses_fate_in_an_ended_fight(fight, api_for, action):
    rolled = _ended_with_a_roll(fight)
    before = _log_size(fight)
    body = {"action": action, **({"roll": 90} if action == "reroll" else {})}
    response = api_for(fight.table.player).post(f"/api/rolls/{rolled.pk}/fate/", body)
    assert response.status_code == 400
    assert "fight is over" in response.json()["detail"]
    fight.refresh()
    assert fight.ysolde.character.fate == 1
    assert fight.thug.character.zones.get(name="chest").wounds > 0  # the hit stands
    assert _log_size(fight) == before


def test_the_gm_undoing_the_end_opens_the_rolls_again(fight):
    rolled = _ended_with_a_roll(fight)
    services.undo_last(encounter=fight.encounter, actor=fight.table.gm)
    fight.refresh()
    assert fight.encounter.status == "running"
    services.spend_fate(
        entry=rolled, spender=fight.ysolde, action="revoke", actor=fight.table.player
    )
    services.stamina_check(participant=fight.ysolde, roll=50, actor=fight.table.player)
