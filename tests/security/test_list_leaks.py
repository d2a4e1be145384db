"""Lists never leak another campaign's objects, and a hidden NPC's numbers never reach a player.

Two campaigns, both with characters, an encounter in full swing, combat log entries, rolls and
dice-log rolls: the Sunken Keep (the authorization matrix's table) and Elsewhere (other_gm, with
their player Zed). Every API list and every list page is read by each user, and what they see
must come from their own campaigns only. Then the Keep's hidden thug: nothing a player reads
(JSON, pages, the live feed) may carry its numbers or the odds of a fight it is in.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from combat import services as combat
from combat.models import CombatLogEntry, Encounter, Participant
from combat.render import tracker_panels
from rules.models import DiceRoll
from sheets.models import Campaign, Character, Membership
from tests.factories import make_thug, make_user, make_ysolde
from tests.feed import events, stream_text
from tests.fight_steps import declare_and_defend
from tests.security.matrix import World, build_world

pytestmark = pytest.mark.django_db

USERS = ("gm", "owner", "player", "outsider", "other_gm", "zed")


@dataclass
class Two:
    """The matrix's table, a fight in it (Ysolde's roll against the hidden thug), and a
    second campaign with its own fight."""

    w: World
    zed: Any
    far_encounter: Encounter
    pvd: str  # the odds of Ysolde's roll on the thug: the GM's secret

    def user(self, name: str) -> Any:
        return self.zed if name == "zed" else getattr(self.w, name)

    def client(self, name: str) -> Client:
        client = Client()
        client.force_login(self.user(name))
        return client

    def campaigns_of(self, name: str) -> set[int]:
        return set(Campaign.objects.for_user(self.user(name)).values_list("pk", flat=True))


def fight_in(campaign: Campaign, gm: Any, player: Any, names: tuple[str, str, str]) -> Encounter:
    hero = make_ysolde(campaign, player, name=names[0])
    npc = make_thug(campaign, gm, name=names[1])
    encounter, _ = combat.create_encounter(campaign=campaign, name=names[2], actor=gm)
    combat.add_participants(encounter=encounter, characters=[hero], actor=gm)
    combat.add_npc_copies(encounter=encounter, npc=npc, count=1, hidden=True, actor=gm)
    combat.start_encounter(encounter=encounter, actor=gm)
    return encounter


def roll_on_the_thug(encounter: Encounter, gm: Any, player: Any) -> CombatLogEntry:
    hero, thug = (
        Participant.objects.select_related("character", "encounter__campaign").get(pk=p.pk)
        for p in encounter.participants.order_by("position")
    )
    decl = declare_and_defend(encounter, hero, thug, actor=player, defender=gm)
    return combat.resolve(declaration=decl, roll=43, actor=player)


@pytest.fixture
def two() -> Two:
    w = build_world()
    entry = roll_on_the_thug(w.encounter, w.gm, w.owner)
    # The GM's own words for the roll carry the PvD ("90v20"): players never get them.
    pvd = re.search(r"\d+v\d+", entry.text).group(0)
    zed = make_user("zed")
    Membership.objects.create(campaign=w.elsewhere, user=zed)
    far = fight_in(w.elsewhere, w.other_gm, zed, ("Zed Farwalker", "Far Brigand", "Far Skirmish"))
    roll_on_the_thug(far, w.other_gm, zed)
    two = Two(w, zed, far, pvd)
    for name, campaign in (("owner", w.campaign), ("zed", w.elsewhere)):
        two.client(name).post(
            reverse("dice:campaign_omg", args=[campaign.pk]),
            {"action": "roll", "note": f"{name}'s secret roll"},
        )
    assert DiceRoll.objects.count() == 2
    return two


def api_list(client: Client, url: str) -> list[dict[str, Any]]:
    response = client.get(url + ("&" if "?" in url else "?") + "limit=1000")
    assert response.status_code == 200, (url, response.status_code)
    data = response.json()
    return data["results"] if isinstance(data, dict) else data


# --- API lists ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", USERS)
def test_it_lists_only_your_campaigns_characters_and_encounters(two, name):
    client = two.client(name)
    mine = two.campaigns_of(name)
    campaigns = {c["id"] for c in api_list(client, "/api/campaigns/")}
    assert campaigns == mine
    characters = api_list(client, "/api/characters/")
    visible = Character.objects.visible_to(two.user(name))
    assert {c["id"] for c in characters} == set(visible.values_list("pk", flat=True))
    assert {c["campaign"] for c in characters} <= mine
    encounters = api_list(client, "/api/encounters/")
    assert {e["id"] for e in encounters} == set(
        Encounter.objects.filter(campaign__in=mine).values_list("pk", flat=True)
    )
    # Asking for someone else's campaign by id gives an empty list, not their objects.
    for campaign in Campaign.objects.exclude(pk__in=mine):
        for url in ("/api/characters/", "/api/encounters/"):
            assert api_list(client, f"{url}?campaign={campaign.pk}") == [], url


def test_it_sees_something_in_every_list_for_a_member(two):
    """The lists above are not empty by accident: both GMs see their own campaign's things."""
    for name, campaign in (("gm", two.w.campaign), ("other_gm", two.w.elsewhere)):
        client = two.client(name)
        assert {c["campaign"] for c in api_list(client, "/api/characters/")} == {campaign.pk}
        assert {e["campaign"] for e in api_list(client, "/api/encounters/")} == {campaign.pk}


@pytest.mark.parametrize("name", ["gm", "owner", "player"])
def test_it_lists_a_characters_rows_and_an_encounters_parts_only(two, name):
    """Nested lists (disciplines, weapons, zones; participants, log) hold the parent's own
    rows; the other campaign's parents are 404."""
    client = two.client(name)
    ysolde = two.w.ysolde
    for kind, related in (
        ("disciplines", "disciplines"),
        ("weapons", "weapons"),
        ("zones", "zones"),
    ):
        rows = api_list(client, f"/api/characters/{ysolde.pk}/{kind}/")
        assert {r["id"] for r in rows} == set(getattr(ysolde, related).values_list("pk", flat=True))
    enc = two.w.encounter
    participants = api_list(client, f"/api/encounters/{enc.pk}/participants/")
    assert {p["id"] for p in participants} == set(enc.participants.values_list("pk", flat=True))
    events = api_list(client, f"/api/encounters/{enc.pk}/events/")
    assert {e["id"] for e in events} == set(enc.log.values_list("pk", flat=True))
    far = two.far_encounter
    far_hero = far.participants.get(character__name="Zed Farwalker").character
    for url in (
        f"/api/encounters/{far.pk}/",
        f"/api/encounters/{far.pk}/participants/",
        f"/api/encounters/{far.pk}/events/",
        f"/api/characters/{far_hero.pk}/",
        f"/api/characters/{far_hero.pk}/zones/",
        f"/api/participants/{far.participants.first().pk}/",
        f"/api/rolls/{far.log.filter(kind='roll').get().pk}/",
    ):
        assert client.get(url).status_code == 404, url


# --- List pages ---------------------------------------------------------------------------

FAR_NAMES = ("Elsewhere", "Zed Farwalker", "Far Brigand", "Far Skirmish", "zed's secret roll")
NEAR_NAMES = ("The Sunken Keep", "Ysolde Varr", "Salvager Thug", "Ambush", "owner's secret roll")


@pytest.mark.parametrize("name", ["gm", "owner", "player"])
def test_it_shows_no_other_campaigns_names_on_your_pages(two, name):
    client = two.client(name)
    keep = two.w.campaign.pk
    pages = [
        reverse("sheets:dashboard"),
        reverse("sheets:campaign_detail", args=[keep]),
        reverse("combat:encounter_list", args=[keep]),
        reverse("combat:encounter_detail", args=[two.w.encounter.pk]),
        reverse("dice:campaign_index", args=[keep]),
        reverse("dice:campaign_omg", args=[keep]),
    ]
    for url in pages:
        response = client.get(url)
        assert response.status_code == 200, url
        page = response.content.decode()
        leaked = [n for n in FAR_NAMES if n in page]
        assert not leaked, (url, leaked)
    # The dice log really lists the Keep's roll: the check above is not vacuous.
    assert "owner&#x27;s secret roll" in client.get(pages[4]).content.decode()


def test_it_shows_elsewheres_things_to_elsewhere_only(two):
    client = two.client("zed")
    far = two.w.elsewhere.pk
    for url in (
        reverse("sheets:dashboard"),
        reverse("sheets:campaign_detail", args=[far]),
        reverse("combat:encounter_list", args=[far]),
        reverse("dice:campaign_index", args=[far]),
    ):
        page = client.get(url).content.decode()
        assert not [n for n in NEAR_NAMES if n in page], url
    assert "Far Skirmish" in client.get(reverse("combat:encounter_list", args=[far])).text


@pytest.mark.parametrize("name", ["outsider", "other_gm"])
def test_it_lists_nothing_of_the_keep_on_an_outsiders_dashboard(two, name):
    page = two.client(name).get(reverse("sheets:dashboard")).content.decode()
    assert not [n for n in NEAR_NAMES if n in page]


# --- Hidden NPC numbers -------------------------------------------------------------------


def player_json(two: Two, name: str) -> dict[str, Any]:
    """Every JSON document about the Keep's fight that ``name`` may read."""
    client = two.client(name)
    enc = two.w.encounter
    urls = [
        f"/api/encounters/{enc.pk}/",
        f"/api/encounters/{enc.pk}/participants/",
        f"/api/encounters/{enc.pk}/events/",
        "/api/characters/",
        *(f"/api/participants/{pk}/" for pk in enc.participants.values_list("pk", flat=True)),
        *(f"/api/attacks/{pk}/" for pk in enc.declarations.values_list("pk", flat=True)),
        *(
            f"/api/rolls/{pk}/"
            for pk in enc.log.filter(roll__isnull=False).values_list("pk", flat=True)
        ),
    ]
    documents = {}
    for url in urls:
        response = client.get(url, {"limit": 1000})
        assert response.status_code == 200, url
        documents[url] = response.json()
    return documents


@pytest.mark.parametrize("name", ["owner", "player"])
def test_it_never_sends_a_player_the_hidden_thugs_numbers_in_json(two, name):
    thug = two.w.t
    documents = player_json(two, name)
    text = json.dumps(documents)
    assert two.pvd not in text
    for p in documents[f"/api/encounters/{two.w.encounter.pk}/participants/"]:
        assert (p["numbers"] is None) == (p["id"] == thug.pk), p["name"]
    assert documents[f"/api/participants/{thug.pk}/"]["numbers"] is None
    for entry in documents[f"/api/encounters/{two.w.encounter.pk}/events/"]:
        involved = thug.pk in CombatLogEntry.objects.get(pk=entry["id"]).payload["involves"]
        assert entry["details"] is None if involved else entry["details"] is not None
    listed = {c["id"] for c in documents["/api/characters/"]["results"]}
    assert thug.character_id not in listed
    # The NPC's rows, by id, are as unknown as its sheet.
    client = two.client(name)
    for kind in ("disciplines", "weapons", "zones"):
        url = f"/api/characters/{thug.character_id}/{kind}/"
        assert client.get(url).status_code == 404, url


def test_it_gives_the_gm_everything_the_players_do_not_get(two):
    """The checks above are not vacuous: the GM's JSON has the numbers and the odds."""
    documents = player_json(two, "gm")
    assert two.pvd in json.dumps(documents)
    assert documents[f"/api/participants/{two.w.t.pk}/"]["numbers"] is not None
    assert two.w.t.character_id in {c["id"] for c in documents["/api/characters/"]["results"]}


@pytest.mark.parametrize("name", ["owner", "player"])
def test_it_never_sends_a_player_the_hidden_thugs_numbers_in_pages_or_the_live_feed(two, name):
    user = two.user(name)
    enc = two.w.encounter
    page = two.client(name).get(reverse("combat:encounter_detail", args=[enc.pk])).text
    assert two.pvd not in page
    assert f'data-testid="vit-{two.w.t.pk}"' not in page
    # What the live feed sends this viewer after the start: each entry, then the panels.
    first = enc.log.order_by("pk").first()
    feed = stream_text(enc, user, first.pk)
    assert [m.event for m in events(feed) if m.event == "entry"]
    assert two.pvd not in feed
    assert f'data-testid="vit-{two.w.t.pk}"' not in feed
    assert two.pvd not in tracker_panels(enc, user)["tracker"]
    gm_feed = stream_text(enc, two.w.gm, first.pk)
    assert two.pvd in gm_feed


# --- A hidden fighter's own rolls ---------------------------------------------------------

THUG_ROLL, REROLL = 77, 88  # the hidden thug's d100s: with the degree they bound its PRO


def the_thug_strikes(two: Two) -> None:
    """The hidden thug's strike on Ysolde (table dice, 77), which the owner makes Ysolde
    re-roll with her Fate (88): three entries whose d100 is the thug's."""
    w = two.w
    # Ysolde's roll put it down: the GM stands it up again (its Vitality stays at 0).
    combat.update_participant(participant=w.t, state="active", actor=w.gm)
    y, t = (Participant.objects.select_related("character").get(pk=p.pk) for p in (w.y, w.t))
    decl = declare_and_defend(
        w.encounter, t, y, action="fast", actor=w.gm, defender=w.owner, defense="dodge"
    )
    rolled = combat.resolve(declaration=decl, roll=THUG_ROLL, actor=w.gm)
    combat.spend_fate(entry=rolled, spender=y, action="reroll", roll=REROLL, actor=w.owner)


def what_a_user_receives(two: Two, name: str) -> dict[str, str]:
    """Every path the log and its rolls reach a user by: the API (log, rolls, record), the
    encounter page, the live feed's rendered entries and tracker, the record downloads."""
    user, client = two.user(name), two.client(name)
    enc = two.w.encounter
    first = enc.log.order_by("pk").first()
    docs = player_json(two, name)
    record = f"/api/encounters/{enc.pk}/record/"
    return {
        "api": json.dumps(docs),
        "events": json.dumps(client.get(f"/api/encounters/{enc.pk}/events/").json()),
        "record_api": json.dumps(client.get(record).json()),
        "record_api_md": client.get(record + "markdown/").content.decode(),
        "record_json": client.get(reverse("combat:record_json", args=[enc.pk])).content.decode(),
        "record_md": client.get(reverse("combat:record_markdown", args=[enc.pk])).content.decode(),
        "page": client.get(reverse("combat:encounter_detail", args=[enc.pk])).text,
        "feed": stream_text(enc, user, first.pk),
        "tracker": tracker_panels(enc, user)["tracker"],
    }


def d100s(text: str, value: int) -> list[str]:
    """Where ``value`` appears as a d100 in a JSON document, a page or a Markdown record."""
    patterns = (
        rf'"roll": {value}\b',
        rf"dice: {value}\b",
        rf"\broll {value}\b",
        rf"rolled {value}\b",
        rf"d100: {value}\b",
        rf"latest roll: {value}\b",
    )
    return [m.group(0) for p in patterns for m in re.finditer(p, text, re.IGNORECASE)]


@pytest.mark.parametrize("name", ["owner", "player"])
def test_it_never_sends_a_player_the_hidden_thugs_d100(two, name):
    the_thug_strikes(two)
    for path, text in what_a_user_receives(two, name).items():
        for value in (THUG_ROLL, REROLL):
            assert not d100s(text, value), (path, value, d100s(text, value))
    # The degree and effect stay: the owner's result card says how the re-roll went.
    if name == "owner":
        page = what_a_user_receives(two, name)["page"]
        assert 'data-testid="result-degree"' in page
        assert "spends 1 Fate and re-rolls the roll." in page


def test_it_gives_the_gm_the_hidden_thugs_d100_everywhere(two):
    """The check above is not vacuous: each path carries the d100s to the GM."""
    the_thug_strikes(two)
    for path, text in what_a_user_receives(two, "gm").items():
        if path == "tracker":
            continue  # the tracker shows no log (the feed's entries do)
        assert d100s(text, REROLL), path
        if path not in ("page",):  # the page shows the newest entries only
            assert d100s(text, THUG_ROLL), path
