"""The fight forecast of a prepared encounter: the sheets it reads, the pages and the API, the
what-if, the cache and who may see it."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache
from django.urls import reverse
from rest_framework.test import APIClient

from prep import forecast as fight_forecast
from prep import matchups
from rules.engine import forecast, omg
from sheets.models import Weapon


@pytest.fixture(autouse=True)
def _empty_cache() -> Any:
    cache.clear()
    yield
    cache.clear()


def api(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def url(prep: Any, name: str = "prep:prepared_forecast") -> str:
    return reverse(name, args=[prep.prepared.pk])


def test_it_reads_the_sheets_as_the_matchup_table_does(prep):
    fighters = fight_forecast.fighters_for(prep.prepared)
    by_key = {f.key: f for f in fighters}
    assert [f.side for f in fighters].count("party") == 2
    thugs = [f for f in fighters if f.name.startswith("Thug")]
    assert [t.name for t in thugs] == ["Thug 1", "Thug 2"]
    assert all(t.on_alert and t.itv is None and t.side == "foes" for t in thugs)
    ysolde = by_key[f"character-{prep.ysolde.pk}"]
    assert (ysolde.vitality, ysolde.bzf, ysolde.stm) == (
        prep.ysolde.vitality,
        prep.ysolde.bzf,
        prep.ysolde.nrv + prep.ysolde.vgr,
    )
    # Each weapon's discipline and the Melee Combat come from the tracker's setup, as in the
    # matchup table's PvD.
    table = matchups.matchup_table(prep.prepared)
    row = next(
        r
        for r in table.character_attacks
        if r.attacker.label == prep.ysolde.name and r.defender.label == "Thug"
    )
    weapon = next(w for w in ysolde.weapons if w.name == row.weapon)
    pro = omg.pro(omg.score(prep.ysolde.spd, weapon.dsc))
    dif = omg.dif(omg.score(thugs[0].spd, thugs[0].melee))
    assert row.cells["fast"]["dodge"].pvd == f"{pro}v{dif}"


def test_the_policy_picks_the_strike_the_matchup_table_says_is_best(prep):
    """Where the damage follows the chance to land (one weapon, no armor to pierce), the
    forecast's attacker takes the strike mode that the matchup table's glance names."""
    prepared = prep.prepared
    prepared.groups.all().delete()
    prepared.groups.create(npc=prep.library["thug"], count=1)
    table = matchups.matchup_table(prepared)
    fighters = {f.key: f for f in fight_forecast.fighters_for(prepared)}
    thug = next(f for f in fighters.values() if f.side == "foes")
    checked = 0
    for row in table.npc_attacks:
        target = next(f for f in fighters.values() if f.name == row.defender.label)
        choice = forecast.choose(
            thug, [w.dmg for w in thug.arsenal], target, [z.arm for z in target.zones]
        )
        strike, _ = row.best
        if row.weapon == thug.arsenal[choice.weapon].name:
            assert choice.strike.value == strike, row.defender.label
            checked += 1
    assert checked


def test_the_prepared_page_shows_a_first_look_then_the_full_forecast(prep):
    client = prep.client("gm")
    page = client.get(prep.prepared.get_absolute_url()).content.decode()
    assert 'data-testid="forecast-verdict"' in page
    assert "First look from 1000 fights" in page
    assert f'hx-get="{url(prep)}"' in page
    # The block htmx fetches: the full forecast, alone.
    block = client.get(url(prep), headers={"HX-Request": "true"}).content.decode()
    assert block.lstrip().startswith("<section")
    assert "10000 fights" in block and "First look" not in block
    # Once it is cached, the page shows it straight away.
    page = client.get(prep.prepared.get_absolute_url()).content.decode()
    assert "10000 fights" in page and "First look" not in page


def test_the_forecast_page_works_without_htmx(prep):
    response = prep.client("gm").get(url(prep))
    page = response.content.decode()
    assert response.status_code == 200
    assert "<h1>Fight forecast</h1>" in page and "Party left standing" in page
    assert "Ysolde" in page and "beaten in" in page


def test_the_matchup_page_shows_the_forecast(prep):
    page = prep.client("gm").get(url(prep, "prep:prepared_matchups")).content.decode()
    assert 'data-testid="forecast-verdict"' in page
    # Its "hits to pass BZF" keep the armor as it stands, and say so.
    assert 'data-testid="hits-armor-label"' in page


def test_an_empty_side_shows_a_hint(prep):
    prep.prepared.groups.all().delete()
    page = prep.client("gm").get(prep.prepared.get_absolute_url()).content.decode()
    assert 'data-testid="forecast-empty"' in page
    body = api(prep.gm).get(f"/api/prepared/{prep.prepared.pk}/forecast/").json()
    assert body == {"forecast": None, "what_if": None}


def test_the_api_gives_the_forecast_reproducibly(prep):
    path = f"/api/prepared/{prep.prepared.pk}/forecast/?fights=500&seed=3"
    first = api(prep.gm).get(path)
    assert first.status_code == 200
    body = first.json()["forecast"]
    assert body["fights"] == 500 and body["seed"] == 3 and body["cached"] is False
    assert 0 <= body["party_standing"] <= 1
    assert {g["name"] for g in body["groups"]} == {"Thug", "Veteran"}
    again = api(prep.gm).get(path).json()["forecast"]
    assert again["cached"] is True
    cache.clear()
    assert api(prep.gm).get(path).json()["forecast"] == dict(again, cached=False)


def test_a_duel_is_walked_exactly(prep):
    prepared = prep.prepared
    prepared.expected.set([prep.ysolde])
    prepared.groups.exclude(npc=prep.library["veteran"]).delete()
    body = api(prep.gm).get(f"/api/prepared/{prepared.pk}/forecast/").json()["forecast"]
    assert body["exact"] is True and body["fights"] == 0
    party, foe = fight_forecast.fighters_for(prepared)
    exact = forecast.exact_duel(party, foe)
    assert body["party_standing"] == round(exact.party_standing, 4)
    assert body["party_standing_interval"] == [body["party_standing"]] * 2
    page = prep.client("gm").get(url(prep)).content.decode()
    assert "exact: every branch of the duel weighed" in page
    # The page's first look stays a quick simulation.
    cache.clear()
    page = prep.client("gm").get(prepared.get_absolute_url()).content.decode()
    assert "First look from 1000 fights" in page


def test_it_recomputes_when_a_sheet_changes(prep):
    path = f"/api/prepared/{prep.prepared.pk}/forecast/?fights=300"
    assert api(prep.gm).get(path).json()["forecast"]["cached"] is False
    assert api(prep.gm).get(path).json()["forecast"]["cached"] is True
    # A change made anywhere (here straight in the table, as the tracker's wounds are) is
    # in the key: the numbers the forecast reads are the key.
    Weapon.objects.filter(character=prep.ysolde).update(dmg=1)
    assert api(prep.gm).get(path).json()["forecast"]["cached"] is False
    npc = prep.library["thug"]
    npc.sheet = {**npc.sheet, "vgr": 1}
    npc.save()
    assert api(prep.gm).get(path).json()["forecast"]["cached"] is False


def test_what_if_one_more_or_one_fewer(prep):
    path = f"/api/prepared/{prep.prepared.pk}/forecast/?fights=300"
    base = api(prep.gm).get(path).json()["forecast"]
    more = api(prep.gm).get(f"{path}&add={prep.library['veteran'].pk}").json()
    assert more["what_if"] == "one more Veteran"
    assert sum(g["count"] for g in more["forecast"]["groups"]) == 4
    thugs = prep.prepared.groups.get(npc=prep.library["thug"])
    fewer = api(prep.gm).get(f"{path}&remove={thugs.pk}").json()["forecast"]
    assert [g["count"] for g in fewer["groups"]] == [1, 1]
    assert sum(g["count"] for g in base["groups"]) == 3
    # The page: both forecasts, the what-if under its heading.
    page = prep.client("gm").get(f"{url(prep)}?add={prep.library['veteran'].pk}")
    text = page.content.decode()
    assert "What if: one more Veteran" in text and 'data-testid="what-if-verdict"' in text


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("fights=0", "fights"),
        ("fights=20001", "fights"),
        ("fights=ten", "fights"),
        ("seed=-1", "seed"),
        ("add=999999", "add"),
        ("remove=999999", "remove"),
        ("add=1&remove=1", "add"),
    ],
)
def test_bad_parameters_are_a_400_naming_the_field(prep, query, field):
    response = api(prep.gm).get(f"/api/prepared/{prep.prepared.pk}/forecast/?{query}")
    assert response.status_code == 400
    assert field in response.json()
    assert prep.client("gm").get(f"{url(prep)}?{query}").status_code == 400


def test_a_fight_too_big_to_forecast_says_so(prep):
    prep.prepared.groups.create(npc=prep.library["wolf"], count=20)
    prep.prepared.groups.create(npc=prep.library["thug"], count=20)
    response = api(prep.gm).get(f"/api/prepared/{prep.prepared.pk}/forecast/")
    assert response.status_code == 400
    assert "at most 30 fighters" in response.json()["detail"][0]
    for path in (prep.prepared.get_absolute_url(), url(prep), url(prep, "prep:prepared_matchups")):
        page = prep.client("gm").get(path)
        assert page.status_code == 200
        assert 'data-testid="forecast-unavailable"' in page.content.decode()


def test_another_gms_library_npc_is_not_a_what_if(prep):
    from prep import services

    services.add_starter_set(owner=prep.other_gm)
    theirs = prep.other_gm.npc_library.first()
    response = api(prep.gm).get(f"/api/prepared/{prep.prepared.pk}/forecast/?add={theirs.pk}")
    assert response.status_code == 400 and "add" in response.json()


@pytest.mark.parametrize("role", ["player", "other_player", "outsider", "other_gm"])
def test_nobody_but_the_gm_sees_the_forecast(prep, role):
    assert prep.client(role).get(url(prep)).status_code == 404
    path = f"/api/prepared/{prep.prepared.pk}/forecast/"
    assert api(getattr(prep, role)).get(path).status_code == 404


def test_anonymous_is_sent_to_log_in(prep):
    from django.test import Client

    response = Client().get(url(prep))
    assert response.status_code == 302 and "login" in response["Location"]
    assert APIClient().get(f"/api/prepared/{prep.prepared.pk}/forecast/").status_code in (401, 403)


# -- A running fight, from where it stands -----------------------------------------------------


def running(prep: Any) -> Any:
    from prep import services

    return services.start_prepared(prepared=prep.prepared, actor=prep.gm)


def test_a_running_fight_is_forecast_from_where_it_stands(prep):
    from combat.models import Participant

    encounter = running(prep)
    fighters = fight_forecast.fighters_for_encounter(encounter)
    assert {f.side for f in fighters} == {"party", "foes"}
    thugs = [f for f in fighters if f.group_name == "Thug"]
    assert len(thugs) == 2 and thugs[0].group == thugs[1].group and thugs[0].side == "foes"
    # Ysolde is down: she is out from the start, and the forecast says so.
    Participant.objects.filter(encounter=encounter, character=prep.ysolde).update(
        state=Participant.State.DOWN
    )
    prep.ysolde.vitality = 0
    prep.ysolde.save()
    body = api(prep.gm).get(f"/api/encounters/{encounter.pk}/forecast/?fights=200").json()
    ysolde = next(c for c in body["forecast"]["combatants"] if c["name"] == prep.ysolde.name)
    assert ysolde["down"] == 1.0
    page = prep.client("gm").get(reverse("prep:encounter_forecast", args=[encounter.pk]))
    assert page.status_code == 200 and 'data-testid="forecast-verdict"' in page.content.decode()
    # The tracker leads the GM there, and only the GM.
    forecast_url = reverse("prep:encounter_forecast", args=[encounter.pk])
    assert forecast_url in prep.client("gm").get(encounter.get_absolute_url()).content.decode()
    assert (
        forecast_url not in prep.client("player").get(encounter.get_absolute_url()).content.decode()
    )


@pytest.mark.parametrize("role", ["player", "other_player", "outsider", "other_gm"])
def test_nobody_but_the_gm_sees_a_running_fights_forecast(prep, role):
    encounter = running(prep)
    page = prep.client(role).get(reverse("prep:encounter_forecast", args=[encounter.pk]))
    assert page.status_code == 404
    path = f"/api/encounters/{encounter.pk}/forecast/"
    assert api(getattr(prep, role)).get(path).status_code == 404


def test_a_running_fights_forecast_refuses_bad_parameters(prep):
    encounter = running(prep)
    response = api(prep.gm).get(f"/api/encounters/{encounter.pk}/forecast/?fights=0")
    assert response.status_code == 400 and "fights" in response.json()
    page = prep.client("gm").get(
        reverse("prep:encounter_forecast", args=[encounter.pk]), {"seed": "x"}
    )
    assert page.status_code == 400
