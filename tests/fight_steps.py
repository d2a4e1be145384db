"""The common steps of a fight, through the same services the pages and the API call.

An attack is declared, then defended, then rolled: most combat tests need the first two or
all three before they come to what they are about. The zone is named (it is looked up on the
target's sheet) and the weapon is the attacker's own unless one is given.
"""

from __future__ import annotations

from typing import Any

from combat import services
from combat.models import CombatLogEntry, Declaration, Encounter, Participant
from sheets.models import BodyZone


def declare(
    encounter: Encounter,
    attacker: Participant,
    target: Participant,
    *,
    actor: Any,
    action: str = "mighty",
    zone: str | BodyZone = "chest",
    **extra: Any,
) -> Declaration:
    """The attacker's attack on the target's ``zone``, waiting for its defense."""
    if isinstance(zone, str):
        zone = target.character.zones.get(name=zone)
    extra.setdefault("weapon", attacker.character.weapons.get())
    decl, _ = services.declare_attack(
        encounter=encounter,
        attacker=attacker,
        target=target,
        action=action,
        zone=zone,
        actor=actor,
        **extra,
    )
    return decl


def declare_and_defend(
    encounter: Encounter,
    attacker: Participant,
    target: Participant,
    *,
    actor: Any,
    defender: Any,
    defense: str = "parry",
    **declared: Any,
) -> Declaration:
    """The attack declared by ``actor`` and defended (``defense``) by ``defender``: ready to
    roll."""
    decl = declare(encounter, attacker, target, actor=actor, **declared)
    services.declare_defense(declaration=decl, defense=defense, actor=defender)
    return decl


def strike(
    encounter: Encounter,
    attacker: Participant,
    target: Participant,
    *,
    actor: Any,
    defender: Any,
    roll: int,
    defense: str = "parry",
    **declared: Any,
) -> CombatLogEntry:
    """A whole strike: declared, defended, and rolled (``roll`` on the d100) by ``actor``."""
    decl = declare_and_defend(
        encounter, attacker, target, actor=actor, defender=defender, defense=defense, **declared
    )
    return services.resolve(declaration=decl, roll=roll, actor=actor)
