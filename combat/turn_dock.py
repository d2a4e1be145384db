"""The player's turn on the phone: when the turn comes to one of their characters, a dock at
the bottom of the screen (like the defense dock) with its strike choices and their PRO, and the
targets to strike at; one turn before, "You're next".

Drawn from the tracker's rows (combat/tracker.py's ``Row``), for the page of the player (their
own characters, ``row.mine``) and for the players' shared live render (``row.controller``:
drawn for that player, with ``data-owner``, and static/js/live.js keeps the viewer's own). The
GM has the cockpit's declare form instead. The server checks the declaration anyway.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rules.engine import odds, omg
from rules.engine.omg_data import MELEE_COMBAT, weapon_discipline
from sheets.numbers import DEFENSE_MODES, STRIKE_MODES, aptitudes_of

STRIKE_LABELS = {"fast": "Fast", "precise": "Precise", "mighty": "Mighty"}


@dataclass(frozen=True)
class StrikeChoice:
    mode: str
    label: str
    apt: str
    pro: int


@dataclass(frozen=True)
class TurnDock:
    row: Any  # the acting character's row
    owner: int | None  # the player, in the shared render (None on their own page)
    targets: list[Any]  # rows that may be struck, the GM's characters first
    weapon: Any | None  # the first weapon in hand, struck with
    strikes: list[StrikeChoice]
    #: Each target's chance (in %) that each strike hits against its best defense, for the
    #: targets whose numbers the viewer may see: ``{target id: {mode: %}}``.
    chances: dict[int, dict[str, int]]

    @property
    def chances_json(self) -> str:
        return json.dumps(self.chances)

    @property
    def first_chances(self) -> dict[str, int]:
        first = self.targets[0].p.pk if self.targets else None
        return self.chances.get(first, {}) if first is not None else {}

    @property
    def strike_rows(self) -> list[tuple[StrikeChoice, int | None]]:
        """Each strike with its chance against the first target (None: hidden numbers)."""
        first = self.first_chances
        return [(s, first.get(s.mode)) for s in self.strikes]


def strike_choices(row: Any, weapon: Any | None) -> list[StrikeChoice]:
    """Each strike mode's PRO with ``weapon`` (its discipline's level; none unarmed)."""
    character = row.p.character
    values = aptitudes_of(character).as_dict()
    level = 0
    if weapon is not None:
        discipline = weapon_discipline(weapon.category)
        level = next((d.level for d in character.disciplines.all() if d.name == discipline), 0)
    return [
        StrikeChoice(mode, STRIKE_LABELS[mode], apt, omg.strike_pro(mode, values[apt], level))
        for mode, apt in STRIKE_MODES
    ]


def hit_chances(strikes: list[StrikeChoice], targets: list[Any]) -> dict[int, dict[str, int]]:
    """Per target whose numbers are shown (``row.show``), the chance of each strike against
    its best defense (the lowest: the defender picks it), from the exact odds of the PvD
    (docs/rules.md, "Exact odds"). A hidden NPC's DIFs are its numbers: it gets none."""
    found: dict[int, dict[str, int]] = {}
    for t in targets:
        if not t.show:
            continue
        character = t.p.character
        values = aptitudes_of(character).as_dict()
        melee = next((d.level for d in character.disciplines.all() if d.name == MELEE_COMBAT), 0)
        difs = [omg.defense_dif(m, values[apt], melee) for m, apt in DEFENSE_MODES]
        found[t.p.pk] = {
            s.mode: min(odds.check_odds(s.pro, dif).hits for dif in difs) for s in strikes
        }
    return found


def _owner(row: Any, shared: bool) -> int | None | bool:
    """Whose dock this row's would be: the viewer's (None), a player's in the shared render
    (their id), or nobody's (False)."""
    if shared:
        return row.controller if row.controller is not None else False
    return None if row.mine else False


def docks(
    rows: list[Any], *, shared: bool, is_gm: bool, running: bool, declared: set[int]
) -> dict[str, Any]:
    """``{"dock": TurnDock | None, "next": (owner, row) | None}`` for this render. No dock
    once the acting character's attack is declared (``declared``: attackers with an open
    attack): the attack itself, with its odds, takes its place."""
    empty: dict[str, Any] = {"dock": None, "next": None}
    if is_gm or not running:
        return empty
    acting = next((r for r in rows if r.is_turn), None)
    if acting is None:
        return empty
    found = dict(empty)
    owner = _owner(acting, shared)
    if owner is not False and acting.show and acting.p.can_act and acting.p.pk not in declared:
        weapon = None if acting.p.disarmed else next(iter(acting.weapons), None)
        targets = [r for r in rows if r.p.pk != acting.p.pk and r.p.can_defend]
        targets.sort(key=lambda r: not r.p.character.is_npc)
        strikes = strike_choices(acting, weapon)
        chances = hit_chances(strikes, targets)
        found["dock"] = TurnDock(acting, owner, targets, weapon, strikes, chances)
    # The next one to act after this turn (skipping those who cannot act, as next turn does).
    at = rows.index(acting)
    after = [r for r in rows[at + 1 :] + rows[:at] if r.p.can_act]
    upcoming = after[0] if after else None
    if upcoming is not None:
        next_owner = _owner(upcoming, shared)
        if next_owner is not False:
            found["next"] = (next_owner, upcoming)
    return found
