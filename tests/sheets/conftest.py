from __future__ import annotations

from typing import Any

import pytest

from combat import services as combat
from combat.models import Encounter
from rules.engine.omg_data import MELEE_COMBAT, weapon_discipline
from sheets import services
from sheets.models import Campaign, Character, Discipline, Weapon
from tests.combat.conftest import make_thug


@pytest.fixture
def hero(table) -> Character:
    """The seed's worked example: Speed 3, Skill 4, Vigor 5, a sword skill 3, Melee Combat 2;
    168 lb, so BZF 12. Maxima: VIT 9, MNA 8, CHI 14 (and full)."""
    character = services.create_character(
        campaign=table.campaign,
        owner=table.player,
        name="Ysolde",
        spd=3,
        skl=4,
        vgr=5,
        foc=2,
        nrv=2,
        chr=2,
        svy=2,
        weight=168,
    )
    Discipline.objects.create(
        character=character, name=weapon_discipline("III"), level=3, aptitude="SKL"
    )
    Discipline.objects.create(character=character, name=MELEE_COMBAT, level=2, aptitude="SKL")
    Weapon.objects.create(character=character, name="Long Sword", category="III", dmg=4, dmg_max=4)
    return character


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
    decl, _ = combat.declare_attack(
        encounter=encounter,
        attacker=y,
        target=t,
        action="mighty",
        zone=thug.zones.get(name="chest"),
        weapon=ysolde.weapons.get(),
        actor=ysolde.owner,
    )
    combat.declare_defense(declaration=decl, defense="parry", actor=gm)
    combat.resolve(declaration=decl, roll=43, actor=ysolde.owner)
    return encounter
