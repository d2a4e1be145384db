"""Schema postprocessing (SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"]).

Views document their own successes and their own domain errors; the answers that come from the
framework around them are added here, once, to every operation they apply to:

* 401 / 403 / 404 on the authenticated endpoints (no credentials; may see but not change, or a
  missing CSRF token on a session write; not yours to see or not there);
* 400 on every write (a bad body, or a malformed ``Idempotency-Key``), and on every read with
  query parameters (``limit`` out of range, an id that is no number);
* the ``Idempotency-Key`` header with its 409 (first request still running) and 422 (key
  reused for another request) on every POST, PUT, PATCH and DELETE (config/idempotency.py);
* the JSON body of every 4xx answer (``ApiError``), also where a view documents only why.
"""

from __future__ import annotations

import copy
from typing import Any

from combat.api import shapes as combat_shapes
from config.idempotency import HEADER, MAX_KEY_LENGTH, REPLAYED_HEADER, TTL
from integrations import openapi as integrations_openapi
from prep import shapes as prep_shapes

UNSAFE = ("post", "put", "patch", "delete")
PUBLIC_PREFIX = "/api/rules/"

API_ERROR = {
    "type": "object",
    "description": "An error: `detail` says what went wrong; a 400 names each field at fault "
    "instead, each with a list of messages.",
    "properties": {"detail": {"type": "string"}},
    "additionalProperties": True,
}
_REF = {"$ref": "#/components/schemas/ApiError"}

IDEMPOTENCY_PARAMETER = {
    "name": HEADER,
    "in": "header",
    "required": False,
    # Printable ASCII, as config/idempotency.py checks it.
    "schema": {"type": "string", "pattern": f"^[ -~]{{1,{MAX_KEY_LENGTH}}}$"},
    "description": (
        "Any unique string (a UUID) naming this request, so that it can be retried safely. "
        "Sent again with the same method, path and body within "
        f"{int(TTL.total_seconds() // 3600)} hours, the first response comes back (with "
        f"`{REPLAYED_HEADER}: true`) and nothing happens twice; reused for a different "
        "request: 422; while the first request is still running: 409. Keys belong to the "
        "authenticated user; anonymous requests (the rules API) ignore them."
    ),
}

COMMON = {
    "400": "Bad input: each field at fault with its messages, or a malformed Idempotency-Key.",
    "400 query": "A query parameter that is not what it documents, named with its messages.",
    "401": "No credentials, or an invalid or revoked token.",
    "403": "You may see this but not change it (or a session write without its CSRF token).",
    "404": "No such object, or not one you may see.",
    "409": "A request with the same Idempotency-Key is still running; retry in a moment.",
    "422": "This Idempotency-Key was already used for a different request.",
}


def _add(responses: dict[str, Any], code: str, why: str | None = None) -> None:
    why = why or COMMON[code]
    if code in responses:
        existing = responses[code]
        if why not in existing.get("description", ""):
            existing["description"] = f"{existing.get('description', '')} Or: {why}"
        existing.setdefault("content", {"application/json": {"schema": _REF}})
        return
    responses[code] = {
        "description": why,
        "content": {"application/json": {"schema": _REF}},
    }


def document_common_responses(
    result: dict[str, Any], generator: Any, request: Any, public: bool
) -> dict[str, Any]:
    result.setdefault("components", {}).setdefault("schemas", {})["ApiError"] = API_ERROR
    for path, operations in result.get("paths", {}).items():
        authenticated = path.startswith("/api/") and not path.startswith(PUBLIC_PREFIX)
        for method, operation in operations.items():
            if method not in (*UNSAFE, "get", "head"):
                continue
            responses = operation.setdefault("responses", {})
            codes: list[str] = []
            if authenticated:
                codes.append("401")
                if method in UNSAFE:
                    codes.append("403")
                if "{" in path:
                    codes.append("404")
            if method in UNSAFE:
                codes += ["400", "409", "422"]
                params = operation.setdefault("parameters", [])
                if not any(p.get("name") == HEADER for p in params):
                    params.append(dict(IDEMPOTENCY_PARAMETER))
            elif any(p.get("in") == "query" for p in operation.get("parameters", [])):
                _add(responses, "400", COMMON["400 query"])
            for code in codes:
                _add(responses, code)
            for code, response in responses.items():
                if code.startswith("4"):
                    response.setdefault("content", {"application/json": {"schema": _REF}})
            operation["responses"] = dict(sorted(responses.items()))
    return result


BLANK_STRING = {"type": "string", "maxLength": 0}


def blank_strings_as_any_of(
    result: dict[str, Any], generator: Any, request: Any, public: bool
) -> dict[str, Any]:
    """drf-spectacular 0.30 writes a blankable string with a pattern, a format or a minimum
    length as ``oneOf: [<the constraint>, {maxLength: 0}]``. When the constraint itself admits
    "" (``pending_raises``' pattern does), "" matches both branches and a valid answer breaks
    ``oneOf``; ``anyOf`` says what is meant: either is fine."""

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            one_of = node.get("oneOf")
            if isinstance(one_of, list) and BLANK_STRING in one_of:
                node["anyOf"] = node.pop("oneOf")
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(result)
    return result


def _nullable_as_null_type(node: dict[str, Any]) -> dict[str, Any]:
    """OpenAPI 3.0's ``nullable: true`` in 3.1's words: null is one of the types."""
    rest = {k: v for k, v in node.items() if k != "nullable"}
    if not node.get("nullable"):
        return rest
    kind = rest.get("type")
    if isinstance(kind, str):
        return {**rest, "type": [kind, "null"]}
    if isinstance(kind, list):
        return {**rest, "type": [*kind, *(["null"] if "null" not in kind else [])]}
    return {"oneOf": [rest, {"type": "null"}]}


INTEGER_ID_PATTERNS = {r"^\d+$", "^[0-9]+$"}


def openapi_31_details(
    result: dict[str, Any], generator: Any, request: Any, public: bool
) -> dict[str, Any]:
    """What drf-spectacular leaves in 3.0's words, or vaguer than the API is:

    * ``nullable`` written by hand (``extend_schema_field``, the paging links) becomes a
      ``null`` type, which 3.1 reads (it ignores ``nullable``);
    * a path id matched by ``\\d+`` in the URL conf (``campaign_pk``, ``character_pk`` ...)
      is an integer, like every ``id``;
    * the rules API answers anonymously: its operations need no credentials (a token or a
      session only adds a roll to one of your campaigns' logs, where ``campaign`` says so);
    * a query parameter is never null (a query string cannot say so).
    """

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            fixed = {k: walk(v) for k, v in node.items()}
            return _nullable_as_null_type(fixed) if "nullable" in fixed else fixed
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    result["components"] = walk(result.get("components", {}))
    result["paths"] = walk(result.get("paths", {}))
    if "webhooks" in result:
        result["webhooks"] = walk(result["webhooks"])
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            if not isinstance(operation, dict) or method == "parameters":
                continue
            for parameter in operation.get("parameters", []):
                schema = parameter.get("schema", {})
                if parameter.get("in") == "path" and schema.get("pattern") in INTEGER_ID_PATTERNS:
                    parameter["schema"] = {"type": "integer"}
                kinds = schema.get("type")
                if parameter.get("in") == "query" and isinstance(kinds, list) and "null" in kinds:
                    # A query string has no null: a parameter is given or left out (an empty
                    # one is refused), so its nullable serializer field is not nullable here.
                    rest = [k for k in kinds if k != "null"]
                    schema["type"] = rest[0] if len(rest) == 1 else rest
            if path.startswith(PUBLIC_PREFIX):
                operation["security"] = []
    return result


#: Routes of a ViewSet's ``list`` that answer one object, not a list of them.
ONE_OBJECT = [("/api/encounters/{encounter_pk}/record/", "get")]


def add_components(
    result: dict[str, Any], generator: Any, request: Any, public: bool
) -> dict[str, Any]:
    """The shapes no serializer describes (JSON built from the log, the engine and the
    forecast), written out in their apps' ``shapes`` modules and referenced by name."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    for module in (combat_shapes, prep_shapes, integrations_openapi):
        schemas.update(module.components(schemas))
    result["components"]["schemas"] = dict(sorted(schemas.items()))
    for path, method in ONE_OBJECT:
        operation = result.get("paths", {}).get(path, {}).get(method)
        if operation is not None:
            content = operation["responses"]["200"]["content"]["application/json"]
            content["schema"] = content["schema"].get("items", content["schema"])
    return result


COMPONENTS = "#/components/schemas/"


def _component_refs(node: Any) -> set[str]:
    """The names of the components ``node`` refers to itself (not through them)."""
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            ref = item.get("$ref")
            if isinstance(ref, str) and ref.startswith(COMPONENTS):
                found.add(ref.removeprefix(COMPONENTS))
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _reachable(roots: list[Any], schemas: dict[str, Any]) -> set[str]:
    """The components ``roots`` refer to, directly or through other components."""
    seen: set[str] = set()
    todo = set().union(*(_component_refs(root) for root in roots)) if roots else set()
    while todo:
        name = todo.pop()
        if name in seen or name not in schemas:
            continue
        seen.add(name)
        todo |= _component_refs(schemas[name])
    return seen


def close_request_bodies(
    result: dict[str, Any], generator: Any, request: Any, public: bool
) -> dict[str, Any]:
    """Every request body refuses a key it does not know, nested rows included (a 400 naming
    it: ``RefuseUnknownKeys`` in sheets/fields.py), so its schema says
    ``additionalProperties: false``, on the body and on every object it nests.

    Answers are not closed: a few answer shapes reuse a request's rows (a library NPC's stored
    stat block, prep/shapes.py); they get copies of them, left open, before the requests'
    are closed."""
    schemas = result.get("components", {}).get("schemas", {})
    operations = [
        operation
        for item in result.get("paths", {}).values()
        for operation in item.values()
        if isinstance(operation, dict)
    ]
    bodies = [op["requestBody"] for op in operations if "requestBody" in op]
    requests = _reachable(bodies, schemas)
    answers_roots = [{k: v for k, v in op.items() if k != "requestBody"} for op in operations] + [
        result.get("webhooks", {})
    ]
    answers = _reachable(answers_roots, schemas)

    def is_object(name: str) -> bool:
        return bool(schemas.get(name, {}).get("type") == "object")

    shared = {name for name in requests & answers if is_object(name)}
    if shared:
        # Each answer that refers to a shared row gets an open copy of it in its place.
        def inline(node: Any) -> Any:
            if isinstance(node, dict):
                ref = node.get("$ref")
                if isinstance(ref, str) and ref.removeprefix(COMPONENTS) in shared:
                    return inline(copy.deepcopy(schemas[ref.removeprefix(COMPONENTS)]))
                return {key: inline(value) for key, value in node.items()}
            if isinstance(node, list):
                return [inline(value) for value in node]
            return node

        for name in answers - requests:
            schemas[name] = inline(schemas[name])
        for operation in operations:
            for key in operation:
                if key != "requestBody":
                    operation[key] = inline(operation[key])
        if "webhooks" in result:
            result["webhooks"] = inline(result["webhooks"])
    for name in requests:
        if is_object(name):
            schemas[name]["additionalProperties"] = False
    return result
