"""The JSON the preparation API answers with that no serializer describes (a library NPC's
stored stat block, the matchup table, the fight forecast): its shapes in the schema, put
under ``components/schemas`` by config.openapi.add_components. Documentation only;
tests/config/test_generated_client.py checks that the answers match them."""

from __future__ import annotations

import copy
from typing import Any

from combat.api.shapes import BOOL, INT, NULLABLE_NUM, NUM, STR, obj, ref

CHANCE = {**NUM, "minimum": 0, "maximum": 1}

MATCHUP_ZONE = obj(
    {
        "zone": STR,
        "protection": INT,
        "damage_per_hit": NULLABLE_NUM,
        "hits_to_bzf": NULLABLE_NUM,
    }
)

MATCHUP_CELL = obj(
    {
        "pvd": STR,
        "hit": {**INT, "description": "Faces out of 100 that hit."},
        "second_hit": INT,
        "zones": {"type": "array", "items": ref("MatchupZone")},
    }
)

MATCHUP_ROW = obj(
    {
        "best": obj({"strike": STR, "hit": INT}),
        "attacker": STR,
        "attacker_hidden": BOOL,
        "weapon": STR,
        "defender": STR,
        "defender_hidden": BOOL,
        "cells": {
            "type": "object",
            "description": "cells[strike][defense].",
            "additionalProperties": {
                "type": "object",
                "additionalProperties": ref("MatchupCell"),
            },
        },
    },
    description="One attacker, weapon and defender.",
)

MATCHUPS = obj(
    {
        "npc_attacks": {"type": "array", "items": ref("MatchupRow")},
        "character_attacks": {"type": "array", "items": ref("MatchupRow")},
    },
    description="One row per attacker, weapon and defender, both ways (NPCs against "
    "characters, characters against NPCs).",
)

FIGHT_FORECAST = obj(
    {
        "fights": {
            **INT,
            "description": "The fights played (the sample count); 0 when walked exactly.",
        },
        "seed": {"type": ["integer", "null"], "description": "Null when walked exactly."},
        "exact": BOOL,
        "method": {
            "type": "string",
            "enum": ["exact", "sampled"],
            "description": "exact: every branch of a duel weighed; sampled: fights played.",
        },
        "note": {
            "type": ["string", "null"],
            "description": "Why the answer is not quite what was asked: a duel sampled rather "
            "than walked exactly (too many states, or past its time budget), or fewer fights "
            "played than asked (the forecast's time budget); null otherwise.",
        },
        "round_limit": INT,
        "party_standing": CHANCE,
        "party_standing_interval": {
            "type": "array",
            "items": CHANCE,
            "description": "Its 95% interval.",
        },
        "party_wins": CHANCE,
        "round_limit_hit": CHANCE,
        "rounds": obj({"median": NUM, "p10": NUM, "p90": NUM}),
        "combatants": {
            "type": "array",
            "items": obj(
                {
                    "key": STR,
                    "name": STR,
                    "side": {"type": "string", "enum": ["party", "foes"]},
                    "group": STR,
                    "down": CHANCE,
                    "knocked_out": CHANCE,
                    "out": CHANCE,
                    "grievous": CHANCE,
                    "takedowns": NUM,
                    "damage": NUM,
                }
            ),
        },
        "groups": {
            "type": "array",
            "items": obj(
                {"group": STR, "name": STR, "count": INT, "beaten": CHANCE, "takedowns": NUM}
            ),
        },
        "most_dangerous": {"type": ["string", "null"]},
        "verdict": STR,
        "level": STR,
        "cached": BOOL,
    },
    optional=("cached",),
    description='How the fight is likely to go (docs/rules.md, "The fight forecast"); '
    "chances are 0..1.",
)


def stat_block(components: dict[str, Any]) -> dict[str, Any]:
    """A library NPC's stored sheet: the stat block as sent, less its name (the NPC's)."""
    sheet: dict[str, Any] = copy.deepcopy(components["StatBlockRequest"])
    sheet["properties"].pop("name", None)
    sheet["required"] = sorted(sheet["properties"])
    sheet["description"] = "The stat block: aptitudes, weight, BZF, disciplines, weapons, "
    sheet["description"] += "zones (with armor), notes; the character document's fields."
    return sheet


def components(existing: dict[str, Any]) -> dict[str, Any]:
    return {
        "MatchupZone": MATCHUP_ZONE,
        "MatchupCell": MATCHUP_CELL,
        "MatchupRow": MATCHUP_ROW,
        "Matchups": MATCHUPS,
        "FightForecast": FIGHT_FORECAST,
        "StatBlockSheet": stat_block(existing),
    }
