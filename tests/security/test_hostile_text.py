"""Text that users type is shown as text: HTML and script in names, notes, descriptions and the
combat log come back escaped on every page, and as plain JSON strings from the API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from checks.models import Check, CheckCall
from sheets.models import ApiToken, BodyZone
from tests.security.hostile import gm_api_sweep, stored_nul
from tests.security.pages import DemoTable, demo_table, fill, get_pages

pytestmark = pytest.mark.django_db

SCRIPT = "<script>alert('pwned')</script>"
IMG = '<img src=x onerror="alert(1)">'
ATTR = '" autofocus onfocus="alert(2)'
HOSTILE = f"{SCRIPT}{IMG}{ATTR}"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def hostile_table() -> DemoTable:
    cache.clear()
    demo = demo_table()
    demo.campaign.name = f"Keep {HOSTILE}"
    demo.campaign.description = f"Beware {HOSTILE}"
    demo.campaign.save()
    character = demo.character
    for field in ("name", "occupation", "appearance", "notes", "backstory", "equipment"):
        setattr(character, field, f"{field} {HOSTILE}"[:120])
    character.save()
    for i, discipline in enumerate(character.disciplines.all()):
        discipline.name = f"Blade {i} {SCRIPT}"
        discipline.save()
    character.weapons.update(name=f"Sword {IMG}")
    BodyZone.objects.filter(character=character).update(grievous=f"Ouch {HOSTILE}")
    demo.encounter.name = f"Fight {SCRIPT}"
    demo.encounter.save()
    ApiToken.objects.filter(user=demo.gm).update(name=f"Bot {IMG}")
    # The checks outside combat: a roll's note and a call's note and discipline.
    Check.objects.filter(pk=demo.ids["check"]).update(note=f"{SCRIPT}{IMG}"[:80])
    CheckCall.objects.filter(pk=demo.ids["call"]).update(
        note=f"{IMG}{SCRIPT}"[:80], discipline=f"Sneak {SCRIPT}"
    )
    return demo


def assert_escaped(page: str, where: str) -> None:
    for raw in (SCRIPT, IMG, "<script>alert", "<img src=x", 'onfocus="alert'):
        assert raw not in page, (where, raw)


def test_it_escapes_hostile_text_on_every_page(hostile_table):
    shown = 0
    for url, response in get_pages(hostile_table):
        if "text/html" not in response.get("Content-Type", ""):
            continue
        page = response.content.decode()
        assert_escaped(page, url)
        shown += "&lt;script&gt;alert(" in page
    # The campaign, dashboard, sheet, print, encounter and token pages show the text, and the
    # checks' result card, log and call.
    assert shown >= 9


def test_it_escapes_hostile_text_in_htmx_partials(hostile_table):
    client = Client()
    client.force_login(hostile_table.gm)
    character = hostile_table.character
    zone = character.zones.first()
    response = client.post(
        f"/characters/{character.pk}/zones/{zone.pk}/wound/",
        {"delta": "1"},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    assert_escaped(response.content.decode(), "wound partial")
    response = client.post(
        f"/characters/{character.pk}/edit/",
        {"field": "notes", "value": SCRIPT, "original": character.notes},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    assert_escaped(response.content.decode(), "field partial")
    assert "&lt;script&gt;" in response.content.decode()


def test_it_returns_hostile_text_as_plain_json_strings(hostile_table):
    _, key = ApiToken.objects.create_token(user=hostile_table.gm, name="json")
    api = Client(HTTP_AUTHORIZATION=f"Token {key}")
    character = hostile_table.character
    for url in (
        f"/api/campaigns/{hostile_table.campaign.pk}/",
        f"/api/characters/{character.pk}/",
        f"/api/checks/{hostile_table.ids['check']}/",
        f"/api/check-calls/{hostile_table.ids['call']}/",
        f"/characters/{character.pk}/export/",
    ):
        response = api.get(url) if url.startswith("/api/") else _gm(hostile_table).get(url)
        assert response.status_code == 200, url
        assert response["Content-Type"].startswith("application/json"), url
        assert response["X-Content-Type-Options"] == "nosniff"
        data = json.loads(response.content)
        assert HOSTILE in json.dumps(data, ensure_ascii=False) or SCRIPT in json.dumps(
            data, ensure_ascii=False
        ), url
    export = _gm(hostile_table).get(f"/characters/{character.pk}/export/")
    assert export["Content-Disposition"].startswith("attachment;")


def test_it_stores_hostile_text_as_typed(hostile_table):
    hostile_table.campaign.refresh_from_db()
    assert hostile_table.campaign.description == f"Beware {HOSTILE}"


# The one place that joins already-escaped template output around a CSRF token (letters and
# digits, checked there); test_a_stored_sheet_body_stays_escaped covers it.
JOINS_ESCAPED_OUTPUT = {"sheets/fragments.py: mark_safe("}


def test_it_never_marks_text_safe_in_templates_or_code():
    """Escaping is Django's default; nothing in the project switches it off."""
    offenders = []
    for folder in ("templates", "sheets", "combat", "config"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix not in (".html", ".py") or not path.is_file():
                continue
            text = path.read_text()
            for needle in ("|safe", "autoescape off", "mark_safe(", "SafeString("):
                if needle in text:
                    offenders.append(f"{path.relative_to(ROOT)}: {needle}")
    assert set(offenders) == JOINS_ESCAPED_OUTPUT
    assert (ROOT / "sheets/fragments.py").read_text().count("mark_safe(") == 1


def test_a_stored_sheet_body_stays_escaped(hostile_table):
    """The sheet's body is drawn once and reused: the reused copy is as escaped as the first,
    and each viewer gets their own token in it."""
    url = f"/characters/{hostile_table.character.pk}/"
    pages = []
    for user in (hostile_table.gm, hostile_table.gm, hostile_table.alice):
        client = Client()
        client.force_login(user)
        response = client.get(url)
        assert response.status_code == 200
        page = response.content.decode()
        assert_escaped(page, url)
        assert "&lt;script&gt;alert(" in page
        pages.append(page)
    tokens = [p.split('name="csrfmiddlewaretoken" value="')[1].split('"')[0] for p in pages]
    assert len(set(tokens)) == 3 and all(t.isalnum() for t in tokens)


def test_a_token_that_is_not_letters_and_digits_is_refused(hostile_table):
    from sheets import fragments

    character = hostile_table.character
    with pytest.raises(ValueError):
        fragments.sheet_body(
            "sheets/character_sheet.html#sheet-body",
            character,
            can_edit=True,
            is_gm=True,
            reserve_pending=None,
            token='"><script>',
            context=dict,
        )


def _gm(table: DemoTable) -> Client:
    client = Client()
    client.force_login(table.gm)
    return client


# --- A NUL character in every text field of the API -------------------------------------------

NUL_TEXT = "Ford\x00ing"
# Keys a write takes but ignores, so a 400 about other fields does not name them: an existing
# sheet's pending raises are bought with Fate (buy-raise), never written (sheets/api).
IGNORED_KEYS = {("put", "/api/characters/{id}/", "pending_raises")}


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


def _text_fields(schema: dict[str, Any], body: dict[str, Any]) -> list[str]:
    """The top-level properties of a request body that take a string (alone or among other
    types: ``against`` takes a number or a name)."""
    node = _resolve(schema, body)
    names = []
    for name, prop in node.get("properties", {}).items():
        prop = _resolve(schema, prop)
        options = [_resolve(schema, p) for p in prop.get("oneOf", prop.get("anyOf", [prop]))]
        if prop.get("readOnly"):
            continue
        if any(o.get("type") == "string" or "string" in (o.get("type") or []) for o in options):
            names.append(name)
    return names


def test_every_text_field_of_the_api_refuses_a_nul_character(settings):
    """Derived from the schema: each string a write takes, in turn, holds a NUL character
    (which PostgreSQL cannot store and SQLite would). Each is a 400 naming that field, or the
    key is one the write ignores (a read-only part sent back); nothing is ever stored."""
    demo, ids, api, schema = gm_api_sweep(settings)
    wrong, sent = [], 0
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if method not in ("post", "put", "patch") or "requestBody" not in operation:
                continue
            body = operation["requestBody"]["content"]["application/json"]["schema"]
            for field in _text_fields(schema, body):
                sent += 1
                url = fill(path, ids)
                response = getattr(api, method)(url, {field: NUL_TEXT}, format="json")
                answer = response.json() if response.status_code == 400 else None
                named = isinstance(answer, dict) and field in answer
                ignored = (method, path, field) in IGNORED_KEYS and response.status_code < 500
                if not (named or ignored) and (response.status_code >= 300 or stored_nul()):
                    wrong.append(
                        f"{method.upper()} {path} {field}: {response.status_code} "
                        f"{response.content[:150]!r}"
                    )
    assert wrong == []
    assert sent > 60
    assert stored_nul() == []
