"""The JSON the combat API answers with that no serializer describes (it comes from the log's
payload, the engine's results and the record): its shapes in the schema, as components that
config.openapi.add_components puts under ``components/schemas``. The serializers point at
them with ``ref``. Documentation only; tests/config/test_generated_client.py checks that the
answers match them.

A log entry's ``details`` vary with its ``kind`` (copied into them, so that a reader can tell
them apart): a roll carries the engine's result, a join the participants added, a Fate spend
its action; every other kind only what changed."""

from __future__ import annotations

import copy
from typing import Any

from combat.models import CombatLogEntry

Kind = CombatLogEntry.Kind


def ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"oneOf": [schema, {"type": "null"}]}


INT = {"type": "integer"}
STR = {"type": "string"}
BOOL = {"type": "boolean"}
NUM = {"type": "number"}
NULLABLE_INT = {"type": ["integer", "null"]}
NULLABLE_NUM = {"type": ["number", "null"]}


def obj(
    properties: dict[str, Any], *, optional: tuple[str, ...] = (), description: str = ""
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": [k for k in properties if k not in optional],
    }
    if description:
        out["description"] = description
    return out


#: Kinds whose details are only what changed.
PLAIN_KINDS = [k.value for k in Kind if k not in (Kind.JOIN, Kind.ROLL, Kind.STAMINA, Kind.FATE)]

STORED_CONDITION = obj(
    {
        "by": {**NULLABLE_INT, "description": "The participant who caused it."},
        "round": {**INT, "description": "The round it was applied in."},
        "ends": {"type": "string", "enum": ["turn", "round", "removed"]},
        "until": {**INT, "description": "With ends=round: the last round it lasts."},
        "label": {**STR, "description": "A GM's own condition's name."},
    },
    optional=("ends", "until", "label"),
    description="One condition as stored: who caused it, when, and when it ends "
    '(docs/rules.md, "Conditions").',
)

STORED_CONDITIONS = {
    "type": "object",
    "additionalProperties": ref("StoredCondition"),
    "description": "The participant's conditions by name (a GM's own under `gm:`); "
    "GET /api/participants/{id}/conditions/ lists them with what is left of each.",
}

#: A value before or after a change: a number, a text, a flag, null, or conditions.
CHANGE_VALUE = {
    "anyOf": [{"type": "null"}, BOOL, INT, STR, ref("StoredConditions")],
}

CHANGE = obj(
    {
        "model": {
            "type": "string",
            "enum": [
                "encounter",
                "participant",
                "declaration",
                "character",
                "zone",
                "weapon",
                "discipline",
            ],
        },
        "pk": INT,
        "field": STR,
        "before": CHANGE_VALUE,
        "after": CHANGE_VALUE,
        "char": {**INT, "description": "The character of a zone, weapon or discipline."},
    },
    optional=("char",),
    description="One field a log entry changed, with its exact values (undo writes `before` back).",
)

ROLL_WOUNDS = obj({"vit_loss": INT, "vitality": INT, "grievous": BOOL, "down": BOOL})

MANEUVER_HIT = obj({"roll": INT, "damage": INT, "raw": INT})


def _with(base: dict[str, Any], extra: dict[str, Any], optional: tuple[str, ...]) -> Any:
    out = copy.deepcopy(base)
    out["properties"].update(extra)
    out["required"] = sorted({*out.get("required", []), *(k for k in extra if k not in optional)})
    return out


def roll_results(components: dict[str, Any]) -> dict[str, Any]:
    """A strike's result is the rules API's (OmgStrike) with the wounds it dealt; a
    maneuver's is a check (OmgCheck) with the maneuver's effects."""
    strike = _with(components["OmgStrike"], {"wounds": ref("RollWounds")}, ("wounds",))
    strike["description"] = "A strike's result, with the wounds dealt to the zone hit."
    maneuver = _with(
        components["OmgCheck"],
        {
            "maneuver": STR,
            "condition": {"type": ["string", "null"]},
            "too_heavy": BOOL,
            "stamina_test": BOOL,
            "shove_yards": NULLABLE_INT,
            "hits": {"type": "array", "items": ref("ManeuverHit")},
            "wounds": ref("RollWounds"),
            "counterattack": BOOL,
            "weapon_wear": INT,
            "weapon_dmg_after": NULLABLE_INT,
            "weapon_destroyed": BOOL,
        },
        ("wounds",),
    )
    maneuver["description"] = "A maneuver's result: the check and its effects."
    return {"StrikeRollResult": strike, "ManeuverRollResult": maneuver}


def _details(kinds: list[str], extra: dict[str, Any], optional: tuple[str, ...] = ()) -> Any:
    kind = {"type": "string", "enum": kinds} if len(kinds) > 1 else {"const": kinds[0]}
    return obj(
        {
            "kind": {**kind, "description": "The entry's kind."},
            "involves": {
                "type": "array",
                "items": INT,
                "description": "The participants involved.",
            },
            "changes": {"type": "array", "items": ref("Change")},
            **extra,
        },
        optional=optional,
    )


LOG_DETAILS = {
    "oneOf": [
        ref("PlainLogDetails"),
        ref("JoinLogDetails"),
        ref("RollLogDetails"),
        ref("StaminaLogDetails"),
        ref("FateLogDetails"),
    ],
    "discriminator": {
        "propertyName": "kind",
        "mapping": {
            **dict.fromkeys(PLAIN_KINDS, "#/components/schemas/PlainLogDetails"),
            Kind.JOIN.value: "#/components/schemas/JoinLogDetails",
            Kind.ROLL.value: "#/components/schemas/RollLogDetails",
            Kind.STAMINA.value: "#/components/schemas/StaminaLogDetails",
            Kind.FATE.value: "#/components/schemas/FateLogDetails",
        },
    },
    "description": "The engine's result and every change with its before/after value, by `kind`.",
}

ROLL_RESULT = {"oneOf": [ref("StrikeRollResult"), ref("ManeuverRollResult")]}

ODDS = obj(
    {
        "pvd": {**STR, "description": 'PRO v DIF, "?" for a hidden side\'s number.'},
        "pro": NULLABLE_INT,
        "dif": NULLABLE_INT,
        "hit": {**NULLABLE_INT, "description": "Faces out of 100 that hit."},
        "second_hit": NULLABLE_INT,
        "epic_success": NULLABLE_INT,
        "epic_failure": NULLABLE_INT,
        "mean_damage": NULLABLE_NUM,
    },
    description="Against a hidden participant, its number and everything computed from it "
    "are null.",
)

DECLARATION_ODDS = obj(
    {mode: ref("DefenseOdds") for mode in ("dodge", "parry", "block", "focus")},
    optional=("dodge", "parry", "block", "focus"),
    description="PvD and exact odds per defense mode (the declared one once declared; focus "
    "for a feint).",
)

RECORD_ENTRY = obj(
    {
        "seq": INT,
        "round": INT,
        "kind": {"type": "string", "enum": [k.value for k in Kind]},
        "at": {**STR, "format": "date-time"},
        "text": STR,
        "roll": NULLABLE_INT,
        "table_dice": BOOL,
        "undoes": {**NULLABLE_INT, "description": "The seq of the entry this one undoes."},
        "result": {
            "oneOf": [ref("StrikeRollResult"), ref("ManeuverRollResult"), {"type": "null"}],
            "description": "The GM's record only: a roll's result.",
        },
        "changes": {
            "type": "array",
            "items": ref("Change"),
            "description": "The GM's record only.",
        },
    },
    optional=("result", "changes"),
)

RECORD = obj(
    {
        "format": {**INT, "description": "The record's format version."},
        "encounter": obj(
            {
                "id": INT,
                "name": STR,
                "campaign": STR,
                "status": STR,
                "rounds": INT,
                "created_at": {**STR, "format": "date-time"},
                "ended_at": {"type": ["string", "null"], "format": "date-time"},
            }
        ),
        "for_gm": BOOL,
        "outcome": obj(
            {
                "standing": {"type": "array", "items": STR},
                "fallen": {"type": "array", "items": obj({"name": STR, "state": STR})},
            }
        ),
        "participants": {
            "type": "array",
            "items": obj(
                {
                    "id": INT,
                    "name": STR,
                    "npc": BOOL,
                    "hidden": BOOL,
                    "state": STR,
                    "conditions": {"type": "array", "items": STR},
                    "vitality": {**INT, "description": "Left out for a hidden NPC's reader."},
                },
                optional=("vitality",),
            ),
        },
        "log": {"type": "array", "items": ref("RecordEntry")},
    },
    description="The record of a fight as the caller may read it: a player's has no hidden "
    "NPC's numbers and no results or changes.",
)


def components(existing: dict[str, Any]) -> dict[str, Any]:
    return {
        "StoredCondition": STORED_CONDITION,
        "StoredConditions": STORED_CONDITIONS,
        "Change": CHANGE,
        "RollWounds": ROLL_WOUNDS,
        "ManeuverHit": MANEUVER_HIT,
        **roll_results(existing),
        "LogDetails": LOG_DETAILS,
        "PlainLogDetails": _details(PLAIN_KINDS, {}),
        "JoinLogDetails": _details(
            [Kind.JOIN.value],
            {"participants": {"type": "array", "items": INT, "description": "Added."}},
        ),
        "RollLogDetails": _details(
            [Kind.ROLL.value],
            {
                "result": ROLL_RESULT,
                "reroll_of": {**INT, "description": "The roll a Fate re-roll replaced."},
            },
            ("reroll_of",),
        ),
        "StaminaLogDetails": _details(
            [Kind.STAMINA.value],
            {
                "result": ref("OmgCheck"),
                "reroll_of": {**INT, "description": "The test a Fate re-roll replaced."},
            },
            ("reroll_of",),
        ),
        "FateLogDetails": _details(
            [Kind.FATE.value], {"action": {"type": "string", "enum": ["reroll", "revoke"]}}
        ),
        "DefenseOdds": ODDS,
        "DeclarationOdds": DECLARATION_ODDS,
        "RecordEntry": RECORD_ENTRY,
        "Record": RECORD,
    }
