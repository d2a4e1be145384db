"""Small factories for tests: real rows in the real database.

The fighters come from the seed's numbers: Ysolde (Speed 3, Skill 4, Vigor 5, Swordsmanship 3,
Melee Combat 2, long sword DMG 4, leather ARM 2) against a salvager thug NPC. Fixtures in the
conftest files call these; tests that need a variation call them directly.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User

from combat import services as combat
from combat.models import Encounter, Participant
from rules.engine.omg_data import MELEE_COMBAT, weapon_discipline
from sheets.models import Campaign, Character, Discipline, Membership, Weapon
from sheets.services import create_character
from tests.fight_steps import strike

PASSWORD = "correct-horse-battery"
_counter = itertools.count(1)


def make_user(username: str | None = None, **extra: Any) -> User:
    username = username or f"user{next(_counter)}"
    return User.objects.create_user(username=username, password=PASSWORD, **extra)


def make_campaign(
    gm: User | None = None, *, players: tuple[Any, ...] = (), **extra: Any
) -> Campaign:
    campaign = Campaign.objects.create(
        gm=gm or make_user(), name=extra.pop("name", f"Campaign {next(_counter)}"), **extra
    )
    for player in players:
        Membership.objects.create(campaign=campaign, user=player)
    return campaign


def make_fighter(
    campaign: Any,
    owner: Any,
    name: str,
    *,
    apts: dict[str, Any],
    weight: int,
    itv: int | None,
    disciplines: list[tuple[str, int]],
    weapon: tuple[str, str, int],
    arm: int,
    fate: int = 0,
    is_npc: bool = False,
) -> Character:
    character = create_character(
        campaign=campaign,
        owner=owner,
        name=name,
        is_npc=is_npc,
        weight=weight,
        itv=itv,
        fate=fate,
        **apts,
    )
    Discipline.objects.bulk_create(
        Discipline(character=character, name=n, level=lv) for n, lv in disciplines
    )
    wname, category, dmg = weapon
    Weapon.objects.create(character=character, name=wname, category=category, dmg=dmg, dmg_max=dmg)
    character.zones.exclude(name="head").update(armor_type="Leather", arm=arm, arm_max=arm)
    return Character.objects.with_sheet().get(pk=character.pk)


def make_ysolde(campaign: Any, owner: Any, **extra: Any) -> Character:
    return make_fighter(
        campaign,
        owner,
        extra.pop("name", "Ysolde Varr"),
        apts={"foc": 2, "spd": 3, "skl": 4, "vgr": 5, "nrv": 3, "chr": 2, "svy": 2},
        weight=168,  # BZF 12; VIT = 2 + 3 + 5 = 10
        itv=extra.pop("itv", 14),
        disciplines=[(weapon_discipline("III"), 3), (MELEE_COMBAT, 2)],
        weapon=("Long Sword", "III", 4),
        arm=2,
        fate=extra.pop("fate", 1),
        **extra,
    )


def make_thug(campaign: Any, gm: Any, **extra: Any) -> Character:
    return make_fighter(
        campaign,
        gm,
        extra.pop("name", "Salvager Thug"),
        apts={"foc": 1, "spd": 2, "skl": 3, "vgr": 4, "nrv": 2, "chr": 1, "svy": 2},
        weight=182,  # BZF 13; VIT = 1 + 2 + 4 = 7
        itv=extra.pop("itv", 9),
        disciplines=[(weapon_discipline("IV"), 2), (MELEE_COMBAT, 1)],
        weapon=("Hatchet", "IV", 4),
        arm=2,
        is_npc=True,
        **extra,
    )


@dataclass
class Fight:
    table: Any
    encounter: Encounter
    ysolde: Participant
    thug: Participant
    npc: Character

    def refresh(self) -> None:
        self.encounter.refresh_from_db()
        self.ysolde = Participant.objects.select_related("character").get(pk=self.ysolde.pk)
        self.thug = Participant.objects.select_related("character").get(pk=self.thug.pk)

    def zone(self, p: Participant, name: str) -> Any:
        return p.character.zones.get(name=name)

    def weapon(self, p: Participant) -> Any:
        return p.character.weapons.get()


def make_fight(table: Any) -> Fight:
    """A running encounter: Ysolde (the player's, ITV 14) acts before one hidden thug copy
    (ITV 9)."""
    ysolde = make_ysolde(table.campaign, table.player)
    npc = make_thug(table.campaign, table.gm)
    encounter, _ = combat.create_encounter(campaign=table.campaign, name="Ambush", actor=table.gm)
    combat.add_participants(encounter=encounter, characters=[ysolde], actor=table.gm)
    combat.add_npc_copies(encounter=encounter, npc=npc, count=1, actor=table.gm, hidden=True)
    combat.start_encounter(encounter=encounter, actor=table.gm)
    y = Participant.objects.get(encounter=encounter, character=ysolde)
    t = Participant.objects.get(encounter=encounter, character__name="Salvager Thug #1")
    f = Fight(table, encounter, y, t, npc)
    f.refresh()
    return f


def a_fight(campaign: Campaign, gm: Any, ysolde: Character) -> Encounter:
    """Ysolde (her player's) attacks the GM's thug and rolls: the log names her player."""
    thug = make_thug(campaign, gm)
    encounter, _ = combat.create_encounter(campaign=campaign, name="Ambush", actor=gm)
    combat.add_participants(encounter=encounter, characters=[ysolde, thug], actor=gm)
    combat.start_encounter(encounter=encounter, actor=gm)
    encounter.refresh_from_db()
    y = encounter.participants.get(character=ysolde)
    t = encounter.participants.get(character=thug)
    if encounter.turn_id != y.pk:
        return encounter
    strike(encounter, y, t, actor=ysolde.owner, defender=gm, roll=43)
    return encounter
