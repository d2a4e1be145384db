from __future__ import annotations

import pytest

from rules.engine.omg_data import MELEE_COMBAT, weapon_discipline
from sheets import services
from sheets.models import Character, Discipline, Weapon


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
