"""The fight forecast of a prepared encounter: the sheets it reads, the pages and the API, the
what-if, the cache and who may see it."""

from __future__ import annotations

import json
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
    assert body["method"] == "exact" and body["note"] is None
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


# -- Bounds: the time budget, the cap on fights, the throttle, the cache ------------------------


def duel(prep: Any) -> Any:
    """Ysolde against one thug: a character against an NPC whose block wears her weapon."""
    prepared = prep.prepared
    prepared.expected.set([prep.ysolde])
    prepared.groups.exclude(npc=prep.library["thug"]).delete()
    prepared.groups.update(count=1)
    party, foe = fight_forecast.fighters_for(prepared)
    arms = [z.arm for z in foe.zones]
    assert (
        forecast.choose(party, [w.dmg for w in party.arsenal], foe, arms).defense.value == "block"
    )
    return prepared


def test_a_duel_past_its_time_budget_is_sampled_and_says_so(prep, monkeypatch):
    prepared = duel(prep)
    monkeypatch.setattr(fight_forecast, "DUEL_BUDGET", 0.0)
    path = f"/api/prepared/{prepared.pk}/forecast/?fights=400"
    body = api(prep.gm).get(path).json()["forecast"]
    assert body["method"] == "sampled" and body["exact"] is False
    assert body["fights"] == 400 and body["seed"] == 1
    assert "exact duel was given up" in body["note"] and "more than 0 s" in body["note"]
    lo, hi = body["party_standing_interval"]
    assert lo < body["party_standing"] < hi
    # Given up once is remembered: the next request goes straight to the fights (cached).
    again = api(prep.gm).get(path).json()["forecast"]
    assert again == dict(body, cached=True)
    page = prep.client("gm").get(f"{url(prep)}?fights=400").content.decode()
    assert "sampled: 400 fights" in page and 'data-testid="forecast-note"' in page
    # With its budget, the same duel is walked exactly.
    cache.clear()
    monkeypatch.setattr(fight_forecast, "DUEL_BUDGET", 60.0)
    exact = api(prep.gm).get(path).json()["forecast"]
    assert exact["method"] == "exact" and exact["note"] is None
    assert "exact: every branch" in prep.client("gm").get(url(prep)).content.decode()


def test_fights_stop_at_the_work_budget_and_the_answer_says_so(prep, monkeypatch):
    monkeypatch.setattr(fight_forecast, "SIM_WORK", 5_000)
    path = f"/api/prepared/{prep.prepared.pk}/forecast/?fights=2000"
    body = api(prep.gm).get(path).json()["forecast"]
    assert body["method"] == "sampled" and 1 <= body["fights"] < 2000
    assert body["note"] == (
        f"Stopped at the forecast's time budget: {body['fights']} of the 2000 fights asked "
        "for were played."
    )
    assert api(prep.gm).get(path).json()["forecast"] == dict(body, cached=True)
    page = prep.client("gm").get(f"{url(prep)}?fights=2000").content.decode()
    assert f"sampled: {body['fights']} fights" in page and "Stopped at the forecast" in page


def test_a_larger_fight_plays_fewer_fights_and_refuses_more(prep):
    # 2 characters + 3 NPCs + 25 = 30 fighters
    prep.prepared.groups.create(npc=prep.library["thug"], count=20)
    prep.prepared.groups.create(npc=prep.library["wolf"], count=5)
    cap = fight_forecast.MAX_FIGHTER_FIGHTS // 30
    assert cap == 3333 and fight_forecast.max_fights(30) == cap >= fight_forecast.QUICK_FIGHTS
    path = f"/api/prepared/{prep.prepared.pk}/forecast/"
    response = api(prep.gm).get(f"{path}?fights={cap + 1}")
    assert response.status_code == 400
    (message,) = response.json()["fights"]
    assert "from 1 to 3333 for a fight of 30 fighters" in message
    page = prep.client("gm").get(f"{url(prep)}?fights={cap + 1}")
    assert page.status_code == 400 and "3333" in page.content.decode()
    # A small fight keeps the absolute cap.
    assert fight_forecast.max_fights(2) == fight_forecast.MAX_FIGHTS == 20_000


def test_the_default_fights_of_a_large_fight_is_its_cap(prep):
    prep.prepared.groups.create(npc=prep.library["thug"], count=20)
    prep.prepared.groups.create(npc=prep.library["wolf"], count=5)
    body = api(prep.gm).get(f"/api/prepared/{prep.prepared.pk}/forecast/").json()["forecast"]
    assert body["fights"] == 3333 and body["method"] == "sampled"


def test_the_four_forecast_routes_share_one_allowance_per_user(prep, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "forecast": "4/min",
        },
    }
    encounter = running(prep)
    routes = [
        f"/api/prepared/{prep.prepared.pk}/forecast/?fights=50",
        f"{url(prep)}?fights=50",
        f"/api/encounters/{encounter.pk}/forecast/?fights=50",
        f"{reverse('prep:encounter_forecast', args=[encounter.pk])}?fights=50",
    ]
    cache.clear()
    gm_api, gm_pages = api(prep.gm), prep.client("gm")
    codes = [(gm_api if r.startswith("/api/") else gm_pages).get(r).status_code for r in routes]
    assert codes == [200, 200, 200, 200]
    for route in routes:
        response = (gm_api if route.startswith("/api/") else gm_pages).get(route)
        assert response.status_code == 429, route
        assert int(response["Retry-After"]) >= 1
        if route.startswith("/api/"):
            assert "throttled" in response.json()["detail"]
        else:
            assert "Too many forecasts" in response.content.decode()
    # Per user: another GM's forecasts are not held back by this one's.
    prepared = prep.prepared
    prepared.campaign.gm = prep.other_gm
    prepared.campaign.save()
    assert api(prep.other_gm).get(routes[0]).status_code == 200


def test_without_a_seed_any_cached_answer_serves(prep):
    path = f"/api/prepared/{prep.prepared.pk}/forecast/?fights=300"
    seeded = api(prep.gm).get(f"{path}&seed=9").json()["forecast"]
    assert seeded["seed"] == 9 and seeded["cached"] is False
    # A request naming no seed takes the answer already there, whatever its seed.
    plain = api(prep.gm).get(path).json()["forecast"]
    assert plain == dict(seeded, cached=True)
    # A seed asked for is its own entry: computed once, then cached.
    other = api(prep.gm).get(f"{path}&seed=10").json()["forecast"]
    assert other["seed"] == 10 and other["cached"] is False
    assert api(prep.gm).get(f"{path}&seed=10").json()["forecast"]["cached"] is True
    # ...and it does not take over the seedless answer.
    assert api(prep.gm).get(path).json()["forecast"]["seed"] == 9


def test_a_seedless_first_request_plays_seed_1_and_serves_it_by_name(prep):
    path = f"/api/prepared/{prep.prepared.pk}/forecast/?fights=300"
    first = api(prep.gm).get(path).json()["forecast"]
    assert first["seed"] == 1 and first["cached"] is False
    assert api(prep.gm).get(f"{path}&seed=1").json()["forecast"] == dict(first, cached=True)


def test_an_answer_above_the_size_cap_is_not_cached(prep, settings):
    path = f"/api/prepared/{prep.prepared.pk}/forecast/?fights=300"
    body = api(prep.gm).get(path).json()["forecast"]
    size = len(json.dumps({k: v for k, v in body.items() if k != "cached"}, separators=(",", ":")))
    settings.FORECAST_CACHE_MAX_BYTES = size - 1
    cache.clear()
    assert api(prep.gm).get(path).json()["forecast"]["cached"] is False
    assert api(prep.gm).get(path).json()["forecast"]["cached"] is False
    settings.FORECAST_CACHE_MAX_BYTES = size
    assert api(prep.gm).get(path).json()["forecast"]["cached"] is False
    assert api(prep.gm).get(path).json()["forecast"]["cached"] is True


def test_a_group_is_removed_by_the_id_the_prepared_encounter_shows(prep):
    shown = api(prep.gm).get(f"/api/prepared/{prep.prepared.pk}/").json()["groups"]
    by_name = {g["npc_name"]: g["id"] for g in shown}
    assert by_name["Thug"] == prep.prepared.groups.get(npc=prep.library["thug"]).pk
    path = f"/api/prepared/{prep.prepared.pk}/forecast/?fights=100&remove={by_name['Veteran']}"
    fewer = api(prep.gm).get(path).json()
    assert fewer["what_if"] == "one NPC fewer"
    assert [g["name"] for g in fewer["forecast"]["groups"]] == ["Thug"]
    # The forecast's own group key is a label, not an id: a clear 400 says what to send.
    key = f"group-{by_name['Veteran']}"
    response = api(prep.gm).get(f"/api/prepared/{prep.prepared.pk}/forecast/?remove={key}")
    assert response.status_code == 400
    assert "groups[].id" in response.json()["remove"][0]


def test_a_group_id_sent_back_in_an_update_is_taken_as_read_only(prep):
    detail = api(prep.gm).get(f"/api/prepared/{prep.prepared.pk}/").json()
    body = {"groups": [{k: g[k] for k in ("id", "npc", "count")} for g in detail["groups"]]}
    response = api(prep.gm).patch(f"/api/prepared/{prep.prepared.pk}/", body, format="json")
    assert response.status_code == 200
    assert sorted(g["count"] for g in response.json()["groups"]) == [1, 2]


def test_the_bench_plays_the_bounds_the_app_plays():
    from bench import bench_forecast

    names = ("FIGHTS", "MAX_FIGHTS", "MAX_FIGHTER_FIGHTS", "DUEL_BUDGET", "DUEL_STATES", "SIM_WORK")
    for name in names:
        assert getattr(bench_forecast, name) == getattr(fight_forecast, name), name


def test_a_cache_that_is_down_is_skipped_not_a_500(prep, cache_down):
    path = f"/api/prepared/{prep.prepared.pk}/forecast/?fights=100"
    for _ in range(2):
        response = api(prep.gm).get(path)
        assert response.status_code == 200
        assert response.json()["forecast"]["cached"] is False
    assert prep.client("gm").get(f"{url(prep)}?fights=100").status_code == 200
