"""The result card the tracker shows after a roll: what happened, said for one viewer.

Everyone reads the log's text as they may (the public text when a hidden participant is
involved). On top of that, whoever was involved sees the degree and the hits of the roll, and
every change it made to their own characters: wounds per zone, Vitality, armor and weapon wear.
Changes to a hidden participant's rows are never listed for a player (docs/security.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from combat import perspective
from combat.models import CombatLogEntry, Participant
from combat.outcome import AttackOutcome

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

SHEET_ROWS = ("zone", "weapon", "discipline")


@dataclass
class ResultCard:
    entry: CombatLogEntry
    text: str
    degree: str | None = None
    success: bool | None = None
    hits: int | None = None
    changes: list[str] = field(default_factory=list)
    #: The headline for this reader, and whether it is good or bad news for them.
    reading: perspective.Reading | None = None
    #: In the players' shared render (one render for all, static/js/live.js keeps each
    #: player's own): the headline for each player in the roll, by user id.
    owned: list[tuple[int, perspective.Reading]] = field(default_factory=list)

    @property
    def tone(self) -> str:
        return self.reading.tone if self.reading else perspective.NEUTRAL

    @property
    def owners(self) -> str:
        """The players who read their own headline instead of the neutral one."""
        return " ".join(str(owner) for owner, _ in self.owned)


def _owner_of(item: dict[str, Any]) -> int | None:
    if item.get("model") == "character":
        return int(item["pk"])
    if item.get("model") in SHEET_ROWS:
        return int(item["char"]) if item.get("char") is not None else None
    return None


def _describe(item: dict[str, Any], names: dict[tuple[str, int], str]) -> str | None:
    model, field_name = item["model"], item["field"]
    what = names.get((model, int(item["pk"])), model)
    before, after = item["before"], item["after"]
    if model == "zone" and field_name == "wounds":
        return f"{what}: wounds {before} → {after}"
    if model == "zone" and field_name == "arm":
        return f"{what}: armor {before} → {after}"
    if model == "zone" and field_name == "grievous" and after:
        return f"{what}: grievous wound, Stamina test"
    if model == "weapon" and field_name == "dmg":
        return f"{what}: DMG {before} → {after}"
    if model == "character" and field_name == "vitality":
        return f"{what}: Vitality {before} → {after}"
    if model == "character" and field_name == "fate":
        return f"{what}: Fate {before} → {after}"
    if model == "discipline" and field_name == "exp_marks":
        return f"{what}: EXP mark"
    return None


def result_card(
    entry: CombatLogEntry | None,
    user: User | AnonymousUser,
    hidden: set[int],
    participants: list[Participant],
    *,
    is_gm: bool,
) -> ResultCard | None:
    """The card for the latest entry when it is a roll (None otherwise). ``participants``
    come with their characters, zones and weapons loaded (the encounter page has them). A
    Stamina test has a card too.

    Its headline is told from the reader's side (combat/perspective.py): their own
    characters' (none for the GM, who referees). An anonymous ``user`` is the players' shared
    render: it gets the neutral headline, and each player in the roll their own in ``owned``."""
    if entry is None or entry.kind not in (CombatLogEntry.Kind.ROLL, CombatLogEntry.Kind.STAMINA):
        return None
    involves = set(entry.involves)
    sees_all = not entry.hides_numbers(hidden)
    own = {
        p.character_id
        for p in participants
        if is_gm or (user.is_authenticated and p.character.owner_id == user.pk)
    }
    involved = sees_all or any(p.pk in involves and p.character_id in own for p in participants)
    card = ResultCard(entry=entry, text=entry.text_for(user, hidden))
    _tell(card, user, participants, is_gm=is_gm)
    outcome = entry.outcome
    if involved and outcome is not None:
        card.degree = outcome.degree.label
        card.success = outcome.success
        card.hits = len(outcome.hits) if isinstance(outcome, AttackOutcome) else 0
    names: dict[tuple[str, int], str] = {}
    for p in participants:
        c = p.character
        names["character", c.pk] = c.name
        for z in c.zones.all():
            names["zone", z.pk] = f"{c.name}'s {z.name}"
        for w in c.weapons.all():
            names["weapon", w.pk] = f"{c.name}'s {w.name}"
        for d in c.disciplines.all():
            names["discipline", d.pk] = f"{c.name}'s {d.name}"
    hidden_characters = {p.character_id for p in participants if p.pk in hidden}
    for item in entry.changes:
        owner = _owner_of(item)
        if owner is None or owner in hidden_characters:
            continue
        if not (sees_all or owner in own):
            continue
        line = _describe(item, names)
        if line is not None:
            card.changes.append(line)
    return card


def _tell(
    card: ResultCard,
    user: User | AnonymousUser,
    participants: list[Participant],
    *,
    is_gm: bool,
) -> None:
    entry = card.entry
    names = {p.pk: p.name for p in participants}

    def read(mine: set[int]) -> perspective.Reading | None:
        roll = perspective.roll_of(entry, names)
        if roll is not None:
            return perspective.reading(roll, mine)
        return perspective.stamina_reading(entry, names, mine)

    if is_gm:
        card.reading = read(set())
        return
    if user.is_authenticated:
        card.reading = read({p.pk for p in participants if p.character.owner_id == user.pk})
        return
    card.reading = read(set())
    gm_id = participants[0].encounter.campaign.gm_id if participants else None
    involves = set(entry.involves)
    owners = sorted(
        {
            p.character.owner_id
            for p in participants
            if p.pk in involves and p.character.owner_id != gm_id
        }
    )
    for owner in owners:
        own = read({p.pk for p in participants if p.character.owner_id == owner})
        if own is not None and card.reading is not None and own != card.reading:
            card.owned.append((owner, own))
