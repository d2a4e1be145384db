"""Hostile input in every field of every route: '²' and other scripts' digits, 5,000 digits, a
NUL character and a 40 kB line (tests/security/hostile.py): one request per kind for the
fields a form cleans together, one per field and kind for what a view reads by hand.
The routes come from the URLconf and the operations from the served schema, the fields from
the forms the pages draw, the names the views read and the parameters and bodies the schema
documents; a page route where none are found must be named below, so a new one is not left
out unseen. Whatever the answer (a form error, a 400, a redirect with a message), it is never
a server error, and nothing is stored with a NUL character."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import Resolver404, resolve

from tests.security.hostile import (
    HOSTILE,
    LONG_NUMBER,
    body_fields,
    forms_of,
    gm_api_sweep,
    stored_nul,
    view_fields,
)
from tests.security.pages import demo_table, fill, get_pages, routes

pytestmark = pytest.mark.django_db

#: Page routes that take nothing but the ids in their path (test_hostile_ids.py sends those
#: hostile ids): no page draws a form to them and their view reads no field. A route that
#: gains a field leaves this list (the test says so), one without any is added with a reason.
TAKE_NO_INPUT = {
    # Downloads and read-only pages (their forms post to routes of their own).
    "sheets:character_detail",
    "checks:call_detail",
    "checks:campaign_checks",
    "checks:check_detail",
    "checks:prompts",
    "account_export",
    "combat:record_json",
    "combat:record_markdown",
    "prep:npc_export",
    "prep:library",
    "prep:prepared_matchups",
    "sheets:character_export",
    "sheets:character_print",
    "sheets:campaign_detail",
    "sheets:dashboard",
    "sheets:home",
    "healthz",
    "dice:index",
    "dice:campaign_index",
    "display:page",
    # One button, nothing typed: the action is the path.
    "combat:attack_cancel",
    "combat:encounter_start",
    "prep:starter_set",
    "sheets:campaign_leave",
    "checks:check_reveal",
    "sheets:handover_accept",
    "sheets:handover_decline",
    # Django's own pages after a form (their forms are swept where they are drawn); the
    # reset link's page is reached from a mailed link, with a token in its path.
    "password_change_done",
    "password_reset_complete",
    "password_reset_confirm",
    "password_reset_done",
}

#: Requests that would end the sweep's session or table (their own tests send them hostile
#: input), and streams that answer as long as the fight lasts (test_hostile_ids.py sends
#: their ``after`` and Last-Event-ID hostile values).
NOT_SENT = {
    "logout": "ends the session",
    "sheets:account_delete": "ends the account",
    "sheets:sessions_end": "ends the session",
    "live:encounter_events": "a stream",
    "live:campaign_events": "a stream",
    "display:events": "a stream",
}


#: Parameters one piece of code reads for every operation that takes them: the paginator's
#: ``limit`` and ``offset`` (config/pagination.py), the idempotency middleware's header. Each is
#: swept on the first operation that documents it (test_hostile_paging.py sends a hostile
#: ``limit`` and ``offset`` to every list).
SHARED_QUERY = {"limit", "offset"}


def _page_plan(demo: Any) -> dict[tuple[str, str], dict[str, Any]]:
    """``(method, route) -> {url, data, fields}``: the forms the GM's pages draw, then the
    names each view reads that no form drew."""
    pages = {r.name: r for r in routes() if not r.is_api}
    plan: dict[tuple[str, str], dict[str, Any]] = {}
    for url, response in get_pages(demo):
        if response.status_code != 200 or "text/html" not in response["Content-Type"]:
            continue
        for form in forms_of(response.content.decode()):
            action = urlsplit(form["action"] or url.split(" ")[0]).path
            try:
                name = resolve(action).view_name
            except Resolver404:
                continue
            if name not in pages:
                continue
            data = dict(form["data"])
            if form["button"]:
                data.setdefault(*form["button"])
            entry = plan.setdefault(
                ("POST" if form["post"] else "GET", name),
                {"url": action, "data": data, "fields": set()},
            )
            entry["fields"] |= set(form["fields"]) - {"csrfmiddlewaretoken"}
    for name, route in pages.items():
        by_hand = view_fields(name, by_hand=True)
        for method, names in view_fields(name).items():
            if names:
                entry = plan.setdefault(
                    (method, name), {"url": demo.url(route), "data": {}, "fields": set()}
                )
                entry["fields"] |= names
        for (method, planned), entry in plan.items():
            if planned == name:
                entry["by_hand"] = by_hand[method] & entry["fields"]
    return plan


def test_every_field_of_every_page_takes_hostile_input_without_a_server_error():
    cache.clear()
    demo = demo_table()
    client = Client(raise_request_exception=False)
    client.force_login(demo.gm)
    plan = _page_plan(demo)
    sent, wrong = 0, []
    for (method, name), entry in sorted(plan.items()):
        if name in NOT_SENT:
            continue
        send = client.post if method == "POST" else client.get
        by_hand = entry.get("by_hand", set())
        # A form's fields all at once, one request per kind: a Django form cleans each of its
        # fields whatever the others hold. What the view reads by hand keeps the value the page
        # drew (so the form is reached), and gets a request per field and kind of its own.
        formed = sorted(entry["fields"] - by_hand)
        requests = [(formed, kind, value) for kind, value in HOSTILE.items() if formed]
        requests += [([f], kind, value) for f in sorted(by_hand) for kind, value in HOSTILE.items()]
        for fields, kind, value in requests:
            answer = send(entry["url"], {**entry["data"], **dict.fromkeys(fields, value)})
            sent += 1
            if answer.status_code >= 500:
                wrong.append(f"{method} {name} {fields}={kind}: {answer.status_code}")
    assert wrong == []
    assert stored_nul() == []
    # A route a form posts to with nothing but its button takes no field either.
    reached = {name for _, name in plan}
    swept = {name for (_, name), entry in plan.items() if entry["fields"]}
    pages = {r.name for r in routes() if not r.is_api} - set(NOT_SENT)
    print(f"{sent} requests, {len(swept)} routes swept")
    unreached = sorted(pages - reached - TAKE_NO_INPUT)
    assert unreached == [], f"page routes that no field reached: {unreached}"
    assert sorted(TAKE_NO_INPUT & swept) == [], "routes that take input now: sweep them"
    assert sent > 300


def test_every_field_of_every_operation_takes_hostile_input_without_a_server_error(settings):
    """Every query parameter and top-level body key of every operation of the served schema,
    and each header; a body key also gets 5,000 digits as a bare JSON number (past what
    ``json.loads`` reads into an int)."""
    demo, ids, api, schema = gm_api_sweep(settings)
    sent, wrong, swept, operations = 0, [], set(), set()
    seen: set[tuple[str, str]] = set()
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            operations.add((method, path))
            url = fill(path, ids)
            send = getattr(api, method)
            requests: list[tuple[str, dict[str, Any]]] = []
            for parameter in operation.get("parameters", []):
                where, name = parameter["in"], parameter["name"]
                if where == "path" or (where, name) in seen:
                    continue
                if where != "query" or name in SHARED_QUERY:
                    seen.add((where, name))
                for kind, value in HOSTILE.items():
                    if where == "query":
                        requests.append((f"?{name}={kind}", {"data": {name: value}}))
                    else:
                        requests.append((f"{name}: {kind}", {"headers": {name: value}}))
            # Every key at once, one request per kind: a serializer reads each of its fields
            # whatever the others hold, and names each one at fault.
            names = body_fields(schema, operation)
            if names:
                for kind, value in HOSTILE.items():
                    body = json.dumps(dict.fromkeys(names, value))
                    requests.append((f"{names}={kind}", {"data": body}))
                # No int() holds 5,000 digits: json.dumps cannot write them, so by hand.
                body = "{%s}" % ", ".join(f'"{name}": {LONG_NUMBER}' for name in names)  # noqa: UP031
                requests.append((f"{names}=long_json_number", {"data": body}))
            for what, request in requests:
                if method != "get":
                    request = {"content_type": "application/json", "data": "{}", **request}
                response = send(url, **request)
                sent += 1
                if response.status_code >= 500:
                    wrong.append(f"{method.upper()} {path} {what}: {response.status_code}")
            if requests:
                swept.add((method, path))
    print(f"{sent} requests, {len(swept)} operations swept")
    assert wrong == []
    assert stored_nul() == []
    # What no request reached takes nothing but its path (test_hostile_ids.py sends those).
    # or a header swept on another operation.
    path_only = {
        (method, path)
        for method, path in operations - swept
        if all(
            p["in"] == "path" or (p["in"], p["name"]) in seen
            for p in schema["paths"][path][method].get("parameters", [])
        )
        and not body_fields(schema, schema["paths"][path][method])
    }
    assert sorted(operations - swept - path_only) == []
    assert len(swept) > 80
    assert sent > 500
