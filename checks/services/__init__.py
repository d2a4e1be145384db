"""Checks outside combat: roll one, spend Fate on the latest, undo the latest, reveal a secret
one, call for checks and answer a call, spend or restore Mana and Chi.

Every function is keyword-only and checks access itself with checks/access.py's rules (the
pages and the API call the same ones): outsiders get Http404, members who may not act
PermissionDenied, bad input ValidationError naming the field, and a state that forbids the
action CheckConflict. Nothing is stored when any of them is raised. The readings of the rules
are in docs/rules.md, "Checks outside combat".

One module per job:

- ``targets``: what a check rolls (``Target``, ``parse_target``, ``parse_roll``) and the
  engine's check for a sheet (``spec_for``);
- ``locking``: the campaign's lock and sequence, ``CheckConflict``, the sheet's changes a
  roll makes and takes back, locked in the sheets' one order;
- ``rolling``: a roll from the sheet, the latest roll, the GM's reveal;
- ``fate``: Fate (re-roll, revoke) and the GM's undo;
- ``calls``: the GM's calls, a player's answer, closing a call, the prompts waiting;
- ``resources``: Mana and Chi.

Callers use the package (``from checks import services; services.roll_check(...)``); the
names are re-exported here.
"""

from __future__ import annotations

from checks.services.calls import answer, call_checks, close_call, pending_requests
from checks.services.fate import fate_spenders, spend_fate, undo_latest
from checks.services.locking import MAX_FATE, CheckConflict
from checks.services.resources import change_resource
from checks.services.rolling import latest, reveal, roll_check
from checks.services.targets import (
    COMPOSITE_ABBRS,
    Target,
    parse_roll,
    parse_target,
    spec_for,
    target_of,
)

__all__ = [
    "COMPOSITE_ABBRS",
    "MAX_FATE",
    "CheckConflict",
    "Target",
    "answer",
    "call_checks",
    "change_resource",
    "close_call",
    "fate_spenders",
    "latest",
    "parse_roll",
    "parse_target",
    "pending_requests",
    "reveal",
    "roll_check",
    "spec_for",
    "spend_fate",
    "target_of",
    "undo_latest",
]
