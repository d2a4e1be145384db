"""A whole strike in one call (declare, defend, roll) for table dice: the GM's NPCs and
integrations that resolve an attack where both sides are theirs to play."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied
from django.db import transaction

from combat.models import CombatLogEntry, Declaration, Encounter, Participant
from combat.services.attacks import declaration_rows, declare, defend
from combat.services.resolution import apply_roll, roll_value
from combat.services.rows import CombatError, pk_of
from sheets.models import BodyZone, Weapon

if TYPE_CHECKING:
    # Whoever acts, signed in or not (the services refuse the latter themselves).
    from sheets.users import AnyUser as User


def strike(
    *,
    encounter: Encounter | int,
    attacker: Participant | int,
    target: Participant | int,
    action: str,
    actor: User,
    zone: BodyZone | int | None = None,
    weapon: Weapon | int | None = None,
    counterattack: bool = False,
    defense: str | None = None,
    roll: int | None = None,
    rng: random.Random | None = None,
) -> tuple[Declaration, list[CombatLogEntry]]:
    """:func:`~combat.services.declare_attack`, :func:`~combat.services.declare_defense`
    (none for a feint, met with Focus) and :func:`~combat.services.resolve` in one
    transaction, with the same checks in the same order, writing the same log entries: all
    of it or nothing. The defense is the target's controller's choice, so ``actor`` must
    control both sides (the GM controls everyone): PermissionDenied otherwise. Rows or ids,
    as for declare_attack. Returns the declaration and its entries."""
    value, physical = roll_value(roll, rng)
    with transaction.atomic():
        rows = declaration_rows(
            encounter, pk_of(attacker), pk_of(target), actor, zone=pk_of(zone), weapon=pk_of(weapon)
        )
        a, t = rows.participants.get(pk_of(attacker)), rows.participants.get(pk_of(target))
        # Checked after the attacker's own (declare: 403 for someone else's attacker).
        mine = a is not None and a.is_controlled_by(actor)
        if mine and t is not None and not t.is_controlled_by(actor):
            raise PermissionDenied(
                "The defense is the target's controller's choice: strike in one call only "
                "when you control both sides."
            )
        decl, declared = declare(
            rows,
            attacker=pk_of(attacker),
            target=pk_of(target),
            action=action,
            actor=actor,
            zone=pk_of(zone),
            weapon=pk_of(weapon),
            counterattack=counterattack,
        )
        entries = [declared]
        if decl.needs_defense:
            entries.append(defend(rows, decl, defense=defense or "", actor=actor))
        elif defense:
            raise CombatError("A feint is met with Focus, not a defense mode.")
        entries.append(apply_roll(rows, decl, value=value, physical=physical, actor=actor))
    return decl, entries
