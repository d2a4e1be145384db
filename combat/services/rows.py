"""The rows of a fight's actions: how every combat service gets in (:func:`lock`,
:func:`lock_declaration`), records its changes (:class:`Changes`) and logs them (:func:`log`).

Every action comes in the same way, whether it was given rows or ids (the pages pass rows,
the API ids: only the pk is used): :func:`lock` or :func:`lock_declaration` locks the
encounter and admits its campaign's GM or players only (``Campaign.is_member``, built on
``sheets.models.member_or_gm``, the one "GM or member" rule), so an outsider's action is
``Encounter.DoesNotExist`` or ``Declaration.DoesNotExist`` (a 404), however the caller found
the row. Who may do what inside the fight is then :class:`Rows`' checks (``require_gm``,
``require_control``).

Locks are always taken in one order:

1. the encounter row, in the action's first statement: every action of a fight takes it, so
   it serialises them, and every later statement starts once it is held and reads the fight
   as the last action left it (PostgreSQL's READ COMMITTED takes a snapshot per statement);
2. the declaration the action is about, then its attacker and target, in that same first
   statement (``FOR UPDATE OF`` names them in this order, and PostgreSQL hands back the
   newest version of each row it locked);
3. the characters whose sheets the action changes, by ascending pk;
4. their zones, then their weapons (by pk), then their disciplines.

An action skips what it does not lock (a declaration changes no sheet and locks no
character, but does lock the zone and the weapon it points at). The sheet services lock a
character before its rows and never an encounter, so the two cannot deadlock. A new row that
points at sheet rows (a declaration's zone and weapon, a participant's character) has them
locked in that order first: PostgreSQL checks foreign keys at commit with row locks of its
own, in an order of its own (tests/combat/test_row_locking.py).

A deletion of campaigns, sheets or a sheet's zone or weapon (``sheets.signals.deleting``)
takes the same order, with the campaign between the encounter and the characters:
:func:`lock_fights` locks the encounters they are in, by pk, before the deletion locks the
campaigns, then the sheets. So it waits for the action in progress and sees every row it
wrote, and an action after it waits, then finds no encounter (a 404)
(tests/combat/test_fight_deletion_races.py).

Every field a service changes goes through :class:`Changes`, which records the exact before
and after values in the entry; undo and Fate write the before values back (in a new entry)
after checking that nothing changed them since.
"""

from __future__ import annotations

import functools
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.core.exceptions import PermissionDenied
from django.db import models
from django.db.models import Exists, F, OuterRef, Q, QuerySet
from django.db.models.expressions import RawSQL

from combat import events
from combat.models import CombatLogEntry, Declaration, Encounter, Participant
from rules.engine.omg_data import APTITUDE_CHOICES
from sheets.models import BodyZone, Campaign, Character, Discipline, Weapon
from sheets.refusals import Conflict, Refused

if TYPE_CHECKING:
    # Whoever acts, signed in or not (the services refuse the latter themselves).
    from sheets.users import AnyUser as User

Kind = CombatLogEntry.Kind


class CombatError(Refused):
    """The action is not possible in the current state of the fight. ``fields`` names the
    inputs at fault, when it is one (or more) of them (the API answers 400 naming them);
    ``explains`` says the message tells what is wrong with that input better than the API's
    usual words for it do."""

    def __init__(
        self, message: str = "", *, fields: tuple[str, ...] = (), explains: bool = False
    ) -> None:
        super().__init__(message, fields=fields)
        self.explains = explains


class CombatConflict(CombatError, Conflict):
    """Someone else acted first (already resolved, changed since): nothing was done."""


# --- Change recording ---------------------------------------------------------------------

LABELS: dict[type[models.Model], str] = {
    Encounter: "encounter",
    Participant: "participant",
    Declaration: "declaration",
    Character: "character",
    BodyZone: "zone",
    Weapon: "weapon",
    Discipline: "discipline",
}
SHEET_ROWS = ("zone", "weapon", "discipline")


class Changes:
    """Sets fields on loaded rows, remembering each exact before/after value, then saves
    only what changed. Values are JSON (ints, strings, booleans, None, dicts)."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self._dirty: dict[tuple[str, int], tuple[models.Model, set[str]]] = {}

    def set(self, obj: models.Model, name: str, value: Any) -> None:
        before = getattr(obj, name)
        if before == value:
            return
        label = LABELS[type(obj)]
        item = {"model": label, "pk": obj.pk, "field": name, "before": before, "after": value}
        if label in SHEET_ROWS:
            item["char"] = obj.character_id  # type: ignore[attr-defined]  # the row models of a sheet all carry these
        self.items.append(item)
        setattr(obj, name, value)
        self._dirty.setdefault((label, obj.pk), (obj, set()))[1].add(name)

    def record(self, obj: models.Model, name: str, before: Any) -> None:
        """Record a change already written (a new row inserted with its ``after`` value), so
        that undo writes ``before`` back, without saving the row again."""
        label = LABELS[type(obj)]
        item = {
            "model": label,
            "pk": obj.pk,
            "field": name,
            "before": before,
            "after": getattr(obj, name),
        }
        self.items.append(item)

    def save(self) -> None:
        # The sheet page compares versions: a hit is an edit of the sheet, one step per action.
        sheets: set[int] = set()
        bumped: set[int] = set()
        for (label, pk), (obj, names) in self._dirty.items():
            if label == "character" and getattr(obj, "_locked", False):
                # Read under its lock (Rows.lock_sheets), so its version is the stored one: the step
                # goes in the same UPDATE as the change.
                obj.version += 1  # type: ignore[attr-defined]  # the row models of a sheet all carry these
                obj.save(update_fields=sorted({*names, "version"}))
                bumped.add(pk)
                continue
            obj.save(update_fields=sorted(names))
            if label == "character":
                sheets.add(pk)
            elif label in SHEET_ROWS:
                sheets.add(obj.character_id)  # type: ignore[attr-defined]  # the row models of a sheet all carry these
        if sheets - bumped:
            Character.objects.filter(pk__in=sheets - bumped).update(version=F("version") + 1)

    def __bool__(self) -> bool:
        return bool(self.items)


@dataclass
class Rows:
    """The rows of one action, locked in the fixed order."""

    encounter: Encounter
    participants: dict[int, Participant]
    characters: dict[int, Character] = field(default_factory=dict)
    zones: dict[int, BodyZone] = field(default_factory=dict)
    weapons: dict[int, Weapon] = field(default_factory=dict)
    disciplines: dict[int, Discipline] = field(default_factory=dict)
    declarations: dict[int, Declaration] = field(default_factory=dict)
    #: The number of the last log entry this action wrote (the encounter's lock holds it).
    seq: int | None = None

    def get(self, label: str, pk: int) -> models.Model | None:
        if label == "encounter":
            return self.encounter if pk == self.encounter.pk else None
        tables: dict[str, Any] = {
            "participant": self.participants,
            "declaration": self.declarations,
            "character": self.characters,
            "zone": self.zones,
            "weapon": self.weapons,
            "discipline": self.disciplines,
        }
        found: models.Model | None = tables[label].get(pk)
        return found

    def level(self, character: Character, discipline: str | None) -> int:
        if discipline is None:
            return 0
        for row in self.disciplines.values():
            if row.character_id == character.pk and row.name == discipline:
                return row.level
        return 0

    def discipline_row(self, character: Character, name: str) -> Discipline | None:
        for row in self.disciplines.values():
            if row.character_id == character.pk and row.name == name:
                return row
        return None

    def lock_sheets(
        self,
        characters: Collection[int],
        *,
        zones: set[int] | None = None,
        weapons: set[int] | None = None,
        changes: bool = True,
        fields: Collection[str] | None = None,
    ) -> None:
        """Lock ``characters`` by pk (in place of the unlocked rows their participants
        carry), then their zones, then their weapons, then read their disciplines (locked
        too): the fixed order. ``zones`` and ``weapons`` narrow those to the given pks (a
        strike touches one zone and one weapon; an empty set locks none, in no query).

        Without ``changes`` (an action that changes no sheet: a declaration) the characters
        and disciplines are only read, while the zone and the weapon it points at are still
        locked, in the same order: PostgreSQL checks a new row's foreign keys at commit with
        row locks of its own, in an order of its own (tests/combat/test_row_locking.py).

        ``fields`` limits the characters locked to those fields (with their version: the
        step of :meth:`Changes.save`); a field left out costs a query of its own when read,
        so it names every field the action reads or changes (:data:`ROLL_SHEET_FIELDS`)."""
        ids = sorted(characters)
        if not ids:
            return
        if changes:
            locked = Character.objects.select_for_update().filter(pk__in=ids).order_by("pk")
            if fields is not None:
                locked = locked.only("version", *fields)
            self.characters = {c.pk: c for c in locked}
            for c in self.characters.values():
                # Read under its lock, so its version is the stored one: Changes.save steps
                # it in the same UPDATE as the change.
                c._locked = True  # type: ignore[attr-defined]  # the row models of a sheet all carry these
            for p in self.participants.values():
                if p.character_id in self.characters:
                    p.character = self.characters[p.character_id]
        self.zones = _sheet_rows(BodyZone, ids, zones)
        self.weapons = _sheet_rows(Weapon, ids, weapons)
        disciplines = Discipline.objects.select_for_update() if changes else Discipline.objects
        self.disciplines = {
            d.pk: d for d in disciplines.filter(character_id__in=ids).order_by("pk")
        }

    # --- Permissions ---------------------------------------------------------------------
    # Who may see the fight at all is checked by the lock (lock, lock_declaration); these
    # say who may do what in it.

    def is_gm(self, user: User) -> bool:
        return self.encounter.campaign.is_gm(user)

    def require_gm(self, user: User) -> None:
        if not self.is_gm(user):
            raise PermissionDenied("Only the GM can do this.")

    def require_control(self, participant: Participant, user: User) -> None:
        if not participant.is_controlled_by(user):
            raise PermissionDenied("You can only act for your own characters.")

    def participant(self, pk: int | None) -> Participant:
        """The participant ``pk`` of the rows read; CombatError if it is not in them."""
        p = self.participants.get(pk) if pk is not None else None
        if p is None:
            raise CombatError("That participant is not in this encounter.")
        return p


def lock(
    encounter: Encounter | int,
    *,
    actor: User,
    participants: Collection[int] | None = None,
    waiting: bool = False,
    sheet_fields: Collection[str] | None = None,
) -> Rows:
    """Lock the encounter, for ``actor``'s campaigns only, then read its participants
    with their characters (unlocked: names and permission checks); ``participants`` narrows
    them to those pks (those not in the fight are simply absent). With ``waiting`` each
    participant's ``_waiting`` says whether it has an attack open (no query of its own).
    ``sheet_fields`` limits the characters read to those fields (a sheet is 46 columns, most
    of the statement's cost; the others are deferred).

    ``encounter`` is a row or its id, and either way only its pk is used: an encounter gone,
    or outside the actor's campaigns, is ``Encounter.DoesNotExist`` (a 404), whoever read
    the row before. The sheets an action changes are locked next, with
    :meth:`Rows.lock_sheets`."""
    enc = _lock_encounter(actor, pk_of(encounter))
    # Each step of a queryset copies it: its filters are given at once.
    where: dict[str, Any] = {"encounter_id": enc.pk}
    if participants is not None:
        where["pk__in"] = sorted(participants)
    fields = tuple(sheet_fields) if sheet_fields is not None else None
    people = _participants(fields, waiting).filter(**where)
    rows = Rows(enc, {p.pk: p for p in people})
    for p in rows.participants.values():
        p.encounter = enc
    return rows


@functools.cache
def _participants(sheet_fields: tuple[str, ...] | None, waiting: bool) -> QuerySet[Participant]:
    """:func:`lock`'s read of the participants before its filters, built once per shape:
    its only() and its Exists cost more to build than the rest of the read. A queryset is
    never changed, only copied by each step, so one can serve every action."""
    people = Participant.objects.select_related("character")
    if sheet_fields is not None:
        # only() names what is kept: cheaper to build than defer() naming the rest.
        people = people.only(*_PARTICIPANT_FIELDS, *(f"character__{f}" for f in sheet_fields))
    if waiting:
        people = people.annotate(
            _waiting=Exists(
                Declaration.objects.filter(
                    attacker=OuterRef("pk"),
                    status__in=[Declaration.Status.PENDING, Declaration.Status.DEFENDED],
                )
            )
        )
    return people


def lock_declaration(declaration: Declaration | int, *, actor: User, sheets: bool) -> Rows:
    """Lock the encounter of ``declaration`` (a row or its id: only its pk is used), for
    ``actor``'s campaigns only (``Declaration.DoesNotExist`` otherwise: a 404), then the
    declaration and its two participants, with their characters. With ``sheets`` (a roll,
    which changes them) the two characters are locked next, then the declaration's zone and
    weapon and the characters' disciplines (:meth:`Rows.lock_sheets`).

    One statement locks the encounter, the declaration, the attacker and the target, in
    that order (``FOR UPDATE OF`` names them so, and PostgreSQL locks each row it returns
    in that order): a statement that waited for the encounter's lock gets back the newest
    version of every row it locked. What it reads unlocked (the campaign; the characters,
    without ``sheets``: names and owners for the permission checks) is as of its start."""
    query = Declaration.objects.select_for_update(of=("encounter", "self", "attacker", "target"))
    if sheets:
        query = query.select_related("encounter__campaign", "attacker", "target")
    else:
        # Names and owners only (the permission checks and the log's text): a sheet is 46
        # columns, most of the statement's cost.
        query = query.select_related(
            "encounter__campaign", "attacker__character", "target__character"
        ).only(*_DECLARATION_WITH_NAMES)
    try:
        decl = query.get(pk=pk_of(declaration))
    except Declaration.DoesNotExist:
        raise Declaration.DoesNotExist("No such attack.") from None
    _admit(decl.encounter.campaign, actor, Declaration.DoesNotExist)
    enc, a, t = decl.encounter, decl.attacker, decl.target
    a.encounter = t.encounter = enc
    rows = Rows(enc, {a.pk: a, t.pk: t}, declarations={decl.pk: decl})
    if sheets:
        zones = {decl.zone_id} if decl.zone_id is not None else set()
        weapons = {decl.weapon_id} if decl.weapon_id is not None else set()
        rows.lock_sheets(
            {a.character_id, t.character_id},
            zones=zones,
            weapons=weapons,
            fields=ROLL_SHEET_FIELDS,
        )
        if rows.zones.keys() != zones or rows.weapons.keys() != weapons:
            raise CombatConflict("The targeted zone or the weapon no longer exists.")
    return rows


def lock_fights(*, campaigns: Collection[int] = (), characters: Collection[int] = ()) -> list[int]:
    """Lock the encounters of ``campaigns`` and those ``characters`` take part in, by pk, in
    one statement, and return their pks: what a deletion of them takes first, before any lock
    of theirs (the first rows of the order above). An action in progress in one of them is
    waited for; an action after them waits, then finds its encounter gone. Every other
    action in these fights comes in through the same encounter lock, so none writes rows
    the deletion has not seen: rows a deletion had not collected used to break its foreign
    keys at COMMIT."""
    if not campaigns and not characters:
        return []
    where = Q(campaign_id__in=sorted(campaigns))
    if characters:
        fighting = Participant.objects.filter(character_id__in=sorted(characters))
        where |= Q(pk__in=fighting.values("encounter_id"))
    fights = Encounter.objects.select_for_update(of=("self",)).filter(where).order_by("pk")
    return list(fights.values_list("pk", flat=True))


def on_deleting(
    sender: Any, *, campaigns: Collection[int], characters: Collection[int], **kwargs: Any
) -> None:
    """sheets.signals.deleting's receiver: the fights of what is about to be deleted are
    locked first (:func:`lock_fights`)."""
    lock_fights(campaigns=campaigns, characters=characters)


def _lock_encounter(actor: User, pk: int) -> Encounter:
    """The encounter ``pk``'s row lock, which serialises the actions of a fight, taken alone
    so that every later statement starts once it is held and reads the fight as the last
    action left it; then the access check."""
    try:
        enc = (
            Encounter.objects.select_related("campaign").select_for_update(of=("self",)).get(pk=pk)
        )
    except Encounter.DoesNotExist:
        raise Encounter.DoesNotExist("No such encounter.") from None
    _admit(enc.campaign, actor, Encounter.DoesNotExist)
    return enc


def _admit(campaign: Campaign, actor: User, missing: type[Exception]) -> None:
    """Every action's access check, on the campaign of the fight just locked: its GM, or a
    player of it (``Campaign.is_member``: ``member_or_gm``, the one rule); anyone else is
    told ``missing``, the 404 of a fight that does not exist. The GM costs no query."""
    if not (campaign.is_gm(actor) or campaign.is_member(actor)):
        raise missing("No such object among the actor's campaigns.")


#: What a roll reads and changes of the two sheets (combat.services.resolution): names and
#: owners (the checks, the log), aptitudes, size and weight (maneuvers), Vitality and BZF
#: (wounds), EXP marks and Fate (epic rolls). A sheet is 46 columns, mostly text a roll never
#: reads: building them is most of the cost of the statement.
ROLL_SHEET_FIELDS = (
    "campaign",
    "owner",
    "is_npc",
    "name",
    *(abbr.lower() for abbr, _ in APTITUDE_CHOICES),
    "rsv",
    "itv",
    "height",
    "weight",
    "bzf",
    "yards_per_height",
    "vitality",
    "exp_marks",
    "fate",
)


def _names(model: type[models.Model], path: str = "") -> list[str]:
    return [f"{path}{f.name}" for f in model._meta.concrete_fields]


#: Every field of a participant, for an ``only()`` that keeps it whole (cheaper to build
#: than a ``defer()`` naming the rest of its sheet).
_PARTICIPANT_FIELDS = _names(Participant)

#: A declaration with its encounter, campaign and participants, and of the participants'
#: sheets the names and owners only (the permission checks and the log's text).
_DECLARATION_WITH_NAMES = [
    *_names(Declaration),
    *_names(Encounter, "encounter__"),
    *_names(Campaign, "encounter__campaign__"),
    *(name for side in ("attacker", "target") for name in _names(Participant, f"{side}__")),
    *(f"{side}__character__{f}" for side in ("attacker", "target") for f in ("name", "owner")),
]


def pk_of(row: Any) -> Any:
    """The pk of a row given as a row or as its id (None stays None): services take either,
    and use only the pk."""
    return row.pk if isinstance(row, models.Model) else row


def _sheet_rows(
    model: type[BodyZone | Weapon], characters: list[int], only: set[int] | None
) -> Any:
    """The rows of ``model`` of ``characters`` (those of ``only``, if given), locked in pk
    order; none and no query for an empty ``only``."""
    if only is not None and not only:
        return {}
    where: dict[str, Any] = {"character_id__in": characters}
    if only is not None:
        where["pk__in"] = sorted(only)
    return {row.pk: row for row in model.objects.select_for_update().filter(**where).order_by("pk")}


#: The number of an encounter's next log entry, as the subquery of the INSERT that writes it.
#: The one literal SQL of the combat services, its one value a parameter: built with the ORM
#: (``Coalesce(Subquery(...)) + 1``), it cost more than the rest of the INSERT, about half a
#: millisecond of every action (bench/bench_combat.py). tests/combat/test_log_numbering.py
#: holds it to the ORM's numbers, and the unique (encounter, seq) constraint to one answer.
NEXT_SEQ = (
    'SELECT COALESCE(MAX("seq"), 0) + 1 FROM "combat_combatlogentry" WHERE "encounter_id" = %s'
)


def log(
    rows: Rows,
    kind: str,
    *,
    actor: User | None,
    text: str,
    changes: Changes | None = None,
    public_text: str | None = None,
    involves: tuple[Participant | None, ...] = (),
    participant: Participant | None = None,
    declaration: Declaration | None = None,
    roll: int | None = None,
    physical: bool = False,
    reverts: CombatLogEntry | None = None,
    **extra: Any,
) -> CombatLogEntry:
    """Save ``changes`` and write the action's log entry, numbered after the last one; the
    entry reaches :mod:`combat.events` once the transaction commits."""
    if changes is not None:
        changes.save()
    enc = rows.encounter
    seq: Any = rows.seq
    if seq is None:
        # Numbered by the INSERT itself (and handed back by it): a statement that starts
        # once the encounter's lock is held sees every entry written before.
        # S611: a constant statement, its one value a parameter.
        seq = RawSQL(NEXT_SEQ, (enc.pk,), output_field=models.PositiveIntegerField())  # noqa: S611
    else:
        seq += 1
    payload = {
        "text": text,
        "public_text": public_text or text,
        "involves": sorted({p.pk for p in involves if p is not None}),
        "changes": changes.items if changes is not None else [],
        **extra,
    }
    entry = CombatLogEntry.objects.create(
        encounter=enc,
        seq=seq,
        kind=kind,
        actor=actor if actor is not None and actor.is_authenticated else None,
        participant=participant,
        declaration=declaration,
        payload=payload,
        roll=roll,
        physical=physical,
        reverts=reverts,
    )
    rows.seq = entry.seq
    events.publish(entry)
    return entry
