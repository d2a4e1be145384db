"""Wounds in words over the API: the GM sets what players see of a hidden fighter
(`hidden_shows`), and the participants the API answers carry the word (`wounds_in_words`) for a
viewer kept from the numbers, never a number."""

from __future__ import annotations

import re

import pytest

from combat.models import Participant

pytestmark = pytest.mark.django_db


@pytest.fixture
def api_for(api_for):
    def make(user):
        client = api_for(user)
        client.default_format = "json"
        return client

    return make


def thug_as_seen_by(client, fight) -> list[dict]:
    """The thug as each read of the API gives it: the encounter, its participants, the one."""
    enc, pk = fight.encounter.pk, fight.thug.pk
    detail = client.get(f"/api/encounters/{enc}/").json()["participants"]
    listed = client.get(f"/api/encounters/{enc}/participants/").json()
    return [
        next(p for p in detail if p["id"] == pk),
        next(p for p in listed if p["id"] == pk),
        client.get(f"/api/participants/{pk}/").json(),
    ]


def update(client, fight, body):
    return client.post(f"/api/participants/{fight.thug.pk}/update/", body)


def test_it_gives_players_the_word_and_the_gm_the_numbers(fight, api_for):
    gm, player = api_for(fight.table.gm), api_for(fight.table.player)
    assert all(p["wounds_in_words"] is None for p in thug_as_seen_by(player, fight))
    assert update(gm, fight, {"hidden_shows": "words"}).status_code == 200
    assert Participant.objects.get(pk=fight.thug.pk).hidden_shows == "words"
    for seen in thug_as_seen_by(player, fight):
        assert seen["wounds_in_words"] == "unhurt"
        assert seen["numbers"] is None
        # No number about its wounds: only ids, turn order and counterattacks, as before.
        numeric = {k for k, v in seen.items() if isinstance(v, int) and not isinstance(v, bool)}
        assert numeric <= {"id", "character", "gm_order", "position", "counterattacks"}
    for seen in thug_as_seen_by(gm, fight):
        assert seen["numbers"]["vitality"] == 7
        assert seen["wounds_in_words"] is None
    # The player's own fighter is never told in words: they see its numbers.
    own = api_for(fight.table.player).get(f"/api/participants/{fight.ysolde.pk}/").json()
    assert own["wounds_in_words"] is None and own["numbers"]["vitality"] == 10


def test_the_word_follows_the_fight(fight, api_for):
    gm, player = api_for(fight.table.gm), api_for(fight.table.player)
    update(gm, fight, {"hidden_shows": "words"})
    head = fight.zone(fight.thug, "head")
    wound = {"zone": head.pk, "amount": 14}  # past BZF 13: a grievous wound
    assert gm.post(f"/api/encounters/{fight.encounter.pk}/adjust/", wound).status_code == 200
    assert {p["wounds_in_words"] for p in thug_as_seen_by(player, fight)} == {"badly hurt"}
    update(gm, fight, {"state": "unconscious"})
    assert {p["wounds_in_words"] for p in thug_as_seen_by(player, fight)} == {"down"}
    update(gm, fight, {"hidden_shows": "nothing"})
    assert {p["wounds_in_words"] for p in thug_as_seen_by(player, fight)} == {None}


def test_only_the_gm_sets_hidden_shows_and_only_to_a_known_value(fight, api_for):
    gm, player = api_for(fight.table.gm), api_for(fight.table.player)
    assert update(player, fight, {"hidden_shows": "words"}).status_code == 403
    bad = update(gm, fight, {"hidden_shows": "numbers"})
    assert bad.status_code == 400 and "hidden_shows" in bad.json()
    assert Participant.objects.get(pk=fight.thug.pk).hidden_shows == "nothing"


def test_the_schema_documents_the_word_and_the_switch(api_for, fight):
    schema = (
        api_for(fight.table.gm)
        .get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
        .json()
    )
    components = schema["components"]["schemas"]
    field = components["Participant"]["properties"]["wounds_in_words"]
    # OpenAPI 3.1: null is one of the choices (NullEnum), not a "nullable" flag.
    assert any("null" in str(s).lower() for s in field.get("oneOf", []))
    enum_ref = re.search(r"#/components/schemas/(\w+)", str(field))[1]
    assert set(components[enum_ref]["enum"]) >= {"unhurt", "hurt", "badly hurt", "down"}
    switch = components["ParticipantUpdateRequest"]["properties"]["hidden_shows"]
    switch_ref = re.search(r"#/components/schemas/(\w+)", str(switch))[1]
    assert set(components[switch_ref]["enum"]) == {"nothing", "words"}
