"""The chat format: what players typed cannot ping a channel or form a link on Discord, Slack
or Mattermost, and every event reads as a sentence with a human title, never its raw key."""

from __future__ import annotations

import json
import random

import pytest

from integrations import payloads
from integrations.models import EVENT_TYPES, WebhookEndpoint
from sheets.services import create_character, daily_rest

pytestmark = [pytest.mark.django_db, pytest.mark.both_databases]

SNEAKY = "@everyone @here <!channel> <@&123> **Bram** [prize](http://evil.example) <http://x|y>"


@pytest.fixture
def chat(table, receiver) -> WebhookEndpoint:
    endpoint = WebhookEndpoint.objects.create(
        campaign=table.campaign, url=receiver.url, events=list(EVENT_TYPES), format="chat"
    )
    receiver.secret = endpoint.secret
    return endpoint


def test_it_neutralises_mentions_and_links_a_player_typed(
    table, chat, receiver, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        create_character(campaign=table.campaign, owner=table.player, name=SNEAKY[:60])
    [message] = receiver.events
    assert message["allowed_mentions"] == {"parse": []}  # Discord pings nobody
    discord = message["content"] + json.dumps(message["embeds"], ensure_ascii=False)
    for raw in ("@everyone", "@here", "<@&123>", "**Bram**", "[prize](http", "http://"):
        assert raw not in discord, raw
    slack = message["text"]
    for raw in ("<!channel>", "<@&123>", "<http://x|y>", "@everyone", "@here"):
        assert raw not in slack, raw
    assert "&lt;!channel&gt;" in slack  # shown as typed, not a mention
    shown = message["content"].replace("\\", "").replace("\u200b", "")
    assert shown.startswith(SNEAKY[:40])  # what Discord shows once its escapes are read


def test_a_daily_rest_reads_as_a_sentence_not_its_key(
    table, chat, receiver, django_capture_on_commit_callbacks
):
    bram = create_character(campaign=table.campaign, owner=table.player, name="Bram")
    with django_capture_on_commit_callbacks(execute=True):
        daily_rest(user=bram.owner, character=bram, rng=random.Random(3))
    rested = [m for m in receiver.events if "rest" in m["content"]]
    assert [m["content"] for m in rested] == ["Bram took a daily rest."]
    assert "character.rested" not in json.dumps(rested)
    assert rested[0]["embeds"][0]["title"].endswith(": Daily rest")


def event_of(event_type: str) -> dict:
    """The least each event carries: no log text, so its own sentence must be used."""
    data = {
        "campaign": {"id": 1, "name": "Keep"},
        "encounter": {"id": 2, "name": "Ambush", "round": 1},
        "character": {"id": 3, "name": "Bram"},
        "participant": "Bram",
        "target": "Thug",
        "turn_of": "Thug",
        "state": "out",
    }
    return payloads.envelope(event_type, data)


@pytest.mark.parametrize("event_type", sorted(EVENT_TYPES))
def test_every_event_type_has_a_title_and_a_sentence(event_type):
    """Walks every event an endpoint may ask for: a new event type without its own title and
    sentence fails here instead of showing its raw key in a channel."""
    message = payloads.chat_message(event_of(event_type))
    assert event_type not in json.dumps(message)
    assert message["embeds"][0]["title"] == f"Ambush: {payloads.CHAT_TITLES[event_type]}"
    assert message["content"].endswith(".") and len(message["content"].split()) >= 3
    assert message["text"] == message["content"].replace("\\", "")


def test_someone_going_down_says_so_not_the_roll_again():
    event = event_of("participant.down")
    event["data"]["text"] = "Ysolde mighty strike at Bram's chest, rolled 43."
    assert payloads.chat_message(event)["text"] == "Bram is out of the fight."
