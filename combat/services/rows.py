"""Combat workflows shared by the pages and the API: one transaction each, one log entry each.

Every function is keyword-only, checks who may do it (``PermissionDenied``), refuses what the
state of the fight does not allow (``CombatError``, or ``CombatConflict`` when someone else got
there first), and returns the :class:`~combat.models.CombatLogEntry` it wrote; the entry is
handed to :mod:`combat.events` once the transaction commits.

Locks are always taken in one order: the encounter row (which serialises every action of a
fight), its declaration and participants, then the characters by ascending pk, then their
zones, weapons and disciplines (an action skips what it does not lock: a declaration changes
no sheet and locks no character). The busiest actions (declare, defend, roll) take their
locks in one or two hand-written statements (:mod:`combat.services.joined`): ``FOR UPDATE
OF`` locks in the order it names and returns the newest version of each row it locked, so a
statement that waited for a lock reads none of those rows stale. What it reads there
unlocked (characters and disciplines, for names, permissions and a declaration's odds) is as
of the statement's start; whatever an action changes is read locked, or by a later
statement once the locks are held. The
sheet services lock a character before its rows and never an encounter, so the two cannot
deadlock. A new row that points at sheet rows (a declaration's zone and weapon, a participant's
character) has them locked in that order first: PostgreSQL checks foreign keys at commit with
row locks of its own, in an order of its own (tests/combat/test_row_locking.py).

Every field a service changes goes through :class:`Changes`, which records the exact before
and after values in the entry; undo and Fate write the before values back (in a new entry)
after checking that nothing changed them since.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.core.exceptions import PermissionDenied
from django.db import models
from django.db.models import Exists, F, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce

from combat import events
from combat.models import CombatLogEntry, Declaration, Encounter, Participant
from combat.services.joined import attack_read, declared_read, fetch, sheet_rows_read
from sheets.models import BodyZone, Character, Discipline, Membership, Weapon

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

    User = AbstractBaseUser | AnonymousUser

Kind = CombatLogEntry.Kind


class CombatError(Exception):
    """The action is not possible in the current state of the fight. ``fields`` names the
    inputs at fault, when it is one (or more) of them (the API answers 400 naming them);
    ``explains`` says the message tells what is wrong with that input better than the API's
    usual words for it do."""

    def __init__(
        self, message: str = "", *, fields: tuple[str, ...] = (), explains: bool = False
    ) -> None:
        super().__init__(message)
        self.fields = fields
        self.explains = explains


class CombatConflict(CombatError):
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
            item["char"] = obj.character_id  # type: ignore[attr-defined]
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
                # Read under its lock (_lock), so its version is the stored one: the step
                # goes in the same UPDATE as the change.
                obj.version += 1  # type: ignore[attr-defined]
                obj.save(update_fields=sorted({*names, "version"}))
                bumped.add(pk)
                continue
            obj.save(update_fields=sorted(names))
            if label == "character":
                sheets.add(pk)
            elif label in SHEET_ROWS:
                sheets.add(obj.character_id)  # type: ignore[attr-defined]
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
    #: The encounter's last log entry number, once read (the encounter's lock holds it).
    seq: int | None = None

    def get(self, label: str, pk: int) -> models.Model | None:
        if label == "encounter":
            return self.encounter if pk == self.encounter.pk else None
        table: dict[int, Any] = {
            "participant": self.participants,
            "declaration": self.declarations,
            "character": self.characters,
            "zone": self.zones,
            "weapon": self.weapons,
            "discipline": self.disciplines,
        }[label]
        return table.get(pk)

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


def _lock(
    encounter: Encounter | int,
    *,
    characters: set[int] | None = None,
    of_participants: set[int] | None = None,
    visible_to: User | None = None,
    waiting: bool = False,
    zones: set[int] | None = None,
    weapons: set[int] | None = None,
    lock_sheets: bool = True,
) -> Rows:
    """Lock the encounter, read its participants, and lock ``characters`` (and the characters
    of ``of_participants``, those in the encounter) with their zones, weapons and
    disciplines.

    With ``visible_to``, an encounter outside that user's campaigns is not found
    (``Encounter.DoesNotExist``: the API's 404) rather than read. The log's last seq comes
    with the participants, and with ``waiting`` each participant's ``_waiting`` says whether
    it has an attack open (no query of their own).

    ``zones`` and ``weapons`` narrow the locked characters' zones and weapons to those ids
    (a strike touches one zone and one weapon; locking and loading every zone of both sheets
    was most of its rows). A narrowed set is a subset of the full one, taken in the same
    order. Without ``lock_sheets`` the characters (read with the participants) and their
    disciplines are read, not locked: for an action that changes none of them (a
    declaration), whose zone and weapon are still locked, in the same order."""
    query = Encounter.objects.select_for_update(of=("self",)).select_related("campaign")
    query = query.filter(pk=encounter if isinstance(encounter, int) else encounter.pk)
    if visible_to is not None:
        if not visible_to.is_authenticated:
            raise Encounter.DoesNotExist
        # Campaign.objects.for_user's rule, on the encounter's own campaign column.
        query = query.filter(
            Q(campaign__gm_id=visible_to.pk)
            | Q(campaign_id__in=Membership.objects.filter(user_id=visible_to.pk).values("campaign"))
        )
    enc = query.first()
    if enc is None:
        if visible_to is not None:
            raise Encounter.DoesNotExist
        raise CombatConflict("This encounter no longer exists.")
    # With their characters (unlocked, for the permission checks); the ones an action changes
    # are replaced below by the locked rows. Read once the encounter is locked: the last seq
    # is the one this action follows (a subquery of the encounter's own statement could see
    # the log as it was before the lock was granted, on PostgreSQL).
    last = CombatLogEntry.objects.filter(encounter_id=enc.pk).order_by("-seq").values("seq")[:1]
    people = Participant.objects.filter(encounter=enc).select_related("character")
    people = people.annotate(_last_seq=Subquery(last))
    if waiting:
        people = people.annotate(
            _waiting=Exists(
                Declaration.objects.filter(
                    attacker=OuterRef("pk"),
                    status__in=[Declaration.Status.PENDING, Declaration.Status.DEFENDED],
                )
            )
        )
    participants = {p.pk: p for p in people}
    for p in participants.values():
        p.encounter = enc
    rows = Rows(enc, participants)
    if participants:
        rows.seq = next(iter(participants.values()))._last_seq or 0  # type: ignore[attr-defined]
    if of_participants:
        characters = {
            *(characters or ()),
            *(participants[pk].character_id for pk in of_participants if pk in participants),
        }
    if characters:
        ids = sorted(characters)
        if lock_sheets:
            _lock_characters(rows, ids)
        rows.zones = _sheet_rows(BodyZone, ids, zones)
        rows.weapons = _sheet_rows(Weapon, ids, weapons)
        disciplines = Discipline.objects.filter(character_id__in=ids).order_by("pk")
        if lock_sheets:
            disciplines = disciplines.select_for_update()
        rows.disciplines = {d.pk: d for d in disciplines}
    return rows


def _lock_characters(rows: Rows, ids: list[int]) -> None:
    """Lock the characters ``ids`` by pk into ``rows.characters``, in place of the unlocked
    ones their participants carry; Changes.save steps a locked sheet's version in the same
    UPDATE as the change (``_locked``)."""
    rows.characters = {
        c.pk: c for c in Character.objects.select_for_update().filter(pk__in=ids).order_by("pk")
    }
    for c in rows.characters.values():
        c._locked = True  # type: ignore[attr-defined]
    for p in rows.participants.values():
        if p.character_id in rows.characters:
            p.character = rows.characters[p.character_id]


def _member_params(user: User | None, missing: type[Exception]) -> list[Any]:
    if user is None:
        return []
    if not user.is_authenticated:
        raise missing
    return [user.pk, user.pk]


def _attack_rows(
    encounter: Encounter | int,
    attacker: int,
    target: int,
    *,
    visible_to: User | None,
    zones: set[int],
    weapons: set[int],
    lock_sheets: bool,
) -> Rows | None:
    """The rows of a new declaration, read by one statement
    (:func:`~combat.services.joined.attack_read`) that locks the encounter, the two
    participants, the named zone and the named weapon, in that order, with the characters
    and their disciplines unlocked. With ``lock_sheets`` (a strike in one call, which
    changes the sheets) it locks the encounter and the participants only; the characters
    are then locked by pk, and the zone, the weapon and the disciplines read after them
    (the lock order puts characters before their rows).

    None when the statement finds fewer than the two participants (the encounter is not
    there or not the user's, someone is not in it, both are the same, or the zone or the
    weapon does not exist): the caller falls back to :func:`_lock`, whose checks name what
    is wrong. The log's seq is not read: :func:`_log` numbers the entry in its own INSERT,
    a statement that starts after the lock is held."""
    if attacker == target or len(zones) > 1 or len(weapons) > 1:
        return None
    enc_pk = encounter if isinstance(encounter, int) else encounter.pk
    # With lock_sheets the zone and the weapon wait: they come after the characters.
    first_zones, first_weapons = (set(), set()) if lock_sheets else (zones, weapons)
    params = [enc_pk, attacker, target, *first_zones, *first_weapons]
    params += _member_params(visible_to, Encounter.DoesNotExist)
    read = attack_read(
        visible_to is not None, bool(first_zones), bool(first_weapons), not lock_sheets
    )
    found = fetch(read, params)
    people = {row["p"].pk: row for row in found}
    if len(people) != 2:
        return None
    first = found[0]
    enc = first["e"]
    enc.campaign = first["c"]
    for row in people.values():
        p = row["p"]
        p.encounter, p.character, p._waiting = enc, row["ch"], bool(row["waiting"])
    rows = Rows(enc, {pk: row["p"] for pk, row in people.items()})
    if first.get("z") is not None:
        rows.zones[first["z"].pk] = first["z"]
    if first.get("w") is not None:
        rows.weapons[first["w"].pk] = first["w"]
    if not lock_sheets:
        rows.disciplines = {row["dl"].pk: row["dl"] for row in found if row["dl"] is not None}
        return rows
    ids = sorted(p.character_id for p in rows.participants.values())
    _lock_characters(rows, ids)
    zone, weapon = next(iter(zones), None), next(iter(weapons), None)
    if not _read_sheet_rows(rows, ids, zone=zone, weapon=weapon):
        return None  # the zone or the weapon is not there: _lock's checks say which
    return rows


def _declared_rows(
    declaration: int, *, encounter: int | None, visible_to: User | None, sheets: bool
) -> Rows:
    """The rows of an action on an open declaration (defend, cancel, roll), in as few
    statements as the lock order allows.

    One statement (:func:`~combat.services.joined.declared_read`) locks the encounter, the
    declaration and its two participants, and with ``sheets`` (a roll, which changes them)
    the two characters by pk. A roll then reads the declaration's zone and weapon (locked)
    and the disciplines in one more (:func:`~combat.services.joined.sheet_rows_read`). A
    declaration outside ``visible_to``'s campaigns is ``Declaration.DoesNotExist`` (the
    API's 404)."""
    params = [declaration]
    if encounter is not None:
        params.append(encounter)
    params += _member_params(visible_to, Declaration.DoesNotExist)
    found = fetch(declared_read(visible_to is not None, encounter is not None, sheets), params)
    if not found:
        if visible_to is not None:
            raise Declaration.DoesNotExist
        raise CombatConflict("This encounter no longer exists.")
    row = found[0]
    decl, enc, a, t = row["d"], row["e"], row["a"], row["t"]
    enc.campaign = row["c"]
    decl.encounter, decl.attacker, decl.target = enc, a, t
    rows = Rows(enc, {a.pk: a, t.pk: t}, declarations={decl.pk: decl})
    if not sheets:
        a.encounter, a.character = enc, row["ac"]
        t.encounter, t.character = enc, row["tc"]
        return rows
    for c in (row["lo"], row["hi"]):
        c._locked = True  # type: ignore[attr-defined]  # Changes.save steps its version
        rows.characters[c.pk] = c
    for p in (a, t):
        p.encounter, p.character = enc, rows.characters[p.character_id]
    ids = [row["lo"].pk, row["hi"].pk]
    if not _read_sheet_rows(rows, ids, zone=decl.zone_id, weapon=decl.weapon_id):
        raise CombatConflict("The targeted zone or the weapon no longer exists.")
    return rows


def _read_sheet_rows(
    rows: Rows, characters: list[int], *, zone: int | None, weapon: int | None
) -> bool:
    """Once ``characters`` (two, by pk) are locked: lock ``zone`` and ``weapon`` and read
    the characters' disciplines, in one statement
    (:func:`~combat.services.joined.sheet_rows_read`), into ``rows``. False when the zone or
    the weapon is not there (nothing read)."""
    params = [*characters, *(pk for pk in (zone, weapon) if pk is not None)]
    lines = fetch(sheet_rows_read(zone is not None, weapon is not None), params)
    if (zone is not None or weapon is not None) and not lines:
        return False
    for line in lines:
        if line.get("z") is not None:
            rows.zones[line["z"].pk] = line["z"]
        if line.get("w") is not None:
            rows.weapons[line["w"].pk] = line["w"]
        if line["dl"] is not None:
            rows.disciplines[line["dl"].pk] = line["dl"]
    return True


def _sheet_rows(
    model: type[BodyZone | Weapon], characters: list[int], only: set[int] | None
) -> Any:
    """The rows of ``model`` of ``characters`` (those of ``only``, if given), locked in pk
    order; none and no query for an empty ``only``."""
    if only is not None and not only:
        return {}
    rows = model.objects.select_for_update().filter(character_id__in=characters)
    if only is not None:
        rows = rows.filter(pk__in=sorted(only))
    return {row.pk: row for row in rows.order_by("pk")}


def _log(
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
    if changes is not None:
        changes.save()
    enc = rows.encounter
    seq: Any = rows.seq
    if seq is None:
        # Numbered by the INSERT itself (and handed back by it): a statement that starts
        # once the encounter's lock is held sees every entry written before.
        seq = (
            Coalesce(
                Subquery(
                    CombatLogEntry.objects.filter(encounter_id=enc.pk)
                    .order_by("-seq")
                    .values("seq")[:1]
                ),
                0,
            )
            + 1
        )
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


# --- Permissions ---------------------------------------------------------------------------


def _is_gm(rows: Rows, user: User) -> bool:
    return rows.encounter.campaign.is_gm(user)


def _require_gm(rows: Rows, user: User) -> None:
    if not _is_gm(rows, user):
        raise PermissionDenied("Only the GM can do this.")


def _require_control(rows: Rows, participant: Participant, user: User) -> None:
    if not participant.is_controlled_by(user):
        raise PermissionDenied("You can only act for your own characters.")


def _participant(rows: Rows, pk: int | None) -> Participant:
    p = rows.participants.get(pk) if pk is not None else None
    if p is None:
        raise CombatError("That participant is not in this encounter.")
    return p
