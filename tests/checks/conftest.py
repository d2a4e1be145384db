"""The table for the checks tests: the Sunken Keep's GM, Ysolde's player (owner) and Bram's
(player). Ysolde: SKL 4, SPD 3, NRV 3, VGR 5; Lock-picking 3 (with SKL), Athletics 5 (with SPD)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import pytest

from sheets.models import Campaign, Character, Discipline
from sheets.services import create_character
from tests.factories import make_campaign, make_user


@dataclass
class Table:
    gm: Any
    owner: Any
    player: Any
    outsider: Any
    campaign: Campaign
    ysolde: Character
    bram: Character

    def fresh(self, character: Character) -> Character:
        return Character.objects.get(pk=character.pk)


def make_table() -> Table:
    gm, owner, player, outsider = (make_user(n) for n in ("gm", "owner", "player", "outsider"))
    campaign = make_campaign(gm, players=(owner, player), name="The Sunken Keep")
    ysolde = create_character(
        campaign=campaign,
        owner=owner,
        name="Ysolde Varr",
        foc=2,
        spd=3,
        skl=4,
        vgr=5,
        nrv=3,
        chr=2,
        svy=2,
        fate=2,
    )
    Discipline.objects.create(character=ysolde, name="Lock-picking", level=3, aptitude="SKL")
    Discipline.objects.create(character=ysolde, name="Athletics", level=5, aptitude="SPD")
    bram = create_character(campaign=campaign, owner=player, name="Bram", fate=1)
    Discipline.objects.create(character=bram, name="Athletics", level=2, aptitude="VGR")
    return Table(gm, owner, player, outsider, campaign, ysolde, bram)


@pytest.fixture
def table(db: Any) -> Table:
    return make_table()


@pytest.fixture
def rng() -> random.Random:
    return random.Random(7)
