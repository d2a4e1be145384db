"""Combat workflows shared by the pages and the API: one transaction each, one log entry each.

Every function is keyword-only, checks who may do it (``PermissionDenied``), refuses what the
state of the fight does not allow (``CombatError``, or ``CombatConflict`` when someone else got
there first), and returns the :class:`~combat.models.CombatLogEntry` it wrote; the entry is
handed to :mod:`combat.events` once the transaction commits.

One module per step of a fight:

- ``rows``: the one way into a fight's rows (``lock``, ``lock_declaration``: the access
  check and the lock order), recording each change (``Changes``), writing the log entry
  (``log``), the errors and the permission checks (``Rows``);
- ``preparation``: the encounter, its participants and NPC copies, a participant's state;
- ``turns``: start, initiative, next turn, giving the turn, finish, delete;
- ``attacks``: declarations (attack, defense, cancel) and their PvD and odds;
- ``resolution``: the roll, wounds, maneuvers, Stamina tests, the GM's damage and healing;
- ``strike``: a whole strike (declare, defend, roll) in one call;
- ``fate``: undo and Fate (latest roll, re-roll, revoke);
- ``timer``: the turn timer the GM may switch on (it only shows).

Callers use the package (``from combat import services; services.resolve(...)``); the names
are re-exported here.
"""

from __future__ import annotations

from combat.services.attacks import (
    Setup,
    cancel_declaration,
    declaration_odds,
    declare_attack,
    declare_defense,
    odds_for_viewer,
    setup,
)
from combat.services.fate import (
    fate_spenders,
    latest_roll,
    spend_fate,
    undo_last,
    undo_target,
)
from combat.services.preparation import (
    MAX_COPIES,
    add_condition,
    add_npc_copies,
    add_participants,
    copy_name,
    create_encounter,
    remove_condition,
    update_participant,
)
from combat.services.resolution import STAMINA_DIF, adjust_zone, resolve, stamina_check
from combat.services.rows import (
    LABELS,
    Changes,
    CombatConflict,
    CombatError,
    Kind,
    Rows,
)
from combat.services.strike import strike
from combat.services.timer import set_turn_timer
from combat.services.turns import (
    SeenTurn,
    delete_encounter,
    finish_encounter,
    next_turn,
    roll_initiative,
    set_turn,
    start_encounter,
)

__all__ = [
    "LABELS",
    "MAX_COPIES",
    "STAMINA_DIF",
    "Changes",
    "CombatConflict",
    "CombatError",
    "Kind",
    "Rows",
    "SeenTurn",
    "Setup",
    "add_condition",
    "add_npc_copies",
    "add_participants",
    "adjust_zone",
    "cancel_declaration",
    "copy_name",
    "create_encounter",
    "declaration_odds",
    "declare_attack",
    "declare_defense",
    "delete_encounter",
    "fate_spenders",
    "finish_encounter",
    "latest_roll",
    "next_turn",
    "odds_for_viewer",
    "remove_condition",
    "resolve",
    "roll_initiative",
    "set_turn",
    "set_turn_timer",
    "setup",
    "spend_fate",
    "stamina_check",
    "start_encounter",
    "strike",
    "undo_last",
    "undo_target",
    "update_participant",
]
