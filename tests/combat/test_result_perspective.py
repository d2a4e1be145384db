"""The result card told from the reader's side: the same roll reads "Missed you" on the
defender's screen, "Your precise strike missed" on the attacker's and the neutral line for the
GM, a bystander and the log; its colour follows the reader's news; a hidden NPC's numbers stay
hidden in every wording, on either side of the roll."""

from __future__ import annotations

import html
import re

import pytest

from combat import services
from combat.live import broadcast
from combat.models import Participant
from combat.render import LiveTracker
from sheets.models import Membership
from tests.factories import make_user, make_ysolde

pytestmark = pytest.mark.django_db

CARD = re.compile(r'<section class="result-card[^"]*".*?</section>', re.S)


@pytest.fixture
def table_of_four(fight):
    """The fight, plus a visible thug copy and a bystander: another player whose character
    is in the fight but not in the roll."""
    services.add_npc_copies(
        encounter=fight.encounter, npc=fight.npc, count=1, actor=fight.table.gm, hidden=False
    )
    fight.visible = Participant.objects.select_related("character").get(
        encounter=fight.encounter, character__name="Salvager Thug #2"
    )
    fight.bystander = make_user("bystander")
    Membership.objects.create(campaign=fight.table.campaign, user=fight.bystander)
    brannoc = make_ysolde(fight.table.campaign, fight.bystander, name="Brannoc", itv=3)
    services.add_participants(encounter=fight.encounter, characters=[brannoc], actor=fight.table.gm)
    return fight


def _strike(fight, attacker, target, defense, roll, actor):
    decl, _ = services.declare_attack(
        encounter=fight.encounter,
        attacker=attacker,
        target=target,
        action="precise",
        zone=fight.zone(target, "chest"),
        weapon=fight.weapon(attacker),
        actor=actor,
    )
    services.declare_defense(declaration=decl, defense=defense, actor=fight.table.gm)
    return services.resolve(declaration=decl, roll=roll, actor=actor)


def _cards(text: str) -> list[str]:
    return [html.unescape(card) for card in CARD.findall(text)]


def _card(client, fight) -> str:
    cards = _cards(client.get(fight.encounter.get_absolute_url()).text)
    assert len(cards) == 1, "the page draws one card, its reader's"
    return cards[0]


def _headline(card: str) -> str:
    match = re.search(r'data-testid="result-headline">(.*?)</span>', card)
    assert match
    return match.group(1)


def _tone(card: str) -> str:
    match = re.search(r'data-tone="(\w+)"', card)
    assert match
    return match.group(1)


def test_it_tells_a_miss_as_good_news_to_the_defender_and_neutrally_to_others(
    table_of_four, client_for
):
    fight = table_of_four
    entry = _strike(fight, fight.visible, fight.ysolde, "dodge", 5, fight.table.gm)
    defender = _card(client_for(fight.table.player), fight)
    assert _headline(defender) == "Missed you: Ysolde Varr dodged"
    assert _tone(defender) == "good"
    assert "result-good" in defender and "result-failure" not in defender
    neutral = "Salvager Thug #2's precise strike missed Ysolde Varr: Ysolde Varr dodged"
    for reader in (fight.table.gm, fight.bystander):
        card = _card(client_for(reader), fight)
        assert _headline(card) == neutral
        assert _tone(card) == "neutral"
    # The log keeps its own text, the same for everyone.
    assert entry.text.startswith("Salvager Thug #2 precise strike at Ysolde Varr's chest")


def test_it_tells_the_attacker_their_own_hit_and_miss(table_of_four, client_for):
    fight = table_of_four
    _strike(fight, fight.ysolde, fight.visible, "parry", 43, fight.table.player)
    card = _card(client_for(fight.table.player), fight)
    assert _headline(card) == "Your precise strike hit Salvager Thug #2"
    assert _tone(card) == "good"
    bystander = _card(client_for(fight.bystander), fight)
    assert _headline(bystander) == "Ysolde Varr's precise strike hit Salvager Thug #2"
    assert _tone(bystander) == "neutral"

    services.declare_attack(
        encounter=fight.encounter,
        attacker=fight.ysolde,
        target=fight.visible,
        action="fast",
        zone=fight.zone(fight.visible, "head"),
        weapon=fight.weapon(fight.ysolde),
        actor=fight.table.gm,
    )
    decl = fight.encounter.declarations.get(status="pending")
    services.declare_defense(declaration=decl, defense="parry", actor=fight.table.gm)
    services.resolve(declaration=decl, roll=5, actor=fight.table.gm)
    card = _card(client_for(fight.table.player), fight)
    assert _headline(card) == "Your fast strike missed: Salvager Thug #2 parried"
    assert _tone(card) == "bad"
    gm = _card(client_for(fight.table.gm), fight)
    assert _tone(gm) == "neutral"


def test_it_tells_a_hit_on_the_reader_as_bad_news_without_a_hidden_attackers_numbers(
    table_of_four, client_for
):
    fight = table_of_four
    # The hidden thug's precise strike (75 vs Ysolde's dodge DIF 25), rolled 43: a hit.
    _strike(fight, fight.thug, fight.ysolde, "dodge", 43, fight.table.gm)
    defender = _card(client_for(fight.table.player), fight)
    assert _headline(defender) == "Hit you: Salvager Thug #1's precise strike struck Ysolde Varr"
    assert _tone(defender) == "bad"
    bystander = _card(client_for(fight.bystander), fight)
    assert _headline(bystander) == "Salvager Thug #1's precise strike hit Ysolde Varr"
    for card in (defender, bystander):
        assert "75v25" not in card and "Hatchet" not in card and "rolled 43" not in card
    assert "75v25" in _card(client_for(fight.table.gm), fight)


def test_it_keeps_a_hidden_defenders_numbers_out_of_the_attackers_wording(
    table_of_four, client_for
):
    fight = table_of_four
    chest = fight.zone(fight.thug, "chest")
    _strike(fight, fight.ysolde, fight.thug, "parry", 43, fight.table.player)
    wounds = chest.__class__.objects.get(pk=chest.pk).wounds
    attacker = _card(client_for(fight.table.player), fight)
    assert _headline(attacker) == "Your precise strike hit Salvager Thug #1"
    assert _tone(attacker) == "good"
    bystander = _card(client_for(fight.bystander), fight)
    assert _headline(bystander) == "Ysolde Varr's precise strike hit Salvager Thug #1"
    for card in (attacker, bystander):
        assert f"→ {wounds}" not in card and "chest: wounds" not in card


def test_the_live_feed_gives_each_player_in_the_roll_their_own_headline(table_of_four):
    fight = table_of_four
    gm, player, bystander = fight.table.gm, fight.table.player, fight.bystander
    _strike(fight, fight.visible, fight.ysolde, "dodge", 5, gm)
    tracker = LiveTracker(fight.encounter)
    shared = tracker.panels(bystander)["tracker"]
    assert tracker.panels(player)["tracker"] is shared  # one render for the players
    cards = _cards(shared)
    assert len(cards) == 2
    neutral, own = cards
    assert f'data-not-owner="{player.pk}"' in neutral
    assert _headline(neutral).startswith("Salvager Thug #2's precise strike missed")
    assert f'data-owner="{player.pk}" hidden' in own
    assert _headline(own) == "Missed you: Ysolde Varr dodged" and _tone(own) == "good"
    (gm_card,) = _cards(tracker.panels(gm)["tracker"])
    assert _tone(gm_card) == "neutral"


def test_the_live_feed_keeps_a_hidden_npcs_numbers_out_of_every_headline(table_of_four):
    fight = table_of_four
    gm, player, bystander = fight.table.gm, fight.table.player, fight.bystander
    before = broadcast.latest_entry_id(fight.encounter)
    _strike(fight, fight.thug, fight.ysolde, "dodge", 43, gm)
    subscribers = [
        broadcast.Subscriber(u, before, None, greeted=True) for u in (gm, player, bystander)
    ]
    out = broadcast.fan_out(fight.encounter, subscribers)
    texts = {s.user.pk: html.unescape("".join(out[s])) for s in subscribers}
    # The player in a roll against a hidden NPC has a render of their own.
    (own,) = _cards(texts[player.pk])
    assert _headline(own) == "Hit you: Salvager Thug #1's precise strike struck Ysolde Varr"
    for reader in (player, bystander):
        for card in _cards(texts[reader.pk]):
            assert "75v25" not in card and "Hatchet" not in card and "rolled 43" not in card
    assert any("75v25" in card for card in _cards(texts[gm.pk]))


def test_a_stamina_test_shows_its_own_card(fight, client_for):
    Participant.objects.filter(pk=fight.ysolde.pk).update(stamina_due=True)
    fight.refresh()
    services.stamina_check(participant=fight.ysolde, roll=43, actor=fight.table.player)
    card = _card(client_for(fight.table.player), fight)
    assert _headline(card) == "Stamina test: Ysolde Varr stays conscious"
    assert _tone(card) == "good"
    assert _tone(_card(client_for(fight.table.gm), fight)) == "neutral"
