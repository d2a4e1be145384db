"""The demo table's prepared encounter (part of `manage.py demo`; idempotent by name)."""

from __future__ import annotations

from typing import Any

from combat import services
from combat.models import Encounter
from sheets.models import Campaign, Character

DEMO_ENCOUNTER = "Ambush on the causeway"


def load_demo_encounter(*, campaign: Campaign, users: dict[str, Any]) -> None:
    """A fight ready to start: the players' characters against two salvager thugs whose numbers
    the GM keeps hidden. Left alone once it exists, whatever happened in it since."""
    if Encounter.objects.filter(campaign=campaign, name=DEMO_ENCOUNTER).exists():
        return
    gm = users["gm"]
    encounter, _ = services.create_encounter(campaign=campaign, name=DEMO_ENCOUNTER, actor=gm)
    heroes = list(Character.objects.filter(campaign=campaign, is_npc=False).order_by("pk"))
    services.add_participants(encounter=encounter, characters=heroes, actor=gm)
    thug = Character.objects.filter(campaign=campaign, is_npc=True, name="Salvager Thug").first()
    if thug is not None:
        services.add_npc_copies(encounter=encounter, npc=thug, count=2, actor=gm, hidden=True)
