"""The checks API: roll, call, answer, Fate, undo, reveal, Mana and Chi; per role; bad input
answered 400/403/404 with nothing stored; the check.resolved webhook, redacted when secret."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest
from rest_framework.test import APIClient

from checks.models import Check, CheckCall, ResourceChange
from integrations.models import WebhookDelivery, WebhookEndpoint
from sheets import randomness

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def seeded(monkeypatch):
    monkeypatch.setattr(randomness, "RNG", random.Random(7))


def api(user):
    client = APIClient()
    client.default_format = "json"  # the API reads JSON bodies only
    if user is not None:
        client.force_authenticate(user)
    return client


def roll_url(character):
    return f"/api/characters/{character.pk}/checks/"


LOCK = {"kind": "discipline", "discipline": "Lock-picking", "against": "Ambitious"}


def test_it_rolls_a_check_with_table_dice(table):
    response = api(table.owner).post(roll_url(table.ysolde), {**LOCK, "roll": 85}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["pro"], body["dif"], body["roll"], body["degree"]) == (85, 30, 85, "epic_success")
    assert (body["exp"], body["exp_on"], body["fate"], body["physical"]) == (
        1,
        "discipline",
        1,
        True,
    )


def test_it_rolls_server_dice_with_the_servers_generator(table):
    body = api(table.owner).post(roll_url(table.ysolde), LOCK, format="json").json()
    assert body["roll"] == random.Random(7).randint(1, 100)
    assert body["physical"] is False


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({**LOCK, "roll": 0}, "roll"),
        ({**LOCK, "roll": 101}, "roll"),
        ({**LOCK, "roll": "50"}, "roll"),
        ({**LOCK, "against": 51}, "against"),
        ({**LOCK, "against": 4}, "against"),
        ({**LOCK, "against": True}, "against"),
        ({**LOCK, "discipline": "Basket Weaving"}, "discipline"),
        ({**LOCK, "kind": "spell"}, "kind"),
        ({**LOCK, "aptitude": "LCK"}, "aptitude"),
        ({**LOCK, "speed": 3}, "speed"),
        ({"kind": "save", "composite": "STM", "against": 40}, "against"),
    ],
)
def test_it_refuses_bad_input_naming_the_field_and_stores_nothing(table, data, field):
    response = api(table.owner).post(roll_url(table.ysolde), data, format="json")
    assert response.status_code == 400
    assert field in response.json()
    assert not Check.objects.exists()


@pytest.mark.parametrize(
    ("who", "status"), [("outsider", 404), ("player", 403), ("owner", 201), ("gm", 201)]
)
def test_players_roll_only_for_their_own_characters(table, who, status):
    response = api(getattr(table, who)).post(
        roll_url(table.ysolde), {**LOCK, "roll": 50}, format="json"
    )
    assert response.status_code == status
    assert Check.objects.count() == (1 if status == 201 else 0)
    assert api(None).post(roll_url(table.ysolde), LOCK, format="json").status_code in (401, 403)


def test_a_group_call_answered_and_summed_up(table):
    response = api(table.gm).post(
        "/api/check-calls/",
        {
            "campaign": table.campaign.pk,
            "everyone": True,
            "kind": "composite",
            "composite": "STM",
            "against": "Formidable",
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    call = response.json()
    assert len(call["requests"]) == 2
    pending = api(table.owner).get("/api/check-requests/").json()
    assert [p["odds"]["pro"] for p in pending] == [90]
    mine = pending[0]["id"]
    assert api(table.player).post(f"/api/check-requests/{mine}/answer/", {}).status_code == 403
    answered = api(table.owner).post(f"/api/check-requests/{mine}/answer/", {"roll": 90})
    assert answered.status_code == 201
    again = api(table.owner).post(f"/api/check-requests/{mine}/answer/", {"roll": 90})
    assert again.status_code == 409
    results = api(table.gm).get(f"/api/check-calls/{call['id']}/").json()
    degrees = {r["character"]["name"]: r["check"] for r in results["requests"]}
    assert degrees["Bram"] is None
    assert degrees["Ysolde Varr"]["degree"] == "epic_success"
    assert api(table.owner).get(f"/api/check-calls/{call['id']}/").status_code == 403


def test_only_the_gm_calls(table):
    body = {"campaign": table.campaign.pk, "characters": [table.bram.pk], **LOCK}
    assert api(table.owner).post("/api/check-calls/", body, format="json").status_code == 403
    assert api(table.outsider).post("/api/check-calls/", body, format="json").status_code == 404
    assert not CheckCall.objects.exists()


def test_fate_and_undo_through_the_api(table):
    first = api(table.owner).post(roll_url(table.ysolde), {**LOCK, "roll": 30}, format="json")
    check = first.json()["id"]
    refused = api(table.owner).post(
        f"/api/checks/{check}/fate/",
        {"action": "reroll", "spender": table.bram.pk, "roll": 85},
        format="json",
    )
    assert refused.status_code == 403
    response = api(table.owner).post(
        f"/api/checks/{check}/fate/",
        {"action": "reroll", "spender": table.ysolde.pk, "roll": 85},
        format="json",
    )
    assert response.status_code == 200, response.content
    assert response.json()["reroll"]["degree"] == "epic_success"
    assert table.fresh(table.ysolde).fate == 2  # 2, -1 (EpF), undone, -1 spent, +1 (EpS)
    undo = f"/api/campaigns/{table.campaign.pk}/checks/undo/"
    assert api(table.owner).post(undo).status_code == 403
    assert api(table.gm).post(undo).status_code == 200
    assert table.fresh(table.ysolde).fate == 1  # back to after the first roll
    log = api(table.player).get(f"/api/campaigns/{table.campaign.pk}/checks/").json()
    assert [c["status"] for c in log] == ["undone", "active"]


def test_a_secret_check_reaches_no_player_through_the_api(table):
    made = api(table.gm).post(
        roll_url(table.ysolde), {**LOCK, "roll": 85, "secret": True}, format="json"
    )
    check = made.json()
    assert check["degree"] == "epic_success"
    for user in (table.owner, table.player):
        log = api(user).get(f"/api/campaigns/{table.campaign.pk}/checks/").json()
        assert all("roll" not in c and "degree" not in c for c in log)
    assert "roll" not in api(table.owner).get(f"/api/checks/{check['id']}/").json()
    assert api(table.player).get(f"/api/checks/{check['id']}/").status_code == 404
    assert api(table.owner).post(f"/api/checks/{check['id']}/reveal/").status_code == 403
    assert table.fresh(table.ysolde).fate == 2  # held until revealed
    api(table.gm).post(f"/api/checks/{check['id']}/reveal/")
    assert table.fresh(table.ysolde).fate == 3
    assert api(table.owner).get(f"/api/checks/{check['id']}/").json()["roll"] == 85


def test_the_webhook_carries_open_checks_and_redacts_secret_ones(
    table, django_capture_on_commit_callbacks
):
    WebhookEndpoint.objects.create(
        campaign=table.campaign, url="http://127.0.0.1:9/hook", events=["check.resolved"]
    )
    with django_capture_on_commit_callbacks(execute=True):
        api(table.owner).post(roll_url(table.ysolde), {**LOCK, "roll": 85}, format="json")
    with django_capture_on_commit_callbacks(execute=True):
        api(table.gm).post(
            roll_url(table.ysolde), {**LOCK, "roll": 44, "secret": True}, format="json"
        )
    open_one, secret = (d.payload for d in WebhookDelivery.objects.order_by("pk"))
    assert open_one["type"] == "check.resolved"
    assert open_one["data"]["result"]["degree"] == "epic_success"
    assert secret["data"]["secret"] is True
    text = json.dumps(secret)
    assert "result" not in secret["data"]
    assert "85v30" not in text and "success" not in text
    # The roll (44) in no value: ids, sequence numbers and timestamps may hold those digits.
    assert not [v for k, v in _leaves(secret) if k not in ("id", "seq") and _says_44(v)], secret


def _leaves(value: Any, key: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v, key)
    else:
        yield key, value


def _says_44(value: Any) -> bool:
    if isinstance(value, str):
        try:
            datetime.fromisoformat(value)
        except ValueError:
            return "44" in value
        return False
    return value == 44


def test_mana_and_chi_through_the_api(table):
    url = f"/api/characters/{table.ysolde.pk}/resources/"
    top = table.fresh(table.ysolde).chi
    response = api(table.owner).post(url, {"pool": "chi", "amount": -2, "cost": "CHI"})
    assert response.status_code == 201
    assert response.json()["after"] == top - 2
    assert api(table.owner).post(url, {"pool": "chi", "amount": 9}).status_code == 400
    assert api(table.player).post(url, {"pool": "chi", "amount": -1}).status_code == 403
    assert api(table.owner).post(url, {"pool": "gold", "amount": -1}).status_code == 400
    assert ResourceChange.objects.count() == 1


def test_a_hidden_npcs_checks_stay_the_gms(table, django_capture_on_commit_callbacks):
    from sheets.services import create_character

    WebhookEndpoint.objects.create(
        campaign=table.campaign, url="http://127.0.0.1:9/hook", events=["check.resolved"]
    )
    npc = create_character(campaign=table.campaign, owner=table.gm, name="Spy", is_npc=True)
    with django_capture_on_commit_callbacks(execute=True):
        api(table.gm).post(
            roll_url(npc), {"kind": "aptitude", "aptitude": "SKL", "against": 20}, format="json"
        )
    assert api(table.owner).get(f"/api/campaigns/{table.campaign.pk}/checks/").json() == []
    assert len(api(table.gm).get(f"/api/campaigns/{table.campaign.pk}/checks/").json()) == 1
    payload = WebhookDelivery.objects.get().payload
    assert payload["data"]["redacted"] is True and "result" not in payload["data"]
