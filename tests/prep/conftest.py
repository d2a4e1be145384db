"""A GM with the starter set, a campaign with Ysolde (a player's) and an unarmed, undisciplined
farmhand, and a prepared encounter: two hidden thugs on alert and one veteran."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client

from prep import services
from prep.models import LibraryNpc, PreparedEncounter, PreparedGroup
from sheets.models import Character
from sheets.services import create_character
from tests.factories import make_campaign, make_user, make_ysolde


@dataclass
class Prep:
    gm: Any
    player: Any
    other_player: Any
    outsider: Any
    other_gm: Any
    campaign: Any
    ysolde: Character
    farmhand: Character
    library: dict[str, LibraryNpc]
    prepared: PreparedEncounter

    def client(self, role: str) -> Client:
        client = Client()
        client.force_login(getattr(self, role))
        return client


@pytest.fixture
def prep(db: Any) -> Prep:
    gm, player, other_player, outsider, other_gm = (
        make_user(n) for n in ("gm", "player", "other_player", "outsider", "other_gm")
    )
    campaign = make_campaign(gm, players=(player, other_player), name="The Sunken Keep")
    make_campaign(other_gm, name="Elsewhere")
    ysolde = make_ysolde(campaign, player)
    farmhand = create_character(
        campaign=campaign,
        owner=other_player,
        name="Farmhand",
        weight=154,
        foc=1,
        spd=2,
        skl=1,
        vgr=3,
        nrv=1,
        chr=2,
        svy=1,
    )
    services.add_starter_set(owner=gm)
    library = {n.starter: n for n in LibraryNpc.objects.filter(owner=gm)}
    prepared = PreparedEncounter.objects.create(campaign=campaign, name="Ambush at the ford")
    prepared.expected.set([ysolde, farmhand])
    PreparedGroup.objects.create(
        prepared=prepared, npc=library["thug"], count=2, hidden=True, on_alert=True
    )
    PreparedGroup.objects.create(prepared=prepared, npc=library["veteran"], count=1)
    return Prep(
        gm=gm,
        player=player,
        other_player=other_player,
        outsider=outsider,
        other_gm=other_gm,
        campaign=campaign,
        ysolde=ysolde,
        farmhand=farmhand,
        library=library,
        prepared=prepared,
    )
