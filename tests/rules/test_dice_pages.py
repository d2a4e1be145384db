"""The dice pages: full pages and htmx partials, typed and server dice, errors, the CSP."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest
from django.test import Client

from rules import ogs, okrpg, omg, ore, sds
from rules.models import DiceRoll, describe_roll
from sheets import randomness
from sheets.models import Campaign, Membership
from tests.factories import make_user

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}
PAGES = ["/dice/", "/dice/omg/", "/dice/ogs/", "/dice/okrpg/", "/dice/ore/", "/dice/sds/"]


@pytest.fixture
def seeded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(randomness, "RNG", random.Random(7))


def by_testid(html: str, name: str) -> str:
    match = re.search(rf'data-testid="{name}"[^>]*>(.*?)</', html, re.S)
    assert match, f"no {name} in the page"
    return re.sub(r"\s+", " ", match.group(1)).strip()


@pytest.mark.parametrize("url", PAGES)
def test_it_serves_every_page_to_anonymous_visitors(client: Client, url: str):
    response = client.get(url)
    assert response.status_code == 200
    html = response.text
    assert "<html" in html
    assert "css/dice.css" in html
    assert " style=" not in html
    for tag in re.findall(r"<script[^>]*>", html):
        assert "src=" in tag, tag


@pytest.mark.parametrize("url", PAGES[1:])
def test_it_answers_htmx_with_the_panel_only(client: Client, url: str):
    response = client.get(url, headers=HX)
    assert response.status_code == 200
    html = response.text
    assert "<html" not in html
    assert 'id="dice-panel"' in html
    assert "<svg" in html
    assert " style=" not in html


def test_it_links_every_tool_from_the_index(client: Client):
    html = client.get("/dice/").text
    for url in PAGES[1:]:
        assert f'href="{url}"' in html


@pytest.mark.parametrize("headers", [{}, HX])
def test_it_reads_a_typed_roll_on_the_pvd_calculator(client: Client, headers):
    query: dict[str, Any] = {
        "use": "pvd",
        "pro": 70,
        "dif": 20,
        "fast": "on",
        "roll": 43,
        "action": "read",
    }
    html = client.get("/dice/omg/", query, headers=headers).text
    assert by_testid(html, "degree") == "Success"
    assert by_testid(html, "sum") == "7"
    assert by_testid(html, "second") == "Hit"
    assert by_testid(html, "hit-chance") == "54%"


def test_it_derives_pro_and_dif_from_scores(client: Client):
    query: dict[str, Any] = {"use": "scores", "strike": "precise", "attack_apt": 4, "attack_dsc": 3}
    html = client.get("/dice/omg/", {**query, "defense": "parry", "defense_apt": 4}).text
    assert "85 v 30" in html
    assert "Damage of this strike" in html


def test_it_rolls_a_strike_with_the_server_dice(client: Client, seeded):
    roll = random.Random(7).randint(1, 100)
    html = client.get("/dice/omg/", {"action": "roll"}, headers=HX).text
    assert f'Rolled <strong class="num">{roll}</strong>' in html


def test_it_asks_for_the_roll_when_reading_nothing(client: Client):
    html = client.get("/dice/omg/", {"action": "read"}).text
    assert "Type the roll you made" in html
    assert 'data-testid="degree"' not in html


def test_it_shows_the_four_stage_ogs_check(client: Client):
    query: dict[str, Any] = {
        "dice": "d6 d8 d10",
        "values": "4 5 7",
        "difficulty": 8,
        "flat": 0,
        "action": "read",
    }
    html = client.get("/dice/ogs/", query, headers=HX).text
    assert by_testid(html, "total") == "Total 16: success"
    assert "4 stages" in html


def test_it_reports_bad_dice_instead_of_failing(client: Client):
    html = client.get("/dice/ogs/", {"dice": "d7 d8"}).text
    assert "OGS dice are d4, d6, d8, d10 and d12" in html
    html = client.get("/dice/ogs/", {"dice": "d4 d8", "values": "9 1", "action": "read"}).text
    assert "must be between 1 and 4" in html


def test_it_highlights_john_does_best_set(client: Client):
    query: dict[str, Any] = {"pool": 7, "dice": "3 4 4 4 6 8 10", "action": "read"}
    html = client.get("/dice/ore/", query, headers=HX).text
    assert by_testid(html, "best") == "Best set 3x4, to the left arm"
    assert html.count("die-best") == 3


def test_it_follows_the_heroic_chain_on_the_simple_die_page(client: Client):
    query: dict[str, Any] = {
        "skill": 8,
        "against": "die",
        "difficulty": 10,
        "skill_rolls": "5",
        "flag_rolls": "10 20 3",
        "gm_roll": 7,
        "action": "read",
    }
    html = client.get("/dice/sds/", query).text
    assert "Heroic chain" in html
    assert by_testid(html, "outcome").endswith("500 against 7: the player wins")


def test_it_splits_ok_rpg_damage_and_reads_the_tide(client: Client):
    query = {"damage": "Grt", "dr": "Avg+", "lethality": "cutting", "tide": "worse"}
    html = client.get("/dice/okrpg/", {**query, "tide_dice": "6 2", "action": "read"}).text
    assert by_testid(html, "damage") == "3 points: 2 lethal, 1 nonlethal"
    assert by_testid(html, "tide") == "2"
    assert "11/36" in html


@pytest.mark.parametrize(
    ("url", "query"),
    [
        ("/dice/omg/", {"pro": "abc", "use": "pvd"}),
        ("/dice/omg/", {"roll": "999", "action": "read"}),
        ("/dice/ogs/", {"values": "one two", "action": "read"}),
        ("/dice/ore/", {"pool": "-1"}),
        ("/dice/ore/", {"pool": 3, "dice": "1 2", "action": "read"}),
        ("/dice/sds/", {"against": "die", "difficulty": ""}),
        ("/dice/sds/", {"flag_rolls": "10", "skill_rolls": "3", "action": "read"}),
        ("/dice/okrpg/", {"damage": "Huge"}),
        ("/dice/okrpg/", {"tide_dice": "6", "tide": "worse", "action": "read"}),
    ],
)
def test_it_explains_bad_input_on_the_page(client: Client, url, query):
    response = client.get(url, query, headers=HX)
    assert response.status_code == 200
    assert "dice-errors" in response.text


@pytest.mark.parametrize(
    ("url", "query"),
    [
        ("/dice/ogs/", {"dice": "d4 d8", "values": "\u0661 \u0664", "action": "read"}),
        ("/dice/ogs/", {"dice": "d4 d\u00b2"}),
        ("/dice/ore/", {"pool": 3, "dice": "\uff11 1 2", "action": "read"}),
        (
            "/dice/sds/",
            {"against": "none", "skill_rolls": "\u0665", "flag_rolls": "3", "action": "read"},
        ),
        ("/dice/okrpg/", {"tide_dice": "\u0666", "action": "read"}),
    ],
)
def test_it_reads_only_plain_digits_in_typed_in_dice(client: Client, url, query):
    # \d would take Arabic-Indic or full-width digits and int() would read them quietly.
    response = client.get(url, query, headers=HX)
    assert response.status_code == 200
    assert "dice-errors" in response.text
    assert 'data-testid="result"' not in response.text


TYPED_BUT_ONE = [
    (
        "ogs",
        {"dice": "d4 d6 d8", "flat": 0, "reroll_ones": "on", "values": "2 4 1"},
        "the enhancement die at position 3 showed 1",
    ),
    (
        "sds",
        {"skill": 8, "against": "die", "difficulty": 10, "skill_rolls": "5", "flag_rolls": "3"},
        "the GM&#x27;s d10 too",
    ),
]


@pytest.mark.parametrize(("system", "query", "message"), TYPED_BUT_ONE)
def test_it_asks_for_the_missing_die_instead_of_rolling_it(
    client: Client, seeded, system, query, message
):
    # Typed-in dice are read as they are: the page never throws the missing one itself.
    html = client.get(f"/dice/{system}/", {**query, "action": "read"}, headers=HX).text
    assert "dice-errors" in html and message in html
    assert 'data-testid="result"' not in html


# ------------------------------------------------------------------------------------------
# The OK RPG round planner


def test_it_plans_an_ok_rpg_round(client: Client):
    query = {"panel": "round", "combatants": "A, 7, 0\nB, 4, 2\nC, 2"}
    html = client.get("/dice/okrpg/", query).text
    assert "<html" in html
    assert re.findall(r"<li>(\w)</li>", by_section(html, "round-order")) == ["A", "B", "A", "B"]
    rows = table_rows(by_section(html, "round-table"))
    assert rows == [["A", "7", "2", "1"], ["B", "6", "2", "0"], ["C", "2", "0", "2"]]


def test_it_answers_the_round_planner_with_its_panel_only(client: Client):
    query = {"panel": "round", "combatants": "Ogre, 3, -2\nElf, 9, 3, down"}
    html = client.get("/dice/okrpg/", query, headers=HX).text
    assert html.lstrip().startswith('<section id="round-panel"')
    assert 'id="dice-panel"' not in html
    assert "Nobody reaches 3 points" in html
    assert "(Down)" in html and "(a penalty)" not in html


def test_it_shows_a_default_round_on_the_ok_rpg_page(client: Client):
    html = client.get("/dice/okrpg/").text
    assert 'data-testid="round-order"' in html
    assert "Aria, 7, 0" in html


@pytest.mark.parametrize(
    ("combatants", "message"),
    [
        ("A 7 0", "Line 1: write a name, the successes and the carry"),
        ("A, 7\n\nB, seven", "Line 3: successes and carry are whole numbers"),
        ("A, 7, 5", "Line 1: A carry must be between -100 and 3"),
        ("A, 7\nA, 3", "combatant names must be different"),
        ("   ", "This field is required"),
    ],
)
def test_it_explains_a_bad_round_inline(client: Client, combatants: str, message: str):
    html = client.get("/dice/okrpg/", {"panel": "round", "combatants": combatants}).text
    assert "dice-errors" in html
    assert message in html
    assert 'data-testid="round-order"' not in html


def test_it_escapes_names_in_the_round_planner(client: Client):
    query = {"panel": "round", "combatants": "<b>Boss</b>, 6"}
    html = client.get("/dice/okrpg/", query, headers=HX).text
    assert "<b>Boss</b>" not in html
    assert "&lt;b&gt;Boss&lt;/b&gt;" in html


def by_section(html: str, testid: str) -> str:
    match = re.search(rf'<(\w+)[^>]*data-testid="{testid}"[^>]*>(.*?)</\1>', html, re.S)
    assert match, f"no {testid} in the page"
    return match.group(2)


def table_rows(html: str) -> list[list[str]]:
    body = re.search(r"<tbody>(.*?)</tbody>", html, re.S)
    assert body
    rows = re.findall(r"<tr>(.*?)</tr>", body.group(1), re.S)
    return [
        [re.sub(r"<[^>]+>|\s+", " ", cell).split(" (")[0].strip() for cell in cells]
        for cells in (re.findall(r"<td[^>]*>(.*?)</td>", row, re.S) for row in rows)
    ]


# ------------------------------------------------------------------------------------------
# A campaign's dice pages and their roll log

SYSTEMS = ["omg", "ogs", "okrpg", "ore", "sds"]
JOHN = {"pool": 7, "penalty": 0, "difficulty": 0, "dice": "3 4 4 4 6 8 10"}


def campaign_url(table: Any, system: str = "") -> str:
    return f"/dice/campaigns/{table.campaign.pk}/" + (f"{system}/" if system else "")


def test_it_sends_anonymous_visitors_of_a_campaigns_dice_to_log_in(table, client: Client):
    for url in [campaign_url(table), campaign_url(table, "ore")]:
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")
    response = client.post(campaign_url(table, "ore"), {**JOHN, "action": "read"})
    assert response.status_code == 302
    assert not DiceRoll.objects.exists()


@pytest.mark.parametrize("who", ["outsider", "other_gm"])
def test_it_hides_a_campaigns_dice_from_outsiders(table, client_for, who: str):
    client = client_for(getattr(table, who))
    table.campaign.dice_rolls.create(roller=table.gm, system="ore", inputs="x", outcome="y")
    for url in [campaign_url(table), *(campaign_url(table, s) for s in SYSTEMS)]:
        assert client.get(url).status_code == 404, url
        assert client.get(url, headers=HX).status_code == 404, url
    response = client.post(campaign_url(table, "ore"), {**JOHN, "action": "read"}, headers=HX)
    assert response.status_code == 404
    assert DiceRoll.objects.count() == 1


@pytest.mark.parametrize("who", ["gm", "player"])
def test_it_shows_members_the_campaigns_dice(table, client_for, who: str):
    client = client_for(getattr(table, who))
    html = client.get(campaign_url(table)).text
    assert "Dice for The Sunken Keep" in html
    assert 'id="dice-log"' in html and "No rolls yet" in html
    for system in SYSTEMS:
        assert f'href="{campaign_url(table, system)}"' in html
        page = client.get(campaign_url(table, system)).text
        assert 'method="post"' in page
        assert 'name="csrfmiddlewaretoken"' in page
        assert f'hx-post="{campaign_url(table, system)}"' in page
        assert 'id="dice-log"' in page
        assert " style=" not in page


def test_it_links_the_campaign_page_to_its_dice(table, client_for):
    html = client_for(table.player).get(f"/campaigns/{table.campaign.pk}/").text
    assert f'href="{campaign_url(table)}"' in html


@pytest.mark.parametrize("who", ["gm", "player"])
def test_it_logs_a_server_roll_and_swaps_in_the_log(table, client_for, seeded, who: str):
    user = getattr(table, who)
    body = {"pool": 7, "penalty": 0, "difficulty": 0, "dice": "", "action": "roll"}
    response = client_for(user).post(campaign_url(table, "ore"), body, headers=HX)
    assert response.status_code == 200
    html = response.text
    assert "<html" not in html
    assert html.lstrip().startswith('<section id="dice-panel"')
    assert (
        'id="dice-log" class="dice-log" aria-labelledby="dice-log-heading" hx-swap-oob="true"'
        in html
    )
    roll = DiceRoll.objects.get()
    assert (roll.campaign, roll.roller, roll.system) == (table.campaign, user, "ore")
    assert (roll.physical, roll.source, roll.inputs) == (False, "page", "7 dice")
    assert roll.outcome in html and "server dice" in html
    assert "7 dice on the table" in by_section(html, "result")


def test_it_logs_typed_in_dice_and_redirects_a_plain_form_to_the_same_reading(table, client_for):
    client = client_for(table.player)
    body = {"use": "pvd", "pro": 70, "dif": 20, "fast": "on", "roll": 43, "action": "read"}
    response = client.post(campaign_url(table, "omg"), {**body, "note": "Swing at the ogre"})
    assert response.status_code == 302
    location = response["Location"]
    assert location.startswith(campaign_url(table, "omg") + "?")
    assert "csrfmiddlewaretoken" not in location and "note" not in location
    html = client.get(location).text
    assert by_testid(html, "degree") == "Success"
    assert by_testid(html, "second") == "Hit"
    roll = DiceRoll.objects.get()
    assert (roll.physical, roll.note, roll.inputs) == (
        True,
        "Swing at the ogre",
        "70 v 20, fast strike",
    )
    assert roll.outcome == "43: Success (SUM 7); reversed 34 hits"
    log = by_section(html, "dice-log")
    assert "Swing at the ogre" in log and "typed in" in log and "player" in log
    client.get(location)
    assert DiceRoll.objects.count() == 1  # reading the page again logs nothing


@pytest.mark.parametrize(
    ("system", "body"),
    [
        ("omg", {"use": "scores", "strike": "fast", "attack_apt": 3, "attack_dsc": 3}),
        ("omg", {"use": "pvd", "pro": 70, "dif": 20}),
        ("ogs", {"dice": "d4 d6 d6 d6 d6", "flat": 1, "difficulty": 12, "reroll_ones": "on"}),
        ("ore", {"pool": 9, "penalty": 1, "master": "on", "difficulty": 4}),
        ("ore", {"pool": 6, "expert": 9, "difficulty": 0}),
        ("sds", {"skill": 8, "against": "die", "difficulty": 10, "unskilled": "on"}),
        ("sds", {"skill": 6, "against": "hard", "difficulty": 5}),
        ("okrpg", {"tide": "better"}),
    ],
)
def test_it_reads_a_server_roll_back_from_its_redirect(
    table, client_for, monkeypatch: pytest.MonkeyPatch, system, body
):
    monkeypatch.setattr(randomness, "RNG", random.Random(11))
    client = client_for(table.gm)
    for _ in range(5):  # a few rolls, so that ones, heroic flags and sets come up
        response = client.post(campaign_url(table, system), {**body, "action": "roll"})
        assert response.status_code == 302, response.text
        page = client.get(response["Location"])
        assert 'data-testid="result"' in page.text or 'data-testid="degree"' in page.text
        # The redirect typed the server's dice in: reading them logs the very same outcome.
        query = dict(page.wsgi_request.GET.items())
        again = client.post(campaign_url(table, system), query, headers=HX)
        assert again.status_code == 200
        typed, server = DiceRoll.objects.order_by("-pk")[:2]
        assert (server.physical, typed.physical) == (False, True)
        assert (server.inputs, server.outcome) == (typed.inputs, typed.outcome)


def test_it_never_rolls_server_dice_on_a_get_in_a_campaign(table, client_for):
    html = client_for(table.player).get(campaign_url(table, "ore"), {"action": "roll"}).text
    assert 'data-testid="result"' not in html
    assert not DiceRoll.objects.exists()


def test_it_sends_the_no_script_odds_button_back_to_a_get(table, client_for):
    client = client_for(table.player)
    response = client.post(campaign_url(table, "ogs"), {"dice": "d6 d8", "note": "x"})
    assert response.status_code == 302
    assert response["Location"] == campaign_url(table, "ogs") + "?dice=d6+d8"
    assert not DiceRoll.objects.exists()


@pytest.mark.parametrize("headers", [{}, HX])
@pytest.mark.parametrize(
    ("system", "body", "message"),
    [
        ("ore", {"pool": 3, "dice": "1 2", "action": "read"}, "dice"),
        ("omg", {"use": "pvd", "pro": 70, "dif": 20, "action": "read"}, "Type the roll you made"),
        ("ogs", {"dice": "d7", "action": "roll"}, "OGS dice are"),
        ("okrpg", {"tide": "worse", "tide_dice": "6", "action": "read"}, "tide dice"),
        ("sds", {"skill": 8, "action": "roll", "note": "n" * 81}, "80 characters"),
    ],
)
def test_it_logs_nothing_for_bad_input(table, client_for, headers, system, body, message):
    response = client_for(table.player).post(campaign_url(table, system), body, headers=headers)
    assert response.status_code == 422
    assert "dice-errors" in response.text and message in response.text
    assert ("<html" in response.text) is not bool(headers)
    assert 'hx-swap-oob="true"' not in response.text
    assert 'data-testid="result"' not in response.text
    assert not DiceRoll.objects.exists()


@pytest.mark.parametrize("headers", [{}, HX])
@pytest.mark.parametrize(("system", "query", "message"), TYPED_BUT_ONE)
def test_it_logs_nothing_when_typed_in_dice_miss_one(
    table, client_for, seeded, headers, system, query, message
):
    body = {**query, "action": "read"}
    response = client_for(table.player).post(campaign_url(table, system), body, headers=headers)
    assert response.status_code == 422
    assert "dice-errors" in response.text and message in response.text
    assert 'data-testid="result"' not in response.text
    assert not DiceRoll.objects.exists()


def test_it_refuses_a_roll_without_the_csrf_token(table):
    client = Client(enforce_csrf_checks=True)
    client.force_login(table.player)
    url = campaign_url(table, "ore")
    assert client.post(url, {**JOHN, "action": "read"}).status_code == 403
    assert client.post(url, {**JOHN, "action": "read"}, headers=HX).status_code == 403
    assert not DiceRoll.objects.exists()
    page = client.get(url).text
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    header = json.loads(re.search(r"<body hx-headers='([^']*)'", page).group(1))
    response = client.post(url, {**JOHN, "action": "read", "csrfmiddlewaretoken": token})
    assert response.status_code == 302
    response = client.post(url, {**JOHN, "action": "read"}, headers={**HX, **header})
    assert response.status_code == 200
    assert DiceRoll.objects.count() == 2


def test_it_shows_the_newest_thirty_rolls_of_this_campaign_only(table, client_for):
    other = Campaign.objects.get(name="Elsewhere")
    other.dice_rolls.create(roller=table.other_gm, system="ogs", inputs="d4", outcome="secret")
    for n in range(35):
        table.campaign.dice_rolls.create(
            roller=table.player, system="ore", inputs=f"roll {n}", outcome=f"outcome {n}"
        )
    html = client_for(table.gm).get(campaign_url(table), headers=HX).text
    assert html.lstrip().startswith('<section id="dice-log"')
    shown = re.findall(r"outcome (\d+)", html)
    assert shown == [str(n) for n in range(34, 4, -1)]
    assert "secret" not in html


def test_it_escapes_hostile_text_in_the_log(table, client_for):
    evil = '<img src=x onerror="alert(1)">'
    table.campaign.name = f"Keep {evil}"
    table.campaign.save()
    roller = make_user(f"<script>alert('{evil}')</script>")
    Membership.objects.create(campaign=table.campaign, user=roller)
    client = client_for(roller)
    body = {**JOHN, "action": "read", "note": f"Dodge {evil}"}
    for headers in [{}, HX]:
        response = client.post(campaign_url(table, "ore"), body, headers=headers)
        html = (
            client.get(response["Location"]).text if response.status_code == 302 else response.text
        )
        assert evil not in html
        assert "<script>alert" not in html
        assert "Dodge &lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html
    assert DiceRoll.objects.filter(note=f"Dodge {evil}").count() == 2


def test_it_keeps_the_rolls_of_a_member_who_left(table, client_for):
    table.campaign.dice_rolls.create(roller=table.player, system="sds", inputs="s", outcome="o")
    table.player.delete()
    html = client_for(table.gm).get(campaign_url(table)).text
    assert "a former member" in html


# ------------------------------------------------------------------------------------------
# The log's summaries


@pytest.mark.parametrize(
    ("result", "system", "inputs", "outcome"),
    [
        (omg.check(70, 20, 82), "omg", "70 v 20", "82: Failure (SUM 10)"),
        (
            omg.strike(omg.Attacker("fast", 3, 3, 4), omg.Defender("dodge", 3, 2, 2), 43),  # type: ignore[arg-type]  # parsed in __post_init__
            "omg",
            "Fast strike 80 v 25 against dodge",
            "43: Success; 2 hits, 9 damage",
        ),
        (
            ogs.roll_check(ogs.ActionCheck((6, 8, 10), 2), difficulty=8, values=[4, 5, 7]),
            "ogs",
            "d6 + d8 + d10 + 2 vs 8",
            "4, 5, 7 = 18: success, 5 stages",
        ),
        (
            ogs.roll_open(["d6"] * 2, flat=-1, values=[1, 5]),
            "ogs",
            "Open roll d6 + d6 - 1",
            "1, 5 = 5",
        ),
        (
            ore.roll(ore.OrePool(7), dice=[3, 4, 4, 4, 6, 8, 10]),
            "ore",
            "7 dice",
            "3, 4, 4, 4, 6, 8, 10: 3x4 to the left arm",
        ),
        (
            ore.roll(ore.OrePool(4, master=True), difficulty=9, dice=[2, 5, 9]),
            "ore",
            "4 dice, master die, difficulty 9",
            "2, 5, 9, 9: 2x9 to the torso",
        ),
        (
            sds.check(
                sds.SkillCheck(8),
                sds.Difficulty(die=10),
                skill_rolls=[5],
                flag_rolls=[10, 20, 3],
                gm_roll=7,
            ),
            "sds",
            "Skill 8 on a d8 vs the GM's d10",
            "5, flag 10, 20, 3: 5 x 100 = 500 (heroic) against 7: the player wins",
        ),
        (
            sds.check(
                sds.SkillCheck(8, unskilled=True),
                sds.Difficulty(hard=7),
                skill_rolls=[6, 3],
                flag_rolls=[1],
            ),
            "sds",
            "Skill 8 on a d8, unskilled vs Hard 7",
            "6, 3, flag 1: 3 (critical) against 7: the GM wins",
        ),
        (okrpg.read_tide([6, 2], "worse"), "okrpg", "Tide of Battle, worse of two", "6, 2: 2"),
        (okrpg.read_tide([6]), "okrpg", "Tide of Battle", "6: 6, an edge"),
    ],
)
def test_it_sums_up_each_kind_of_roll_for_the_log(result, system, inputs, outcome):
    assert describe_roll(result) == (system, inputs, outcome)


def test_it_refuses_to_log_what_is_not_a_roll():
    with pytest.raises(TypeError):
        describe_roll(okrpg.damage("Grt", "Avg+", "cutting"))


def _field_value(html: str, name: str) -> str:
    match = re.search(rf'<input type="number" name="{name}" value="([^"]*)"', html)
    assert match, f"no {name} field"
    return match.group(1)


def test_it_shows_the_pro_and_dif_a_roll_from_scores_used_in_their_fields(client: Client, seeded):
    # The defaults work from scores: a fast strike 3+3 against a dodge 3+2 is 80 v 25, so the
    # PRO and DIF fields say 80 and 25, not their own defaults.
    html = client.get("/dice/omg/", {"action": "roll"}).text
    assert "<h2>80 v 25</h2>" in html and "at 80v25" in html
    assert (_field_value(html, "pro"), _field_value(html, "dif")) == ("80", "25")
    assert re.search(r'<input type="checkbox" name="fast"[^>]*checked', html)
    # With htmx the panel comes alone, and the fields follow out of band.
    panel = client.get("/dice/omg/", {"action": "roll"}, headers=HX).text
    oob = re.search(r'<div id="pvd-fields" hx-swap-oob="true">.*?</div>\s*</div>', panel, re.S)
    assert oob is not None
    assert (_field_value(oob[0], "pro"), _field_value(oob[0], "dif")) == ("80", "25")
    # Typed in, PRO and DIF are the user's own: kept as typed, never swapped under them.
    query: dict[str, Any] = {"use": "pvd", "pro": 70, "dif": 20}
    typed = client.get("/dice/omg/", query, headers=HX).text
    assert "<h2>70 v 20</h2>" in typed and "pvd-fields" not in typed
    full = client.get("/dice/omg/", query).text
    assert (_field_value(full, "pro"), _field_value(full, "dif")) == ("70", "20")
