"""The table the tests sit at: one campaign with every role around it. It is the ``table``
fixture everywhere (tests/conftest.py); a folder that needs more at it extends it (the checks'
``table`` adds Ysolde and Bram), never replaces it."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from sheets.models import Campaign, Character, Discipline, Membership
from sheets.services import create_character
from tests.factories import make_campaign, make_user


@dataclass
class Table:
    """One campaign with every role around it."""

    campaign: Any
    gm: Any
    player: Any
    outsider: Any
    other_gm: Any


def make_table() -> Table:
    gm = make_user("gm")
    player = make_user("player")
    outsider = make_user("outsider")
    other_gm = make_user("other_gm")
    campaign = make_campaign(gm, players=(player,), name="The Sunken Keep")
    make_campaign(other_gm, name="Elsewhere")
    return Table(campaign=campaign, gm=gm, player=player, outsider=outsider, other_gm=other_gm)


@dataclass
class ChecksTable(Table):
    """The table with two sheets at it: Ysolde, her player ``owner``'s, and Bram, ``player``'s.
    Ysolde: SKL 4, SPD 3, NRV 3, VGR 5; Lock-picking 3 (with SKL), Athletics 5 (with SPD)."""

    owner: Any
    ysolde: Character
    bram: Character

    def fresh(self, character: Character) -> Character:
        return Character.objects.get(pk=character.pk)


def make_checks_table(table: Table | None = None) -> ChecksTable:
    """``table`` (a new one when None) with Ysolde's player and the two sheets added."""
    table = table or make_table()
    campaign: Campaign = table.campaign
    owner = make_user("owner")
    Membership.objects.create(campaign=campaign, user=owner)
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
    bram = create_character(campaign=campaign, owner=table.player, name="Bram", fate=1)
    Discipline.objects.create(character=bram, name="Athletics", level=2, aptitude="VGR")
    base = {f.name: getattr(table, f.name) for f in fields(Table)}
    return ChecksTable(**base, owner=owner, ysolde=ysolde, bram=bram)
