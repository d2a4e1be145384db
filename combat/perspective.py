"""A roll told from the reader's side: the headline of the result card and whether it is good
or bad news for them.

The same strike reads "Missed you: Mira dodged" on the defender's phone, "Your fast strike
missed" on the attacker's, and the neutral line for everyone else (the GM, a bystander, the
table display; the log keeps its own text). The headline says only what every player may read
anyway (hit or miss, the defense declared, a condition, down or knocked out): no degree, no
PvD, no damage, so it keeps a hidden NPC's numbers hidden whichever side it is on. The numbers
the reader may see stay in the card below it (combat/results.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from combat.models import CombatLogEntry

GOOD, BAD, NEUTRAL = "good", "bad", "neutral"

#: What the defender did, for "Missed you: Mira dodged".
DEFENDED = {"dodge": "dodged", "parry": "parried", "block": "blocked"}
MANEUVER_PAST = {
    "feint": "feinted",
    "disarm": "disarmed",
    "throw": "threw",
    "stun": "stunned",
    "grapple": "grappled",
    "shove": "shoved",
}


@dataclass(frozen=True)
class Reading:
    """One reader's headline for a roll, and its tone: ``good``, ``bad`` or ``neutral``."""

    line: str
    tone: str


@dataclass(frozen=True)
class Roll:
    """What a roll was, in words any player may read: who struck whom, how, and whether it
    landed. Built from the log entry and its declaration (:func:`roll_of`)."""

    attacker_pk: int | None
    target_pk: int | None
    attacker: str
    target: str
    action: str  # "fast", "precise", "mighty" or a maneuver
    defense: str  # "dodge", "parry", "block" or "" (none declared)
    landed: bool
    condition: str | None
    down: bool

    @property
    def is_maneuver(self) -> bool:
        return self.action not in ("fast", "precise", "mighty")


def roll_of(entry: CombatLogEntry, names: dict[int, str]) -> Roll | None:
    """The roll of a strike or maneuver entry (None for any other entry). ``names``: each
    participant's name by id. Reads the entry's declaration (one query, once per entry
    object: Django keeps it on the entry)."""
    if entry.kind != CombatLogEntry.Kind.ROLL or entry.declaration_id is None:
        return None
    decl = entry.declaration
    if decl is None:
        return None
    result: dict[str, Any] = entry.payload.get("result") or {}
    condition = result.get("condition")
    if "maneuver" in result:
        landed = bool(condition) and not result.get("too_heavy")
    else:
        landed = bool(result.get("hits"))
    wounds = result.get("wounds") or {}
    return Roll(
        attacker_pk=decl.attacker_id,
        target_pk=decl.target_id,
        attacker=names.get(decl.attacker_id, "?"),
        target=names.get(decl.target_id, "?"),
        action=decl.action,
        defense=decl.defense or "",
        landed=landed,
        condition=str(condition) if condition else None,
        down=bool(wounds.get("down")),
    )


def _strike_name(roll: Roll) -> str:
    return roll.action if roll.is_maneuver else f"{roll.action} strike"


def neutral(roll: Roll) -> str:
    """The line for everyone not in the roll: "Kael's fast strike hit Mira"."""
    a, t = roll.attacker, roll.target
    if roll.is_maneuver:
        if roll.landed:
            done = MANEUVER_PAST.get(roll.action, f"used {roll.action} on")
            line = f"{a} {done} {t}" + (f": {t} is {roll.condition}" if roll.condition else "")
        else:
            line = f"{a}'s {roll.action} failed against {t}"
    elif roll.landed:
        line = f"{a}'s {_strike_name(roll)} hit {t}"
    else:
        line = f"{a}'s {_strike_name(roll)} missed {t}" + _defended(roll)
    return line + (f". {t} is down" if roll.down else "")


def _defended(roll: Roll) -> str:
    return f": {roll.target} {DEFENDED[roll.defense]}" if roll.defense in DEFENDED else ""


def as_attacker(roll: Roll) -> Reading:
    """The line on the attacker's screen: "Your fast strike missed: Mira dodged"."""
    t = roll.target
    if roll.is_maneuver:
        if roll.landed:
            line = f"Your {roll.action} worked" + (
                f": {t} is {roll.condition}" if roll.condition else ""
            )
        else:
            line = f"Your {roll.action} failed against {t}"
    elif roll.landed:
        line = f"Your {_strike_name(roll)} hit {t}"
    else:
        line = f"Your {_strike_name(roll)} missed" + _defended(roll)
    return Reading(line + (f". {t} is down" if roll.down else ""), GOOD if roll.landed else BAD)


def as_defender(roll: Roll) -> Reading:
    """The line on the defender's screen: "Missed you: Mira dodged"."""
    a, t = roll.attacker, roll.target
    if roll.is_maneuver:
        if roll.landed:
            line = f"{a}'s {roll.action} worked on you" + (
                f": {t} is {roll.condition}" if roll.condition else ""
            )
        else:
            line = f"{a}'s {roll.action} failed: {t} held"
    elif roll.landed:
        line = f"Hit you: {a}'s {_strike_name(roll)} struck {t}"
    else:
        line = f"Missed you: {t} {DEFENDED[roll.defense]}" if roll.defense in DEFENDED else ""
        line = line or f"Missed you: {a}'s {_strike_name(roll)} went wide of {t}"
    return Reading(line + (f". {t} is down" if roll.down else ""), BAD if roll.landed else GOOD)


def reading(roll: Roll, mine: set[int]) -> Reading:
    """The line for a reader who controls the participants ``mine`` (a player's own
    characters; empty for the GM, who referees, and for everyone else)."""
    if roll.target_pk in mine and roll.attacker_pk not in mine:
        return as_defender(roll)
    if roll.attacker_pk in mine:
        return as_attacker(roll)
    return Reading(neutral(roll), NEUTRAL)


def stamina_reading(entry: CombatLogEntry, names: dict[int, str], mine: set[int]) -> Reading | None:
    """A Stamina test's line: "You stay conscious" for its owner, the neutral line else."""
    if entry.kind != CombatLogEntry.Kind.STAMINA or entry.participant_id is None:
        return None
    result: dict[str, Any] = entry.payload.get("result") or {}
    kept = bool(result.get("success"))
    name = names.get(entry.participant_id, "?")
    if entry.participant_id in mine:
        if kept:
            return Reading(f"Stamina test: {name} stays conscious", GOOD)
        return Reading(f"Stamina test: {name} is knocked out", BAD)
    verdict = "stays conscious" if kept else "is knocked out"
    return Reading(f"Stamina test: {name} {verdict}", NEUTRAL)
