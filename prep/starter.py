"""The starter set every GM is offered: four stat blocks built from the rules' own tables
(the weapon and armor tables and the archetypes' disciplines, rules/engine/omg_data.py)."""

from __future__ import annotations

from typing import Any

from rules.engine.omg_data import ARMORS_BY_NAME, DEFAULT_ZONES, MELEE_COMBAT, WEAPONS_BY_NAME
from rules.engine.omg_data import weapon_discipline as mastery


def _weapon(name: str) -> dict[str, Any]:
    spec = WEAPONS_BY_NAME[name]
    return {"name": spec.name, "category": spec.category, "dmg": spec.dmg, "dmg_max": spec.dmg}


def _zones(armor: dict[str, str], zones: tuple[str, ...] = DEFAULT_ZONES) -> list[dict[str, Any]]:
    out = []
    for position, zone in enumerate(zones):
        kind = armor.get(zone, "")
        assert not kind or kind in ARMORS_BY_NAME, kind
        out.append({"name": zone, "position": position, "armor_type": kind})
    return out


def _apts(foc: int, spd: int, skl: int, vgr: int, nrv: int, chr: int, svy: int) -> dict[str, int]:
    return {"foc": foc, "spd": spd, "skl": skl, "vgr": vgr, "nrv": nrv, "chr": chr, "svy": svy}


BEAST_ZONES = ("head", "neck", "body", "forelegs", "hind legs", "tail")

STARTERS: dict[str, dict[str, Any]] = {
    "town-guard": {
        "name": "Town Guard",
        "archetype": "warrior",
        "occupation": "Watchman",
        **_apts(2, 2, 2, 3, 2, 2, 2),
        "weight": 168,
        "disciplines": [
            {"name": MELEE_COMBAT, "level": 1, "aptitude": "SKL"},
            {"name": mastery("VI"), "level": 1, "aptitude": "SKL"},
        ],
        "weapons": [_weapon("Spear")],
        "zones": _zones(
            {"head": "Boiled Leather", "chest": "Leather", "abdomen": "Leather"},
        ),
        "notes": "Spear and leather; calls for help when a fight turns.",
    },
    "thug": {
        "name": "Thug",
        "occupation": "Hired muscle",
        **_apts(1, 2, 3, 4, 2, 1, 2),
        "weight": 182,
        "disciplines": [{"name": mastery("IV"), "level": 2, "aptitude": "VGR"}],
        "weapons": [_weapon("Hatchet")],
        "zones": _zones({"chest": "Padded", "abdomen": "Padded"}),
        "notes": "No Melee Combat: defends undisciplined. Runs when hurt past BZF.",
    },
    "veteran": {
        "name": "Veteran",
        "archetype": "warrior",
        "occupation": "Old soldier",
        **_apts(2, 3, 4, 3, 3, 2, 2),
        "weight": 196,
        "disciplines": [
            {"name": MELEE_COMBAT, "level": 2, "aptitude": "SKL"},
            {"name": mastery("III"), "level": 3, "aptitude": "SKL"},
        ],
        "weapons": [_weapon("Long Sword"), _weapon("Dagger or Bowie")],
        "zones": _zones(
            {
                "head": "Ring mail",
                "chest": "Chain mail",
                "abdomen": "Chain mail",
                "left arm": "Studded Leather",
                "right arm": "Studded Leather",
                "left leg": "Boiled Leather",
                "right leg": "Boiled Leather",
            }
        ),
        "notes": "Chain mail and a long sword; parries and waits for an opening.",
    },
    "wolf": {
        "name": "Wolf",
        "occupation": "Beast",
        **_apts(2, 4, 2, 3, 3, 1, 3),
        "weight": 98,
        "disciplines": [
            {"name": MELEE_COMBAT, "level": 1, "aptitude": "SPD"},
            {"name": mastery("I"), "level": 2, "aptitude": "SPD"},
        ],
        # A bite is a short blade's reach and speed: category I, DMG 2 (a dagger's).
        "weapons": [{"name": "Bite", "category": "I", "dmg": 2, "dmg_max": 2}],
        "zones": [
            *_zones({}, BEAST_ZONES),
        ],
        "notes": "Its own zones (head, neck, body, forelegs, hind legs, tail); thick fur on "
        "the body counts as ARM 1. Hunts in packs.",
    },
}
# Thick fur: ARM 1 without an armor type (the table's armors are worn, not grown).
for _zone in STARTERS["wolf"]["zones"]:
    if _zone["name"] == "body":
        _zone.update(arm=1, arm_max=1)
