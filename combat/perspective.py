"""A roll told from the reader's side: the log's text for the GM and its public text for the
players (written when the roll is made), the headline of the result card and whether it is good
or bad news for its reader. Every sentence about a roll's outcome (combat/outcome.py) is
written here.

The same strike reads "Missed you: Mira dodged" on the defender's phone, "Your fast strike
missed" on the attacker's, and the neutral line for everyone else (the GM, a bystander, the
table display; the log keeps its own text). The headline says only what every player may read
anyway (hit or miss, the defense declared, a condition, down or knocked out): no degree, no
PvD, no damage, so it keeps a hidden NPC's numbers hidden whichever side it is on. The numbers
the reader may see stay in the card below it (combat/results.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from combat.models import CombatLogEntry
from combat.outcome import AttackOutcome, ManeuverOutcome, StaminaOutcome, StrikeOutcome, Wounds
from rules.engine import omg

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
    outcome = entry.outcome
    landed = isinstance(outcome, AttackOutcome) and outcome.landed
    condition = outcome.condition if isinstance(outcome, ManeuverOutcome) else None
    return Roll(
        attacker_pk=decl.attacker_id,
        target_pk=decl.target_id,
        attacker=names.get(decl.attacker_id, "?"),
        target=names.get(decl.target_id, "?"),
        action=decl.action,
        defense=decl.defense or "",
        landed=landed,
        condition=condition,
        down=isinstance(outcome, AttackOutcome) and outcome.down,
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
    outcome = entry.outcome
    kept = isinstance(outcome, StaminaOutcome) and outcome.success
    name = names.get(entry.participant_id, "?")
    if entry.participant_id in mine:
        if kept:
            return Reading(f"Stamina test: {name} stays conscious", GOOD)
        return Reading(f"Stamina test: {name} is knocked out", BAD)
    verdict = "stays conscious" if kept else "is knocked out"
    return Reading(f"Stamina test: {name} {verdict}", NEUTRAL)


@dataclass(frozen=True)
class Scene:
    """A strike or maneuver as the log tells it when it is rolled, in names: what its outcome
    does not hold. ``weapon`` is the attacker's weapon in hand (the one worn), ``disarmed_of``
    the declared weapon no longer in hand (docs/rules.md, "Disarm"), ``feinted`` whether a
    feint left the target no Melee defense, ``target_declared_with`` the weapon of an attack
    the target has already declared (which a disarm leaves to be made without it)."""

    attacker: str
    target: str
    action: str
    defense: str
    zone: str | None = None
    weapon: str | None = None
    disarmed_of: str | None = None
    feinted: bool = False
    target_declared_with: str | None = None


def degree_label(outcome: StaminaOutcome | AttackOutcome) -> str:
    """ "Dramatic success (DrS)"."""
    return outcome.degree.label + (f" ({outcome.abbr})" if outcome.abbr else "")


def log_texts(outcome: AttackOutcome, scene: Scene) -> tuple[str, str]:
    """The log's text of a strike or maneuver for the GM (every number), and for the players
    when a hidden participant is in it (who, what, and whether it worked)."""
    if isinstance(outcome, StrikeOutcome):
        return _strike_texts(outcome, scene)
    assert isinstance(outcome, ManeuverOutcome)  # an attack is a strike or a maneuver
    return _maneuver_texts(outcome, scene)


def _without(scene: Scene) -> str:
    return f", without {scene.disarmed_of} (disarmed)" if scene.disarmed_of else ""


def _strike_texts(r: StrikeOutcome, scene: Scene) -> tuple[str, str]:
    a, t = scene.attacker, scene.target
    where = f"'s {scene.zone}" if scene.zone else ""
    parts = [f"{a} {scene.action} strike at {t}{where}{_without(scene)} vs {scene.defense}"]
    parts.append(f"{r.pvd}, rolled {r.roll}: {degree_label(r)}.")
    if r.hits:
        dmg = " + ".join(str(h.damage) for h in r.hits)
        parts.append(f"{len(r.hits)} hit{'s' if len(r.hits) > 1 else ''}, {dmg} damage.")
        w = r.wounds
        if w is not None and w.vit_loss:
            parts.append(f"{t} loses {w.vit_loss} Vitality.")
        if w is not None and w.grievous:
            parts.append("Grievous wound: Stamina test!")
        if w is not None and w.down:
            parts.append(f"{t} is down.")
    if r.armor_wear:
        parts.append("Armor destroyed." if r.armor_destroyed else "Armor worn by 1.")
    if r.weapon_wear:
        weapon = scene.weapon
        parts.append(f"{weapon} destroyed." if r.weapon_destroyed else f"{weapon} loses 1 DMG.")
    if r.counterattack:
        parts.append(f"{t} gains a counterattack.")
    if scene.feinted:
        parts.append("The feint left no Melee defense.")
    public = f"{a} {scene.action} strike at {t}{where}: " + ("hit." if r.hits else "miss.")
    return " ".join(parts), public


def _maneuver_texts(m: ManeuverOutcome, scene: Scene) -> tuple[str, str]:
    a, t = scene.attacker, scene.target
    feint = m.maneuver == omg.Maneuver.FEINT.value
    against = "Focus" if feint else scene.defense
    text = f"{a} tries to {m.maneuver} {t}{_without(scene)} vs {against}, {m.pvd}, "
    text += f"rolled {m.roll}: {degree_label(m)}."
    if m.too_heavy:
        text += f" {t} is too heavy: no effect."
    elif m.condition is not None:
        text += f" {t} is {m.condition}."
        if m.hits:
            text += f" {m.hits[0].damage} damage; Stamina test!"
        if m.shove_yards:
            text += f" Shoved {m.shove_yards} yd."
        if m.condition == omg.Condition.DISARMED.value and scene.target_declared_with:
            text += f" {t}'s attack already declared goes on without {scene.target_declared_with}."
    if m.weapon_wear:
        weapon = scene.weapon
        text += f" {weapon} destroyed." if m.weapon_destroyed else f" {weapon} loses 1 DMG."
    if m.counterattack:
        text += f" {t} gains a counterattack."
    if scene.feinted:
        text += " The feint left no Melee defense."
    done = f"{t} is {m.condition}." if m.condition else "no effect."
    return text, f"{a} tries to {m.maneuver} {t}: {done}"


def stamina_dif_label(dif: int) -> str:
    """``"Ambitious 30"``, or ``"DIF 25"`` between the GM's categories."""
    name = omg.difficulty_category(dif)
    return f"{name} {dif}" if name else f"DIF {dif}"


def stamina_texts(name: str, outcome: StaminaOutcome) -> tuple[str, str]:
    """A Stamina test's log text, and its public text (without the PvD and the roll)."""
    verdict = "stays conscious" if outcome.success else "is knocked out"
    against = stamina_dif_label(outcome.dif)
    text = f"{name}'s Stamina test against {against}, {outcome.pvd}, rolled {outcome.roll}: "
    return text + f"{verdict}.", f"{name}'s Stamina test against {against}: {verdict}."


def damage_texts(name: str, zone: str, amount: int, wounds: Wounds) -> tuple[str, str]:
    """The GM's damage to a zone: the log's text and the public one."""
    text = f"GM: {amount} damage to {name}'s {zone}"
    text += f", {wounds.vit_loss} Vitality lost." if wounds.vit_loss else "."
    return text, f"GM: {name}'s {zone} wounded."


def healing_texts(name: str, zone: str, healed: int, vit_gain: int) -> tuple[str, str]:
    """The GM's healing of a zone: the log's text and the public one."""
    text = f"GM: {name}'s {zone} healed by {healed}"
    text += f", {vit_gain} Vitality back." if vit_gain else "."
    return text, f"GM: {name}'s {zone} healed."
