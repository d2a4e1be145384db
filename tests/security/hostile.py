"""What the hostile-input sweeps send, and where they find the fields to send it in: the forms a
page draws, and the names a view reads from ``request.POST`` and ``request.GET`` (in its own
body and in the helpers it hands the query dict to)."""

from __future__ import annotations

import inspect
import json
import re
import textwrap
from collections.abc import Callable
from html.parser import HTMLParser
from types import ModuleType
from typing import Any

from django.core.cache import cache
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.test import APIClient

from tests.openapi import openapi_schema
from tests.security.pages import DemoTable, api_ids, demo_table, snapshot

#: One value of each hostile kind. '²' is a digit to ``str.isdigit()`` that ``int()`` refuses;
#: Arabic-Indic and full-width sevens are digits ``int()`` reads (as 77); 5,000 digits are past
#: the 4,300 that ``int()`` reads from text; PostgreSQL cannot store a NUL; 40 kB on one line is
#: past every field's limit and the size a careless regex or a log line chokes on.
NUL_TEXT = "Ford\x00ing"
LONG_NUMBER = "9" * 5000
HOSTILE = {
    "superscript": "\u00b2",
    "other_digits": "\u0667\uff17",
    "long_number": LONG_NUMBER,
    "nul": NUL_TEXT,
    "long_line": "A" * 40_000,
}


class Forms(HTMLParser):
    """The forms of a page: their action and method, and their fields with the values they
    hold (the other fields of a request keep these)."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict[str, Any]] = []
        self._form: dict[str, Any] | None = None
        self._select: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self._form = {"action": a.get("action", ""), "data": {}, "fields": [], "button": None}
            self._form["post"] = a.get("method", "").lower() == "post"
            self.forms.append(self._form)
        # A GET form may post through a button of its own (the check page's Roll).
        if self._form is not None and a.get("formmethod", "").lower() == "post":
            self._form["post"] = True
            self._form["action"] = a.get("formaction") or self._form["action"]
        if self._form is None or not a.get("name"):
            return
        name, data = a["name"], self._form["data"]
        kind = a.get("type", "").lower()
        if tag == "input" and kind in ("checkbox", "radio"):
            if "checked" in a:
                data.setdefault(name, a.get("value", "on"))
            self._form["fields"].append(name)
        elif tag == "input" and kind == "submit" or tag == "button":
            self._form["button"] = self._form["button"] or (name, a.get("value", ""))
        elif tag == "input" and kind != "file":
            data.setdefault(name, a.get("value", ""))
            if kind != "hidden" or name != "csrfmiddlewaretoken":
                self._form["fields"].append(name)
        elif tag == "textarea":
            data.setdefault(name, "")
            self._form["fields"].append(name)
        elif tag == "select":
            self._select = name
            self._form["fields"].append(name)
        elif tag == "option" and self._select and (self._select not in data or "selected" in a):
            data[self._select] = a.get("value", "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._form = None
        if tag == "select":
            self._select = None


def forms_of(page: str) -> list[dict[str, Any]]:
    parser = Forms()
    parser.feed(page)
    return parser.forms


def pattern_of(name: str) -> URLPattern:
    """The URL pattern of a route name (``namespace:name``)."""
    found: dict[str, URLPattern] = {}

    def walk(patterns: list[Any], namespace: str) -> None:
        for entry in patterns:
            if isinstance(entry, URLResolver):
                ns = entry.namespace or ""
                walk(
                    entry.url_patterns, f"{namespace}:{ns}" if namespace and ns else ns or namespace
                )
            elif isinstance(entry, URLPattern) and entry.name:
                found.setdefault(f"{namespace}:{entry.name}" if namespace else entry.name, entry)

    walk(get_resolver().url_patterns, "")
    return found[name]


def _names_read(source: str, holder: str) -> set[str]:
    """The keys read from ``holder`` (a regex for the query dict) in ``source``: ``.get("x")``,
    ``.getlist("x")``, ``["x"]``, or the name handed on beside it (``form_int(data, "x")``)."""
    return set(
        re.findall(rf'(?:{holder})(?:\.get(?:list)?\(|\[)\s*"([\w-]+)"', source)
        + re.findall(rf'\b(?:{holder}),\s*"([\w-]+)"', source)
    )


def view_fields(route_name: str, *, by_hand: bool = False) -> dict[str, set[str]]:
    """``{"POST": names, "GET": names}`` a page's view reads, from its code: its own body, the
    forms it builds from the query dict (their fields) and the functions it hands the query
    dict to (what they read from their first parameter). ``by_hand``: only the names read
    one by one, not a form's. Django's own views are left to the forms their pages draw."""
    view: Callable[..., Any] = inspect.unwrap(pattern_of(route_name).callback)
    view = getattr(view, "view_class", view)
    module = inspect.getmodule(view)
    if module is None or module.__name__.startswith("django."):
        return {"POST": set(), "GET": set()}
    source = textwrap.dedent(inspect.getsource(view))
    fields: dict[str, set[str]] = {}
    for method in ("POST", "GET"):
        holder = rf"request\.{method}"
        names = _names_read(source, holder)
        # A callee handed the query dict: ``Form(request.POST)``, ``parse(request.GET)``.
        for callee in re.findall(rf"([\w.]+)\(\s*(?:data=)?{holder}\b", source):
            target = _resolve(module, callee)
            if isinstance(target, type) and hasattr(target, "base_fields"):
                names |= set() if by_hand else set(target.base_fields)
            elif inspect.isfunction(target):
                parameters = list(inspect.signature(target).parameters)
                if parameters:
                    helper = textwrap.dedent(inspect.getsource(target))
                    names |= _names_read(helper, re.escape(parameters[0]))
        fields[method] = names - {"csrfmiddlewaretoken"}
    return fields


def _resolve(module: ModuleType, dotted: str) -> Any:
    target: Any = module
    for part in dotted.split("."):
        target = getattr(target, part, None)
        if target is None:
            return None
    return target


def stored_nul() -> list[str]:
    """Every stored value (text, or text inside JSON) that holds a NUL character."""
    found = []
    for label, table in snapshot().items():
        for row in table:
            if "\\u0000" in json.dumps(row, default=str) or any(
                isinstance(v, str) and "\x00" in v for v in row
            ):
                found.append(f"{label}: {row!r:.120}")
    return found


def resolve_schema(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


def body_fields(schema: dict[str, Any], operation: dict[str, Any]) -> list[str]:
    """The top-level keys an operation's JSON body takes (what a GET answers aside)."""
    content = operation.get("requestBody", {}).get("content", {}).get("application/json")
    if not content:
        return []
    node = resolve_schema(schema, content["schema"])
    return [
        name
        for name, prop in node.get("properties", {}).items()
        if not resolve_schema(schema, prop).get("readOnly")
    ]


def gm_api_sweep(settings: Any) -> tuple[DemoTable, dict[str, Any], APIClient, dict[str, Any]]:
    """What a sweep of the whole API as the demo's GM starts from: the rules API's throttles
    lifted (a sweep sends thousands of requests), the demo table, the ids its paths take, the
    GM's client and the served schema."""
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "rules_anon": "100000/min",
            "rules_user": "100000/min",
        },
    }
    cache.clear()
    demo = demo_table()
    api = APIClient(raise_request_exception=False)
    api.force_authenticate(demo.gm)
    return demo, api_ids(demo), api, openapi_schema()
