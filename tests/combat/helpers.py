"""What the combat tests share (the fight builders are in tests/factories.py, its steps in
tests/fight_steps.py): a fight's whole state to compare, and what the live layer was sent."""

from __future__ import annotations

import asyncio
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from combat.models import Declaration, Encounter, Participant
from live import pusher
from sheets.models import BodyZone, Character, Discipline, Weapon


def snapshot(encounter: Encounter) -> dict[str, Any]:
    """Everything a fight can change (sheet versions aside: they only ever count up)."""
    chars = list(
        Participant.objects.filter(encounter=encounter).values_list("character", flat=True)
    )
    return {
        "encounter": Encounter.objects.filter(pk=encounter.pk)
        .values("status", "round", "turn_id", "countering")
        .get(),
        "participants": list(
            Participant.objects.filter(encounter=encounter)
            .order_by("pk")
            .values(
                "state",
                "conditions",
                "counterattacks",
                "stamina_due",
                "position",
                "initiative",
                "itv",
                "hidden",
                "on_alert",
            )
        ),
        "open": list(
            Declaration.objects.filter(encounter=encounter)
            .exclude(status="cancelled")
            .values("pk", "status", "defense")
        ),
        "characters": list(
            Character.objects.filter(pk__in=chars)
            .order_by("pk")
            .values("vitality", "fate", "exp_marks", "itv")
        ),
        "zones": list(
            BodyZone.objects.filter(character__in=chars)
            .order_by("pk")
            .values("wounds", "arm", "grievous")
        ),
        "weapons": list(Weapon.objects.filter(character__in=chars).order_by("pk").values("dmg")),
        "disciplines": list(
            Discipline.objects.filter(character__in=chars).order_by("pk").values("exp_marks")
        ),
    }


def received(channel: str) -> list[dict]:
    """Every message the channel layer holds for ``channel``, once the pushes went out: read
    until none comes for 0.2 s."""
    layer = get_channel_layer()
    assert pusher.flush_pushes()  # pushes go out off the request's thread

    async def drain() -> list[dict]:
        out = []
        while True:
            try:
                out.append(await asyncio.wait_for(layer.receive(channel), 0.2))
            except TimeoutError:
                return out

    return async_to_sync(drain)()
