"""Download my data: everything an account owns in one JSON file, valid against its schema,
and importable again where an import exists."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from django.test import Client
from django.urls import reverse

from config.export import SCHEMA
from integrations.models import WebhookEndpoint
from prep import services as prep
from prep.models import LibraryNpc
from sheets.models import ApiToken, Character
from tests.factories import a_fight, make_campaign, make_user, make_ysolde

pytestmark = pytest.mark.django_db


@pytest.fixture
def busy() -> Any:
    """``gm`` runs two campaigns, with fights, NPCs, players' sheets and a webhook; plays in a
    third; has a library, an API token and a confirmed address."""
    gm = make_user("gm", email="gm@example.org")
    ann, bob = make_user("ann"), make_user("bob")
    keep = make_campaign(gm, players=(ann, bob), name="The Sunken Keep")
    a_fight(keep, gm, make_ysolde(keep, ann))
    a_fight(keep, gm, make_ysolde(keep, bob, name="Bram"))
    marsh = make_campaign(gm, players=(ann,), name="The Marsh")
    a_fight(marsh, gm, make_ysolde(marsh, ann, name="Wren"))
    elsewhere = make_campaign(make_user("other_gm"), players=(gm,), name="Elsewhere")
    guest = make_ysolde(elsewhere, gm, name="Guest Star")
    hook = WebhookEndpoint.objects.create(
        campaign=keep, url="http://127.0.0.1:9/hook", events=["roll.resolved"]
    )
    prep.add_starter_set(owner=gm)
    _, key = ApiToken.objects.create_token(user=gm, name="bot")
    client = Client()
    client.force_login(gm)
    return {"gm": gm, "client": client, "guest": guest, "hook": hook, "key": key}


def export(client: Client) -> tuple[Any, dict[str, Any]]:
    response = client.get(reverse("account_export"))
    assert response.status_code == 200
    return response, json.loads(response.content)


def test_it_exports_a_busy_account_valid_against_its_schema(busy):
    response, data = export(busy["client"])
    assert response["Content-Disposition"] == 'attachment; filename="omg-table-gm.json"'
    jsonschema.Draft202012Validator(
        SCHEMA, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    ).validate(data)
    assert data["profile"]["username"] == "gm"
    assert data["profile"]["email"] == "gm@example.org"
    assert [c["name"] for c in data["characters"]] == ["Guest Star"]
    assert [c["name"] for c in data["campaigns_played"]] == ["Elsewhere"]
    run = {c["name"]: c for c in data["campaigns_run"]}
    assert sorted(run) == ["The Marsh", "The Sunken Keep"]
    keep = run["The Sunken Keep"]
    assert {c["name"] for c in keep["characters"]} >= {"Ysolde Varr", "Bram"}
    assert len(keep["fights"]) == 2
    assert all(f["log"] for f in keep["fights"])
    assert [h["url"] for h in keep["webhooks"]] == ["http://127.0.0.1:9/hook"]
    assert len(data["library"]) == LibraryNpc.objects.filter(owner=busy["gm"]).count() > 0
    assert [t["name"] for t in data["api_tokens"]] == ["bot"]


def test_it_carries_no_secret(busy):
    response, _ = export(busy["client"])
    text = response.content.decode()
    assert busy["hook"].secret not in text
    assert "whsec_" not in text
    assert busy["key"] not in text
    assert busy["gm"].password not in text


def test_the_schema_refuses_a_webhook_secret(busy):
    _, data = export(busy["client"])
    data["campaigns_run"][0]["webhooks"] = [{"url": "http://x", "events": [], "secret": "s"}]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, SCHEMA)


def test_its_character_imports_again_into_a_campaign(busy):
    _, data = export(busy["client"])
    (guest,) = data["characters"]
    target = make_campaign(busy["gm"], name="New home")
    response = busy["client"].post(
        reverse("sheets:character_import", args=[target.pk]), {"text": json.dumps(guest)}
    )
    assert response.status_code == 302, response.content[:500]
    copy = Character.objects.get(campaign=target, name="Guest Star")
    original = busy["guest"]
    assert [(d.name, d.level) for d in copy.disciplines.all()] == [
        (d.name, d.level) for d in original.disciplines.all()
    ]
    assert [w.name for w in copy.weapons.all()] == [w.name for w in original.weapons.all()]


def test_its_library_imports_again(busy):
    _, data = export(busy["client"])
    npc = data["library"][0]
    other = make_user("newcomer")
    client = Client()
    client.force_login(other)
    response = client.post(reverse("prep:npc_import"), {"text": json.dumps(npc)})
    assert response.status_code == 302
    assert LibraryNpc.objects.get(owner=other).name == npc["name"]


def test_a_player_gets_their_own_things_only(busy):
    ann = Client()
    ann.force_login(
        busy["gm"].campaigns_run.get(name="The Sunken Keep").players.get(username="ann")
    )
    _, data = export(ann)
    jsonschema.validate(data, SCHEMA)
    assert data["campaigns_run"] == []
    assert data["library"] == []
    assert sorted(c["name"] for c in data["characters"]) == ["Wren", "Ysolde Varr"]
    assert "Bram" not in json.dumps(data)


def test_the_export_needs_a_login(client):
    response = client.get(reverse("account_export"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))
