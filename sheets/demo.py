"""Demo characters and NPCs for `manage.py demo` (idempotent: keyed by name and campaign)."""

from __future__ import annotations

from typing import Any

from rules.engine.omg_data import MELEE_COMBAT, weapon_discipline
from sheets import services
from sheets.models import Campaign, Character, Discipline, Weapon

DEMO_CHARACTERS: list[dict[str, Any]] = [
    {
        "owner": "alice",
        "name": "Ysolde Varr",
        "archetype": "warrior",
        "occupation": "Sellsword",
        "foc": 2,
        "spd": 3,
        "skl": 4,
        "vgr": 5,
        "nrv": 3,
        "chr": 2,
        "svy": 2,
        "weight": 168,
        "fate": 1,
        "rsv": 47,
        "disciplines": [
            (weapon_discipline("III"), 3, "SKL"),
            (MELEE_COMBAT, 2, "SKL"),
            ("Battle Tactics", 1, "SVY"),
            ("First Aid & Field Medicine", 1, "FOC"),
        ],
        "weapons": [("Long Sword", "III", 4, 0)],
        "armor": ("Leather", 2),
    },
    {
        "owner": "bob",
        "name": "Tamsin Reed",
        "archetype": "rogue",
        "occupation": "Cutpurse",
        "foc": 3,
        "spd": 4,
        "skl": 3,
        "vgr": 2,
        "nrv": 3,
        "chr": 3,
        "svy": 3,
        "weight": 126,
        "fate": 2,
        "rsv": 12,
        "disciplines": [
            ("Lock-picking", 2, "SKL"),
            ("Prowling", 2, "SPD"),
            (weapon_discipline("I"), 2, "SPD"),
            (MELEE_COMBAT, 1, "SPD"),
        ],
        "weapons": [("Dagger or Bowie", "I", 2, 0)],
        "armor": ("Padded", 1),
    },
    {
        "owner": "gm",
        "is_npc": True,
        "name": "Salvager Thug",
        "occupation": "Rival crew",
        "foc": 1,
        "spd": 2,
        "skl": 3,
        "vgr": 4,
        "nrv": 2,
        "chr": 1,
        "svy": 2,
        "weight": 182,
        "disciplines": [(weapon_discipline("IV"), 2, "VGR"), (MELEE_COMBAT, 1, "SKL")],
        "weapons": [("Hatchet", "IV", 4, 0)],
        "armor": ("Leather", 2),
    },
    {
        "owner": "gm",
        "is_npc": True,
        "name": "Drowned Knight",
        "occupation": "Undead guardian",
        "foc": 2,
        "spd": 2,
        "skl": 4,
        "vgr": 5,
        "nrv": 5,
        "chr": 1,
        "svy": 2,
        "weight": 224,
        "disciplines": [(weapon_discipline("VII"), 3, "VGR"), (MELEE_COMBAT, 3, "SKL")],
        "weapons": [("Great Sword", "VII", 5, 1)],
        "armor": ("Plate mail", 5),
    },
]


def load_demo_characters(*, campaign: Campaign, users: dict[str, Any]) -> None:
    for spec in DEMO_CHARACTERS:
        spec = dict(spec)
        owner = users[spec.pop("owner")]
        disciplines = spec.pop("disciplines")
        weapons = spec.pop("weapons")
        armor_type, arm = spec.pop("armor")
        if Character.objects.filter(campaign=campaign, name=spec["name"]).exists():
            continue
        character = services.create_character(campaign=campaign, owner=owner, **spec)
        Discipline.objects.bulk_create(
            Discipline(character=character, name=n, level=lv, aptitude=apt)
            for n, lv, apt in disciplines
        )
        Weapon.objects.bulk_create(
            Weapon(character=character, name=n, category=c, dmg=d, dmg_max=d, bonus=b)
            for n, c, d, b in weapons
        )
        character.zones.exclude(name="head").update(armor_type=armor_type, arm=arm, arm_max=arm)
