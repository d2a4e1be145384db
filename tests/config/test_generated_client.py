"""The API as an integrator meets it: a Python client generated from the served schema with
openapi-python-client (no hand-written HTTP) plays a whole evening: a token made by API, a
campaign joined, sheets written back with their version, a fight with a hidden NPC (declare,
defend, roll, Fate, undo, a one-call strike, a condition, the log), the record, the rest, the
GM's library and matchups, webhooks, checks outside combat (an open call and a secret one
answered, Fate, undo), and the public rules API without credentials; then every other
operation of the schema once (the lists, reads, edits and deletes). An operation of the
served schema that nothing calls fails it, unless NOT_PLAYED says why.

It fails on any answer the generated client cannot parse, on any body (or part of one) that
parses only into an untyped ``dict``, and on any schema of these answers that says nothing
of its shape; every request and answer is also checked against the schema with openapi-core
(docs/integrations.md, "A generated client")."""

from __future__ import annotations

import enum
import importlib
import json
import subprocess
import sys
import types
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import attrs
import httpx
import pytest
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from django.test import Client as DjangoClient
from openapi_core import Config, OpenAPI
from openapi_core.datatypes import RequestParameters
from openapi_core.deserializing.media_types.util import plain_loads
from werkzeug.datastructures import Headers, ImmutableMultiDict

from sheets.models import ApiToken
from tests.factories import make_user
from tests.security.matrix import RULES

PACKAGE = "omg_client"
BASE_URL = "http://testserver"
CONFIG = "post_hooks: []\n"
GENERATOR = Path(sys.executable).with_name("openapi-python-client")


# --- The served schema and the client generated from it --------------------------------------


@pytest.fixture(scope="module")
def served_schema(django_db_blocker: Any) -> dict[str, Any]:
    with django_db_blocker.unblock():
        response = DjangoClient().get(
            "/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json"
        )
    assert response.status_code == 200
    return dict(json.loads(response.content))


@pytest.fixture(scope="module")
def generated(
    served_schema: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ModuleType]:
    where = tmp_path_factory.mktemp("client")
    (where / "schema.json").write_text(json.dumps(served_schema))
    (where / "config.yaml").write_text(CONFIG)
    run = subprocess.run(
        [
            str(GENERATOR),
            "generate",
            "--path",
            str(where / "schema.json"),
            "--output-path",
            str(where / PACKAGE),
            "--meta",
            "none",
            "--config",
            str(where / "config.yaml"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    # The generator warns (and leaves out what it cannot read) instead of failing.
    assert "Warning" not in run.stdout + run.stderr, run.stdout + run.stderr
    sys.path.insert(0, str(where))
    try:
        importlib.import_module(f"{PACKAGE}.models")
        importlib.import_module(f"{PACKAGE}.client")
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(where))
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
            del sys.modules[name]


# --- Every exchange, checked -----------------------------------------------------------------


@dataclass
class Exchange:
    request: httpx.Request
    response: httpx.Response


class CoreRequest:
    """An httpx request as openapi-core reads one."""

    def __init__(self, request: httpx.Request) -> None:
        self.host_url = f"{request.url.scheme}://{request.url.netloc.decode()}"
        self.path = request.url.path
        self.method = request.method.lower()
        self.body = request.content or None
        self.content_type = request.headers.get("Content-Type", "")
        self.parameters = RequestParameters(
            query=ImmutableMultiDict(list(request.url.params.multi_items())),
            header=Headers(list(request.headers.items())),
            cookie=ImmutableMultiDict(),
        )


class CoreResponse:
    def __init__(self, response: httpx.Response) -> None:
        self.status_code = response.status_code
        self.content_type = response.headers.get("Content-Type", "").split(";")[0]
        self.headers = Headers(list(response.headers.items()))
        self.data = response.content or None


@dataclass
class Evening:
    """The generated client's calls, and what each found wrong."""

    api: ModuleType
    schema: dict[str, Any]
    exchanges: list[Exchange] = field(default_factory=list)
    untyped: list[str] = field(default_factory=list)
    operations: set[tuple[str, str]] = field(default_factory=set)

    def record(self, response: httpx.Response) -> None:
        response.read()
        self.exchanges.append(Exchange(response.request, response))

    def client(self, key: str | None) -> Any:
        args: dict[str, Any] = {
            "transport": httpx.WSGITransport(app=get_wsgi_application()),
            "event_hooks": {"response": [self.record]},
        }
        client = self.api.client
        if key is None:
            return client.Client(
                base_url=BASE_URL, httpx_args=args, raise_on_unexpected_status=True
            )
        return client.AuthenticatedClient(
            base_url=BASE_URL, token=key, httpx_args=args, raise_on_unexpected_status=True
        )

    def call(self, operation: str, who: Any, expect: int = 200, **kwargs: Any) -> Any:
        """``operation`` is the generated module, as ``"encounters.encounters_create"``."""
        module = importlib.import_module(f"{PACKAGE}.api.{operation}")
        before = len(self.exchanges)
        try:
            answer = module.sync_detailed(client=who, **kwargs)
        except Exception as exc:  # a parse error is a finding: say which call and what
            body = self.exchanges[-1].response.text[:300] if len(self.exchanges) > before else ""
            pytest.fail(f"{operation}: the generated client could not read {body!r}: {exc!r}")
        sent = self.exchanges[-1]
        assert answer.status_code == expect, (operation, answer.status_code, sent.response.text)
        path = _template(self.schema, sent.request.url.path)
        self.operations.add((sent.request.method.lower(), path))
        self.untyped += untyped_parts(answer.parsed, operation)
        return answer.parsed


def untyped_parts(value: Any, where: str) -> list[str]:
    """Where a parsed answer holds a plain ``dict`` (a shape the schema did not give), or keys
    the model did not declare (kept in its ``additional_properties``)."""
    if value is None:
        return []
    if isinstance(value, dict):
        return [where]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in untyped_parts(v, f"{where}[{i}]")]
    if not attrs.has(type(value)):
        return []
    found = []
    declared = [f for f in attrs.fields(type(value)) if f.name != "additional_properties"]
    for f in attrs.fields(type(value)):
        inner = getattr(value, f.name)
        if f.name != "additional_properties":
            found += untyped_parts(inner, f"{where}.{f.name}")
        elif declared and inner:
            found.append(f"{where}: undeclared keys {sorted(inner)}")
        else:  # a map: its values are what the schema says
            found += [p for k, v in inner.items() for p in untyped_parts(v, f"{where}[{k}]")]
    return found


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        name = node["$ref"].removeprefix("#/components/schemas/")
        node = schema["components"]["schemas"][name]
    return node


COMBINERS = ("oneOf", "anyOf", "allOf")


def vague_schemas(schema: dict[str, Any], root: dict[str, Any], where: str) -> list[str]:
    """The places under ``root`` whose schema says nothing of the shape: ``{}``, or an object
    with neither properties nor typed values."""
    found: list[str] = []
    seen: set[int] = set()

    def walk(node: dict[str, Any], at: str) -> None:
        node = _resolve(schema, node)
        if id(node) in seen:
            return
        seen.add(id(node))
        combined = [n for key in COMBINERS for n in node.get(key, [])]
        kinds = node.get("type")
        kinds = kinds if isinstance(kinds, list) else [kinds]
        if not combined and kinds == [None] and "enum" not in node and "const" not in node:
            found.append(at)
            return
        for n in combined:
            walk(n, at)
        if "object" in kinds:
            extra = node.get("additionalProperties")
            if not node.get("properties") and not isinstance(extra, dict) or extra == {}:
                found.append(at)
            for name, prop in node.get("properties", {}).items():
                walk(prop, f"{at}.{name}")
            if isinstance(extra, dict) and extra:
                walk(extra, f"{at}[*]")
        if "array" in kinds:
            walk(node.get("items", {}), f"{at}[]")

    walk(root, where)
    return found


def _template(schema: dict[str, Any], path: str) -> str:
    """The schema's path template that ``path`` is an instance of."""
    parts = path.strip("/").split("/")
    for template in schema["paths"]:
        pieces = template.strip("/").split("/")
        if len(pieces) == len(parts) and all(
            p == q or (p.startswith("{") and q.isdigit())
            for p, q in zip(pieces, parts, strict=True)
        ):
            return template
    raise AssertionError(f"{path} is in no path of the schema")


#: Operations the evening does not call, and why (none today: every operation is played).
NOT_PLAYED: dict[str, str] = {}


def played_ids(evening: Evening) -> set[str]:
    paths = evening.schema["paths"]
    return {paths[path][method]["operationId"] for method, path in evening.operations}


# --- The evening -------------------------------------------------------------------------------


@pytest.fixture
def evening(generated: ModuleType, served_schema: dict[str, Any], transactional_db: None):
    # The WSGI handler closes "old" connections as a request starts and ends; with SQLite's
    # in-memory test database that would lose it (the schema fuzzing does the same).
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    try:
        yield Evening(api=generated, schema=served_schema)
    finally:
        for signal in (request_started, request_finished):
            signal.connect(close_old_connections)


def play(e: Evening) -> None:
    m = e.api.models
    gm_user, player_user = make_user("gm"), make_user("player")
    _, first_key = ApiToken.objects.create_token(user=gm_user, name="setup")
    _, player_key = ApiToken.objects.create_token(user=player_user, name="phone")

    # A token made through the API, with the Bearer prefix generated clients send.
    setup = e.client(first_key)
    made = e.call("tokens.tokens_create", setup, 201, body=m.ApiTokenRequest(name="GM bot"))
    gm, player, anonymous = e.client(made.key), e.client(player_key), e.client(None)
    assert [t.name for t in e.call("tokens.tokens_list", gm).results] == ["GM bot", "setup"]
    old = next(t for t in e.call("tokens.tokens_list", gm).results if t.name == "setup")
    e.call("tokens.tokens_destroy", gm, 204, id=old.id)

    # The campaign, joined by the player.
    campaign = e.call(
        "campaigns.campaigns_create", gm, 201, body=m.CampaignRequest(name="The Sunken Keep")
    )
    e.call("campaigns.campaigns_join_create", player, 201, body=m.JoinRequest(campaign.join_code))
    e.call("campaigns.campaigns_retrieve", player, id=campaign.id)

    # The sheets: the player's fighter and the GM's thug (an NPC).
    aptitudes = {"foc": 3, "spd": 3, "skl": 3, "vgr": 3, "nrv": 3, "chr": 2, "svy": 2}
    ysolde = e.call(
        "characters.characters_create",
        player,
        201,
        body=m.CharacterRequest.from_dict(
            {"campaign": campaign.id, "name": "Ysolde", "weight": 140, "fate": 3, **aptitudes}
        ),
    )
    thug = e.call(
        "characters.characters_create",
        gm,
        201,
        body=m.CharacterRequest.from_dict(
            {"campaign": campaign.id, "name": "Thug", "is_npc": True, "weight": 180, **aptitudes}
        ),
    )
    for who, sheet in ((player, ysolde), (gm, thug)):
        e.call(
            "characters.characters_disciplines_create",
            who,
            201,
            character_pk=sheet.id,
            body=m.DisciplineRequest.from_dict({"name": "Melee Combat", "level": 2}),
        )
        e.call(
            "characters.characters_weapons_create",
            who,
            201,
            character_pk=sheet.id,
            body=m.WeaponRequest.from_dict(
                {"name": "Short sword", "category": "II", "dmg": 2, "dmg_max": 2}
            ),
        )
    # A sheet written back with the version it was read at; an old version is refused.
    read = e.call("characters.characters_retrieve", player, id=ysolde.id)
    e.call(
        "characters.characters_partial_update",
        player,
        id=ysolde.id,
        body=m.PatchedCharacterUpdateRequest(occupation="Sellsword", version=read.version),
    )
    e.call(
        "characters.characters_partial_update",
        player,
        409,
        id=ysolde.id,
        body=m.PatchedCharacterUpdateRequest(occupation="Baker", version=read.version),
    )
    e.call("characters.characters_zones_list", player, character_pk=ysolde.id)
    e.call("characters.characters_list", gm)

    # Webhooks, so that the fight leaves deliveries to read.
    hook = e.call(
        "campaigns.campaigns_webhooks_create",
        gm,
        201,
        campaign_pk=campaign.id,
        body=m.WebhookRequest.from_dict(
            {"url": "http://127.0.0.1:9/hook", "events": ["roll.resolved", "encounter.started"]}
        ),
    )

    # The fight: Ysolde against a hidden copy of the thug.
    encounter = e.call(
        "encounters.encounters_create",
        gm,
        201,
        body=m.EncounterRequest(campaign=campaign.id, name="Ambush"),
    )
    add = "encounters.encounters_participants_create"
    e.call(add, gm, 201, id=encounter.id, body=m.ParticipantsAddRequest(characters=[ysolde.id]))
    e.call(add, gm, 201, id=encounter.id, body=m.ParticipantsAddRequest(npc=thug.id, hidden=True))
    e.call("encounters.encounters_start_create", gm, id=encounter.id)
    fight = e.call("encounters.encounters_retrieve", gm, id=encounter.id)
    her = next(p for p in fight.participants if p.character == ysolde.id)
    it = next(p for p in fight.participants if p.id != her.id)
    seen = e.call("participants.participants_retrieve", player, id=it.id)
    assert seen.hidden and seen.numbers is None  # the player never sees a hidden NPC's numbers
    players_view = e.call("encounters.encounters_retrieve", player, id=encounter.id)
    assert [p.numbers is None for p in players_view.participants if p.id == it.id] == [True]
    controls = {her.id: player, it.id: gm}

    def attack(attacker: Any, target: Any, defense: str, roll: int) -> Any:
        # The zone as the GM reads it (a player aims at a hidden NPC without its numbers).
        zone = next(p for p in fight.participants if p.id == target.id).numbers.zones[0].id
        declared = e.call(
            "encounters.encounters_attacks_create",
            controls[attacker.id],
            201,
            id=encounter.id,
            body=m.DeclareRequest.from_dict(
                {"attacker": attacker.id, "target": target.id, "action": "fast", "zone": zone}
            ),
        )
        assert declared.defense is None  # until the target defends
        e.call("attacks.attacks_retrieve", player, id=declared.id)
        e.call("encounters.encounters_retrieve", player, id=encounter.id)
        e.call(
            "attacks.attacks_defense_create",
            controls[target.id],
            id=declared.id,
            body=m.DefenseRequest.from_dict({"defense": defense}),
        )
        return e.call(
            "attacks.attacks_roll_create",
            controls[attacker.id],
            id=declared.id,
            body=m.RollRequest(roll=roll),
        )

    # Initiative is rolled: pass the turn until it is Ysolde's, so the evening is the same.
    for _ in range(2):
        if fight.turn != her.id:
            e.call("encounters.encounters_next_turn_create", gm, id=encounter.id)
            fight = e.call("encounters.encounters_retrieve", gm, id=encounter.id)
    assert fight.turn == her.id
    turn, other = her, it
    rolled = attack(turn, other, "dodge", 43)
    e.call("rolls.rolls_retrieve", player, id=rolled.id)
    fate = e.call(
        "rolls.rolls_fate_create",
        player,
        id=rolled.id,
        body=m.FateRequest.from_dict({"action": "reroll", "roll": 12}),
    )
    assert fate.reroll is not None
    e.call("encounters.encounters_undo_create", gm, id=encounter.id)
    e.call(
        "encounters.encounters_strike_create",
        gm,  # the one who controls both sides
        201,
        id=encounter.id,
        body=m.StrikeRequest.from_dict(
            {
                "attacker": turn.id,
                "target": other.id,
                "action": "mighty",
                "defense": "parry",
                "roll": 77,
                "zone": next(p for p in fight.participants if p.id == other.id).numbers.zones[0].id,
            }
        ),
    )
    e.call(
        "participants.participants_conditions_create",
        gm,
        201,
        participant_pk=it.id,
        body=m.ConditionAddRequest(name="prone"),
    )
    e.call("participants.participants_conditions_list", player, participant_pk=it.id)
    e.call("participants.participants_retrieve", gm, id=it.id)
    e.call("encounters.encounters_participants_list", player, id=encounter.id)
    e.call("encounters.encounters_forecast_list", gm, encounter_pk=encounter.id, fights=20)
    for who in (player, gm):
        e.call("encounters.encounters_events_list", who, id=encounter.id)
    e.call("encounters.encounters_finish_create", gm, id=encounter.id)
    for who in (player, gm):
        e.call("encounters.encounters_record_list", who, encounter_pk=encounter.id)
    e.call("encounters.encounters_record_markdown_retrieve", gm, encounter_pk=encounter.id)

    # After the fight: the rest, the GM's library and the matchups of a prepared fight.
    rested = e.call("campaigns.campaigns_rest_create", gm, id=campaign.id)
    # Every sheet of the campaign by its id (the fight's copy of the thug is one).
    assert {ysolde.id, thug.id} < {r.character for r in rested}
    e.call("characters.characters_rest_create", player, id=ysolde.id)
    starters = e.call("library.library_starter_set_create", gm)
    e.call("library.library_list", gm)
    prepared = e.call(
        "campaigns.campaigns_prepared_create",
        gm,
        201,
        campaign_pk=campaign.id,
        body=m.PreparedRequest.from_dict(
            {
                "name": "The ford",
                "expected": [ysolde.id],
                "groups": [{"npc": starters[0].id, "count": 2, "hidden": True}],
            }
        ),
    )
    e.call("prepared.prepared_matchups_retrieve", gm, id=prepared.id)
    e.call("prepared.prepared_forecast_retrieve", gm, id=prepared.id, fights=20)
    # "One fewer" names a group by the id the prepared encounter shows.
    fewer = e.call(
        "prepared.prepared_forecast_retrieve",
        gm,
        id=prepared.id,
        fights=20,
        remove=prepared.groups[0].id,
    )
    assert fewer.what_if == "one NPC fewer"
    # A side empty: the forecast is null, which matches one branch of its schema.
    empty = e.call(
        "campaigns.campaigns_prepared_create",
        gm,
        201,
        campaign_pk=campaign.id,
        body=m.PreparedRequest.from_dict({"name": "Nobody yet"}),
    )
    assert e.call("prepared.prepared_forecast_retrieve", gm, id=empty.id).forecast is None
    e.call("campaigns.campaigns_webhooks_deliveries_list", gm, campaign_pk=campaign.id, id=hook.id)
    play_checks(e, gm=gm, player=player, campaign=campaign.id, sheet=ysolde.id)

    play_the_rest(e, locals())

    # The rules API needs no credentials: every roll endpoint, and the odds.
    for name, (method, body) in RULES.items():
        if method == "post":
            operation = f"rules.{name}_create"
            module = importlib.import_module(f"{PACKAGE}.api.{operation}")
            model = next(v for k, v in vars(module).items() if k.endswith("Request"))
            e.call(operation, anonymous, body=model.from_dict(body))
        else:
            operation = f"rules.{name}_retrieve"
            module = importlib.import_module(f"{PACKAGE}.api.{operation}")
            e.call(operation, anonymous, **_typed_query(module, body))


def _typed_query(module: ModuleType, query: Mapping[str, Any]) -> dict[str, Any]:
    """The query as the generated function takes it: each value as its parameter's type (an
    enum member for a choice, an int for a number)."""
    hints = typing.get_type_hints(module.sync_detailed)
    typed = {}
    for name, value in query.items():
        hint = hints[name]
        union = typing.get_origin(hint) in (typing.Union, types.UnionType)
        kinds = typing.get_args(hint) if union else (hint,)
        listed = next((k for k in kinds if typing.get_origin(k) is list), None)
        if listed is not None:  # a list sent as "d4,d8": each item as its own type
            typed[name] = [_typed(typing.get_args(listed), v) for v in str(value).split(",")]
        else:
            typed[name] = _typed(kinds, value)
    return typed


def _typed(kinds: tuple[Any, ...], value: Any) -> Any:
    for kind in kinds:
        if isinstance(kind, type) and issubclass(kind, enum.Enum):
            return kind(value)
    for kind in kinds:
        if kind in (int, str):
            return kind(value)
    return value


def play_the_rest(e: Evening, done: dict[str, Any]) -> None:
    """The operations an evening at the table does not need: the lists, the reads of one
    row, the edits, the deletes, the GM's adjustments during a second fight."""
    m = e.api.models
    gm, player = done["gm"], done["player"]
    campaign, ysolde, thug = done["campaign"], done["ysolde"], done["thug"]
    hook, prepared = done["hook"], done["prepared"]

    e.call("campaigns.campaigns_list", player)
    e.call("campaigns.campaigns_prepared_list", gm, campaign_pk=campaign.id)
    e.call("encounters.encounters_list", player)
    e.call("campaigns.campaigns_regenerate_code_create", gm, id=campaign.id)
    e.call(
        "campaigns.campaigns_partial_update",
        gm,
        id=campaign.id,
        body=m.PatchedCampaignRequest(description="Below the waterline."),
    )
    e.call(
        "campaigns.campaigns_update",
        gm,
        id=campaign.id,
        body=m.CampaignRequest(name="The Sunken Keep"),
    )

    # The webhook: read, edited, its secret rotated, a delivery sent again, deleted.
    wh = {"campaign_pk": campaign.id, "id": hook.id}
    e.call("campaigns.campaigns_webhooks_list", gm, campaign_pk=campaign.id)
    e.call("campaigns.campaigns_webhooks_retrieve", gm, **wh)
    e.call(
        "campaigns.campaigns_webhooks_partial_update",
        gm,
        **wh,
        body=m.PatchedWebhookRequest(description="The table's bot"),
    )
    e.call(
        "campaigns.campaigns_webhooks_update",
        gm,
        **wh,
        body=m.WebhookRequest.from_dict(
            {"url": "http://127.0.0.1:9/hook", "events": ["roll.resolved"]}
        ),
    )
    e.call("campaigns.campaigns_webhooks_rotate_secret_create", gm, **wh)
    deliveries = e.call("campaigns.campaigns_webhooks_deliveries_list", gm, **wh).results
    e.call(
        "campaigns.campaigns_webhooks_deliveries_send_again_create",
        gm,
        202,
        **wh,
        delivery_pk=deliveries[0].id,
    )
    e.call("campaigns.campaigns_webhooks_destroy", gm, 204, **wh)

    # The sheet's rows, each read, edited and deleted; the sheet itself written whole.
    for rows, made in (
        ("disciplines", m.DisciplineRequest.from_dict({"name": "Stealth", "level": 1})),
        (
            "weapons",
            m.WeaponRequest.from_dict({"name": "Club", "category": "I", "dmg": 1, "dmg_max": 1}),
        ),
        ("zones", m.BodyZoneRequest.from_dict({"name": "Tail"})),
    ):
        group = f"characters.characters_{rows}"
        if rows == "zones":
            row = e.call(f"{group}_create", player, 201, character_pk=ysolde.id, body=made)
        else:
            row = e.call(f"{group}_list", player, character_pk=ysolde.id).results[-1]
        where = {"character_pk": ysolde.id, "id": row.id}
        e.call(f"{group}_retrieve", player, **where)
        e.call(f"{group}_update", player, **where, body=made)
        patched = getattr(m, f"Patched{type(made).__name__}")
        e.call(f"{group}_partial_update", player, **where, body=patched.from_dict({}))
        e.call(f"{group}_destroy", player, 204, **where)
    sheet = e.call("characters.characters_retrieve", player, id=ysolde.id)
    e.call(
        "characters.characters_update",
        player,
        id=ysolde.id,
        body=m.CharacterUpdateRequest.from_dict(
            {"campaign": campaign.id, "name": "Ysolde", "version": sheet.version}
        ),
    )
    e.call(
        "characters.characters_buy_raise_create",
        player,
        200,
        id=ysolde.id,
        body=m.RaiseRequest.from_dict({"aptitude": "SKL"}),
    )
    e.call(
        "characters.characters_reserve_roll_create",
        player,
        200,
        id=ysolde.id,
        body=m.ReserveRollRequest(roll=40),
    )
    e.call(
        "characters.characters_reserve_call_create",
        player,
        200,
        id=ysolde.id,
        body=m.ReserveCallRequest(keep_reserve=True),
    )

    # A second fight, run by the GM's hand: initiative, damage, Stamina, conditions, an
    # attack called off, NPCs added from the library; then renamed and deleted.
    fight = e.call(
        "encounters.encounters_create",
        gm,
        201,
        body=m.EncounterRequest(campaign=campaign.id, name="Second wave"),
    )
    add = "encounters.encounters_participants_create"
    e.call(add, gm, 201, id=fight.id, body=m.ParticipantsAddRequest(characters=[ysolde.id]))
    e.call(add, gm, 201, id=fight.id, body=m.ParticipantsAddRequest(npc=thug.id))
    starters = e.call("library.library_list", gm).results
    e.call(
        "encounters.encounters_library_create",
        gm,
        201,
        encounter_pk=fight.id,
        body=m.EncounterLibraryRequest.from_dict({"picks": [{"npc": starters[0].id, "count": 1}]}),
    )
    e.call("encounters.encounters_start_create", gm, id=fight.id)
    e.call("encounters.encounters_initiative_create", gm, id=fight.id)
    e.call("encounters.encounters_next_turn_create", gm, id=fight.id)
    running = e.call("encounters.encounters_retrieve", gm, id=fight.id)
    her = next(p for p in running.participants if p.character == ysolde.id)
    foe = next(p for p in running.participants if p.id != her.id)
    e.call(
        "encounters.encounters_adjust_create",
        gm,
        id=fight.id,
        body=m.AdjustRequest(zone=her.numbers.zones[0].id, amount=1),
    )
    e.call(
        "participants.participants_stamina_create",
        gm,
        409,  # nothing calls for one: the answer that says so
        id=her.id,
        body=m.StaminaRequest.from_dict({"roll": 5}),
    )
    e.call(
        "participants.participants_update_create",
        gm,
        id=foe.id,
        body=m.ParticipantUpdateRequest.from_dict({"hidden": True}),
    )
    conditions = "participants.participants_conditions"
    e.call(
        f"{conditions}_create",
        gm,
        201,
        participant_pk=foe.id,
        body=m.ConditionAddRequest(name="prone"),
    )
    e.call(
        f"{conditions}_remove_create",
        gm,
        participant_pk=foe.id,
        body=m.ConditionRemoveRequest(key="prone"),
    )
    turn = e.call("encounters.encounters_retrieve", gm, id=fight.id).turn
    attacker = next(p for p in running.participants if p.id == turn)
    target = foe if attacker.id == her.id else her
    declared = e.call(
        "encounters.encounters_attacks_create",
        gm,
        201,
        id=fight.id,
        body=m.DeclareRequest.from_dict(
            {
                "attacker": attacker.id,
                "target": target.id,
                "action": "fast",
                "zone": target.numbers.zones[0].id,
            }
        ),
    )
    e.call("attacks.attacks_cancel_create", gm, id=declared.id)
    e.call(
        "encounters.encounters_partial_update",
        gm,
        id=fight.id,
        body=m.PatchedEncounterRequest(name="Third wave"),
    )
    e.call(
        "encounters.encounters_update",
        gm,
        id=fight.id,
        body=m.EncounterRequest(campaign=campaign.id, name="Second wave"),
    )
    e.call("encounters.encounters_finish_create", gm, id=fight.id)
    e.call("encounters.encounters_destroy", gm, 204, id=fight.id)

    # The GM's library and prepared fights: read, edited, copied, started, deleted.
    npc = e.call(
        "library.library_create", gm, 201, body=m.StatBlockRequest.from_dict({"name": "Bandit"})
    )
    e.call("library.library_retrieve", gm, id=npc.id)
    e.call(
        "library.library_update",
        gm,
        id=npc.id,
        body=m.StatBlockRequest.from_dict({"name": "Bandit chief"}),
    )
    e.call(
        "library.library_partial_update",
        gm,
        id=npc.id,
        body=m.PatchedStatBlockRequest.from_dict({"name": "Bandit"}),
    )
    copy = e.call("library.library_duplicate_create", gm, 201, id=npc.id)
    e.call("library.library_destroy", gm, 204, id=copy.id)
    e.call("prepared.prepared_retrieve", gm, id=prepared.id)
    e.call(
        "prepared.prepared_partial_update",
        gm,
        id=prepared.id,
        body=m.PatchedPreparedRequest.from_dict({"name": "The ford at dusk"}),
    )
    e.call(
        "prepared.prepared_update",
        gm,
        id=prepared.id,
        body=m.PreparedRequest.from_dict({"name": "The ford", "expected": [ysolde.id]}),
    )
    started = e.call("prepared.prepared_start_create", gm, 201, id=prepared.id)
    e.call("encounters.encounters_destroy", gm, 204, id=started.encounter)
    e.call("prepared.prepared_destroy", gm, 204, id=prepared.id)

    # Last: the player removed, a sheet deleted, the campaign deleted.
    e.call(
        "campaigns.campaigns_remove_player_create",
        gm,
        id=campaign.id,
        body=m.RemovePlayerRequest(user_id=done["player_user"].id),
    )
    e.call("characters.characters_destroy", gm, 204, id=thug.id)
    e.call("campaigns.campaigns_destroy", gm, 204, id=campaign.id)


#: What the paths of the checks API hold (the rules API's checks are the rules').
CHECKS_PATHS = ("/checks/", "/check-calls/", "/check-requests/", "/resources/")


def play_checks(e: Evening, *, gm: Any, player: Any, campaign: int, sheet: int) -> None:
    """Checks outside combat, every operation of them: a roll from the sheet, Mana spent, the
    GM's open call answered, a secret call answered (the player reads no result; the GM
    reveals it), Fate on that result, the GM's undo, the log."""
    m = e.api.models
    target = {"kind": "aptitude", "aptitude": "SKL", "against": "Moderate"}
    rolled = e.call(
        "characters.characters_checks_create",
        player,
        201,
        character_pk=sheet,
        body=m.RollBodyRequest.from_dict({**target, "roll": 30, "note": "the gate"}),
    )
    assert rolled.roll == 30 and rolled.character.id == sheet
    mana = e.call(
        "characters.characters_resources_create",
        player,
        201,
        character_pk=sheet,
        body=m.ResourceBodyRequest.from_dict({"pool": "mana", "amount": -1, "cost": "ARC"}),
    )
    assert mana.after == mana.before - 1

    # The GM calls for an open check; the player's phone finds it, with the odds, and answers.
    called = e.call(
        "check_calls.check_calls_create",
        gm,
        201,
        body=m.CallBodyRequest.from_dict({"campaign": campaign, "characters": [sheet], **target}),
    )
    [prompt] = e.call("check_requests.check_requests_list", player)
    assert prompt.call == called.id and prompt.odds is not None
    e.call(
        "check_requests.check_requests_answer_create",
        player,
        201,
        id=prompt.id,
        body=m.AnswerBodyRequest.from_dict({"roll": 64}),
    )
    read = e.call("check_calls.check_calls_retrieve", gm, id=called.id)
    assert read.requests[0].check is not None and read.requests[0].check.roll == 64

    # A secret call: the server rolls, the player learns only that it was made.
    secret = e.call(
        "check_calls.check_calls_create",
        gm,
        201,
        body=m.CallBodyRequest.from_dict(
            {"campaign": campaign, "characters": [sheet], "secret": True, **target}
        ),
    )
    [prompt] = e.call("check_requests.check_requests_list", player)
    assert prompt.call == secret.id and prompt.secret
    hidden = e.call(
        "check_requests.check_requests_answer_create",
        player,
        201,
        id=prompt.id,
        body=m.AnswerBodyRequest.from_dict({}),
    )
    assert hidden.secret and "roll" not in hidden.to_dict()
    assert "roll" not in e.call("checks.checks_retrieve", player, id=hidden.id).to_dict()
    assert isinstance(e.call("checks.checks_retrieve", gm, id=hidden.id).roll, int)
    assert [c.id for c in e.call("check_calls.check_calls_list", gm)] == [secret.id, called.id]

    # The GM reveals it; the player spends Fate to re-roll it; the GM undoes the re-roll.
    shown = e.call("checks.checks_reveal_create", gm, id=hidden.id)
    assert not shown.secret and isinstance(shown.roll, int)
    fate = e.call(
        "checks.checks_fate_create",
        player,
        id=hidden.id,
        body=m.FateBodyRequest.from_dict({"action": "reroll", "spender": sheet, "roll": 12}),
    )
    assert fate.revoked.status == "revoked" and fate.reroll is not None
    assert fate.reroll.roll == 12 and fate.reroll.replaces == hidden.id
    undone = e.call("campaigns.campaigns_checks_undo_create", gm, campaign_pk=campaign)
    assert undone.id == fate.reroll.id and undone.status == "undone"
    log = e.call("campaigns.campaigns_checks_list", player, campaign_pk=campaign)
    assert [c.id for c in log][:3] == [fate.reroll.id, hidden.id, read.requests[0].check.id]
    # Every operation of the checks API was played.
    ours = {
        (method, path)
        for path, operations in e.schema["paths"].items()
        for method in operations
        if not path.startswith("/api/rules/") and any(part in path for part in CHECKS_PATHS)
    }
    assert len(ours) == 12 and ours <= e.operations, sorted(ours - e.operations)


def test_every_answer_of_the_schema_says_its_shape(served_schema: dict[str, Any]) -> None:
    """Beyond the evening: every success of every operation (a 204 aside, each has a body
    with a schema), and every webhook's body. The checks' operations are left to the
    checks' own evening (NOT_PLAYED)."""
    vague = []
    for path, operations in served_schema["paths"].items():
        for method, operation in operations.items():
            for status, response in operation["responses"].items():
                where = f"{method.upper()} {path} {status}"
                content = response.get("content", {})
                if not status.startswith("2") or operation["operationId"] in NOT_PLAYED:
                    continue
                if not content and status != "204":  # a body the schema does not mention
                    vague.append(f"{where}: no body in the schema")
                if "application/json" in content:
                    schema = content["application/json"]["schema"]
                    vague += vague_schemas(served_schema, schema, where)
    for name, webhook in served_schema["webhooks"].items():
        body = webhook["post"]["requestBody"]["content"]["application/json"]["schema"]
        vague += vague_schemas(served_schema, body, name)
    assert vague == []


def test_a_generated_client_plays_a_whole_evening_as_documented(evening: Evening) -> None:
    play(evening)
    vague = []
    for method, path in sorted(evening.operations):
        operation = evening.schema["paths"][path][method]
        for status, response in operation["responses"].items():
            content = response.get("content", {}).get("application/json")
            if status.startswith("2") and content:
                where = f"{method.upper()} {path} {status}"
                vague += vague_schemas(evening.schema, content["schema"], where)
    # A text body is read as text (openapi-core knows text/plain and text/html only).
    markdown: dict[str, Any] = {"text/markdown": plain_loads}
    openapi = OpenAPI.from_dict(
        evening.schema, config=Config(extra_media_type_deserializers=markdown)
    )
    wrong = []
    for exchange in evening.exchanges:
        request, response = CoreRequest(exchange.request), CoreResponse(exchange.response)
        where = f"{exchange.request.method} {exchange.request.url.path}"
        for check, args in (
            (openapi.validate_request, (request,)),
            (openapi.validate_response, (request, response)),
        ):
            try:
                check(*args)
            except Exception as exc:  # every finding, not only the first
                wrong.append(f"{where} {response.status_code}: {exc!r} {_cause(exc)}")
    print(f"{len(evening.exchanges)} exchanges, {len(evening.operations)} operations")
    assert evening.untyped == [], "answers parsed into plain dicts (or undeclared keys)"
    assert vague == [], "answers whose schema does not say their shape"
    assert wrong == [], "exchanges unlike the schema"
    unplayed = sorted(
        f"{method.upper()} {path}"
        for path, item in evening.schema["paths"].items()
        for method, operation in item.items()
        if (method, path) not in evening.operations and operation["operationId"] not in NOT_PLAYED
    )
    assert unplayed == [], f"operations of the schema the evening never called: {unplayed}"
    assert not {o for o in NOT_PLAYED if o in played_ids(evening)}, "played: off the list"


def _cause(exc: BaseException) -> str:
    details = getattr(exc, "__cause__", None)
    errors = getattr(details, "schema_errors", None) or []
    return "; ".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)[:600]
