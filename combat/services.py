"""Combat workflows shared by the pages and the API: one transaction each, one log entry each.

Every function is keyword-only, checks who may do it (``PermissionDenied``), refuses what the
state of the fight does not allow (``CombatError``, or ``CombatConflict`` when someone else got
there first), and returns the :class:`~combat.models.CombatLogEntry` it wrote; the entry is
handed to :mod:`combat.events` once the transaction commits.

Locks are always taken in one order: the encounter row (which serialises every action of a
fight), then the characters by ascending pk, then their zones, weapons and disciplines. The
sheet services lock a character before its rows and never an encounter, so the two cannot
deadlock. A new row that points at sheet rows (a declaration's zone and weapon, a participant's
character) has them locked in that order first: PostgreSQL checks foreign keys at commit with
row locks of its own, in an order of its own (tests/combat/test_row_locking.py).

Every field a service changes goes through :class:`Changes`, which records the exact before
and after values in the entry; undo and Fate write the before values back (in a new entry)
after checking that nothing changed them since.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.core.exceptions import PermissionDenied
from django.db import models, transaction
from django.db.models import F, Max

from combat import events
from combat.models import CombatLogEntry, Declaration, Encounter, Participant
from rules.engine import RulesError, odds, omg
from rules.engine.omg_data import MELEE_COMBAT, weapon_discipline
from sheets.models import BodyZone, Character, Discipline, Weapon
from sheets.numbers import aptitudes_of
from sheets.services import GRIEVOUS_NOTE

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

    User = AbstractBaseUser | AnonymousUser

Kind = CombatLogEntry.Kind
MAX_COPIES = 20
STAMINA_DIF = 20  # Moderate, unless the GM says otherwise (docs/rules.md, "Wounds and healing")


class CombatError(Exception):
    """The action is not possible in the current state of the fight."""


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

    def save(self) -> None:
        sheets: set[int] = set()
        for (label, pk), (obj, names) in self._dirty.items():
            obj.save(update_fields=sorted(names))
            if label == "character":
                sheets.add(pk)
            elif label in SHEET_ROWS:
                sheets.add(obj.character_id)  # type: ignore[attr-defined]
        if sheets:
            # The sheet page compares versions: a hit is an edit of the sheet.
            Character.objects.filter(pk__in=sheets).update(version=F("version") + 1)

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


def _lock(encounter: Encounter | int, *, characters: set[int] | None = None) -> Rows:
    pk = encounter if isinstance(encounter, int) else encounter.pk
    enc = (
        Encounter.objects.select_for_update(of=("self",))
        .select_related("campaign")
        .filter(pk=pk)
        .first()
    )
    if enc is None:
        raise CombatConflict("This encounter no longer exists.")
    participants = {p.pk: p for p in Participant.objects.filter(encounter=enc)}
    for p in participants.values():
        p.encounter = enc
    rows = Rows(enc, participants)
    if characters:
        ids = sorted(characters)
        rows.characters = {
            c.pk: c for c in Character.objects.select_for_update().filter(pk__in=ids).order_by("pk")
        }
        rows.zones = {
            z.pk: z
            for z in BodyZone.objects.select_for_update()
            .filter(character_id__in=ids)
            .order_by("pk")
        }
        rows.weapons = {
            w.pk: w
            for w in Weapon.objects.select_for_update().filter(character_id__in=ids).order_by("pk")
        }
        rows.disciplines = {
            d.pk: d
            for d in Discipline.objects.select_for_update()
            .filter(character_id__in=ids)
            .order_by("pk")
        }
        for p in participants.values():
            if p.character_id in rows.characters:
                p.character = rows.characters[p.character_id]
    return rows


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
    last = CombatLogEntry.objects.filter(encounter=enc).aggregate(m=Max("seq"))["m"] or 0
    payload = {
        "text": text,
        "public_text": public_text or text,
        "involves": sorted({p.pk for p in involves if p is not None}),
        "changes": changes.items if changes is not None else [],
        **extra,
    }
    entry = CombatLogEntry.objects.create(
        encounter=enc,
        seq=last + 1,
        kind=kind,
        actor=actor if actor is not None and actor.is_authenticated else None,
        participant=participant,
        declaration=declaration,
        payload=payload,
        roll=roll,
        physical=physical,
        reverts=reverts,
    )
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


# --- Encounter set-up ----------------------------------------------------------------------


def create_encounter(*, campaign: Any, name: str, actor: User) -> tuple[Encounter, CombatLogEntry]:
    if not campaign.is_gm(actor):
        raise PermissionDenied("Only the GM runs encounters.")
    name = name.strip()
    if not name:
        raise CombatError("Give the encounter a name.")
    with transaction.atomic():
        encounter = Encounter.objects.create(campaign=campaign, name=name[:120])
        rows = _lock(encounter)
        entry = _log(rows, Kind.CREATE, actor=actor, text=f"Encounter “{encounter.name}” created.")
    return encounter, entry


def add_participants(
    *, encounter: Encounter, characters: list[Character], actor: User, hidden: bool = False
) -> CombatLogEntry:
    """Add campaign characters (player characters or NPCs themselves, not copies)."""
    with transaction.atomic():
        rows = _lock(encounter)
        _require_gm(rows, actor)
        # Each new participant points at its character (see declare_attack): lock them first.
        rows = _lock(encounter, characters={c.pk for c in characters})
        enc = rows.encounter
        if enc.status == Encounter.Status.FINISHED:
            raise CombatError("This encounter is over.")
        present = {p.character_id for p in rows.participants.values()}
        added = []
        for character in characters:
            if character.campaign_id != enc.campaign_id:
                raise CombatError(f"{character.name} is not in this campaign.")
            if character.pk in present:
                raise CombatError(f"{character.name} is already in this encounter.")
            present.add(character.pk)
            added.append(
                Participant.objects.create(
                    encounter=enc,
                    character=character,
                    hidden=hidden and character.is_npc,
                    position=len(rows.participants) + len(added),
                )
            )
        if not added:
            raise CombatError("Choose at least one character.")
        names = ", ".join(p.character.name for p in added)
        return _log(
            rows,
            Kind.JOIN,
            actor=actor,
            text=f"Joined the fight: {names}.",
            participants=[p.pk for p in added],
        )


def _copy_character(npc: Character, name: str, *, hidden: bool) -> Character:
    copy = Character.objects.get(pk=npc.pk)
    copy.pk = None
    copy.id = None  # type: ignore[assignment]
    copy._state.adding = True
    copy.name = name
    copy.version = 1
    copy.is_npc = True
    copy.copied_from = npc
    # A hidden copy stays the GM's even after its fight is gone (docs/security.md).
    copy.revealed = npc.revealed and not hidden
    copy.save()
    # Every row of the sheet comes along, field for field (wounds and armor wear included), so
    # a field added to a row later is copied too. Fresh rows, never the NPC's cached ones.
    for model in (BodyZone, Weapon, Discipline):
        rows = list(model.objects.filter(character=npc))
        for row in rows:
            row.pk = None
            row._state.adding = True
            row.character = copy
        model.objects.bulk_create(rows)
    return copy


def add_npc_copies(
    *, encounter: Encounter, npc: Character, count: int, actor: User, hidden: bool = False
) -> CombatLogEntry:
    """``count`` copies of an NPC, each its own sheet (own wounds, armor and weapon state),
    named "<NPC> #n"."""
    if not 1 <= count <= MAX_COPIES:
        raise CombatError(f"Add between 1 and {MAX_COPIES} copies at once.")
    with transaction.atomic():
        rows = _lock(encounter)
        _require_gm(rows, actor)
        enc = rows.encounter
        if enc.status == Encounter.Status.FINISHED:
            raise CombatError("This encounter is over.")
        if npc.campaign_id != enc.campaign_id or not npc.is_npc:
            raise CombatError("Copies are made of this campaign's NPCs.")
        taken = {
            p.character.name
            for p in Participant.objects.filter(encounter=enc).select_related("character")
        }
        added: list[Participant] = []
        n = 0
        while len(added) < count:
            n += 1
            name = f"{npc.name} #{n}"
            if name in taken:
                continue
            copy = _copy_character(npc, name, hidden=hidden)
            added.append(
                Participant.objects.create(
                    encounter=enc,
                    character=copy,
                    hidden=hidden,
                    position=len(rows.participants) + len(added),
                )
            )
        names = ", ".join(p.character.name for p in added)
        return _log(
            rows,
            Kind.JOIN,
            actor=actor,
            text=f"Joined the fight: {names}.",
            participants=[p.pk for p in added],
        )


def update_participant(
    *,
    participant: Participant,
    actor: User,
    hidden: bool | None = None,
    on_alert: bool | None = None,
    gm_order: int | None = None,
    itv: int | None = None,
    state: str | None = None,
    clear_conditions: bool = False,
) -> CombatLogEntry:
    """The GM's switches on one participant: hide its numbers, on alert, tie-break order,
    ITV, state (e.g. back on their feet), clearing its conditions."""
    with transaction.atomic():
        rows = _lock(participant.encounter_id)
        _require_gm(rows, actor)
        p = _participant(rows, participant.pk)
        ch = Changes()
        if hidden is not None:
            ch.set(p, "hidden", bool(hidden))
        if on_alert is not None:
            ch.set(p, "on_alert", bool(on_alert))
        if gm_order is not None:
            if not 0 <= gm_order <= 1000:
                raise CombatError("The GM's order is a number from 0 to 1000.")
            ch.set(p, "gm_order", gm_order)
        if itv is not None:
            if not 0 <= itv <= 100:
                raise CombatError("ITV is a number from 0 to 100.")
            ch.set(p, "itv", itv)
        if state is not None:
            if state not in Participant.State.values:
                raise CombatError(f"Unknown state {state!r}.")
            ch.set(p, "state", state)
        if clear_conditions:
            ch.set(p, "conditions", {})
            ch.set(p, "stamina_due", False)
        if p.itv is not None:
            ch.set(p, "initiative", omg.on_alert(p.itv) if p.on_alert else p.itv)
        if not ch:
            raise CombatError("Nothing to change.")
        what = ", ".join(sorted({c["field"] for c in ch.items}))
        return _log(
            rows,
            Kind.PARTICIPANT,
            actor=actor,
            changes=ch,
            participant=p,
            involves=(p,),
            text=f"{p.name}: {what} changed.",
        )


# --- Initiative and turns ------------------------------------------------------------------


def _order(rows: Rows) -> list[Participant]:
    return sorted(rows.participants.values(), key=lambda p: (p.position, p.pk))


def _initiative(rows: Rows, ch: Changes, rng: random.Random) -> list[Participant]:
    """Fill missing ITV (the character's daily ITV, rolled and kept on the sheet when
    missing), double it on alert, and order by RULES.md: ITV, then SPD, FOC, the GM's order."""
    entries = []
    for p in rows.participants.values():
        c = p.character
        itv = p.itv if p.itv is not None else c.itv
        if itv is None:
            itv = omg.roll_itv(aptitudes_of(c), rng=rng)
            ch.set(c, "itv", itv)
        ch.set(p, "itv", itv)
        ch.set(p, "initiative", omg.on_alert(itv) if p.on_alert else itv)
        entries.append(omg.InitiativeEntry(p.pk, p.initiative or 0, c.spd, c.foc, p.gm_order))
    ordered = [rows.participants[e.key] for e in omg.initiative_order(entries)]
    for i, p in enumerate(ordered):
        ch.set(p, "position", i)
    return ordered


def _character_ids(rows: Rows) -> set[int]:
    return {p.character_id for p in rows.participants.values()}


def start_encounter(
    *, encounter: Encounter, actor: User, rng: random.Random | None = None
) -> CombatLogEntry:
    rng = rng or random.SystemRandom()
    with transaction.atomic():
        rows = _lock(encounter)
        _require_gm(rows, actor)
        rows = _lock(encounter, characters=_character_ids(rows))
        enc = rows.encounter
        if enc.status != Encounter.Status.PREPARING:
            raise CombatConflict("This encounter has already started.")
        if not rows.participants:
            raise CombatError("Add participants before starting.")
        ch = Changes()
        ordered = _initiative(rows, ch, rng)
        first = next((p for p in ordered if p.can_act), ordered[0])
        ch.set(enc, "status", Encounter.Status.RUNNING.value)
        ch.set(enc, "round", 1)
        ch.set(enc, "turn_id", first.pk)
        order = ", ".join(f"{p.name} {p.initiative}" for p in ordered)
        return _log(
            rows,
            Kind.START,
            actor=actor,
            changes=ch,
            participant=first,
            text=f"Round 1. Initiative: {order}. {first.name} acts first.",
            public_text=f"Round 1. Order: {', '.join(p.name for p in ordered)}.",
            involves=tuple(ordered),
        )


def roll_initiative(
    *, encounter: Encounter, actor: User, rng: random.Random | None = None
) -> CombatLogEntry:
    """Order again (after on-alert or tie-break changes); missing ITVs are rolled."""
    rng = rng or random.SystemRandom()
    with transaction.atomic():
        rows = _lock(encounter)
        _require_gm(rows, actor)
        rows = _lock(encounter, characters=_character_ids(rows))
        if not rows.participants:
            raise CombatError("Add participants first.")
        ch = Changes()
        ordered = _initiative(rows, ch, rng)
        order = ", ".join(f"{p.name} {p.initiative}" for p in ordered)
        return _log(
            rows,
            Kind.INITIATIVE,
            actor=actor,
            changes=ch,
            text=f"Initiative: {order}.",
            public_text=f"Order: {', '.join(p.name for p in ordered)}.",
            involves=tuple(ordered),
        )


def _new_round(rows: Rows, ch: Changes, include_skipped: bool) -> Participant | None:
    enc = rows.encounter
    new = enc.round + 1
    ch.set(enc, "round", new)
    ch.set(enc, "countering", False)
    for p in rows.participants.values():
        ch.set(p, "counterattacks", 0)
        kept = {}
        for name, info in p.conditions.items():
            since = int(info.get("round", 0))
            if name in (omg.Condition.FEINTED, omg.Condition.SHOVED):
                continue  # a feint is spent within its round; a shove is a moment
            if name == omg.Condition.DISARMED and since <= new - 2:
                continue  # the round after the disarm was spent retrieving the weapon
            kept[name] = info
        ch.set(p, "conditions", kept)
    ordered = _order(rows)
    return next((p for p in ordered if include_skipped or p.can_act), None)


@dataclass(frozen=True)
class SeenTurn:
    """The turn a client saw when it asked to pass it: ``turn`` is the acting participant's
    id (None: nobody's turn), ``countering`` whether the round's end was held for
    counterattacks (None: not said)."""

    round: int
    turn: int | None
    countering: bool | None = None


def next_turn(
    *,
    encounter: Encounter,
    actor: User,
    include_skipped: bool = False,
    seen: SeenTurn | None = None,
) -> CombatLogEntry:
    """Pass the turn to the next participant who can act (down, unconscious and busy ones
    are skipped unless ``include_skipped``). At the round's end, queued parry counterattacks
    are offered first, one participant at a time; then a new round begins.

    With ``seen`` (the page always sends it) a second press, from a double click or another
    tab, finds the turn moved on and raises CombatConflict instead of passing it twice.
    Without it the turn passes whatever it is (older API clients)."""
    with transaction.atomic():
        rows = _lock(encounter)
        enc = rows.encounter
        current = rows.participants.get(enc.turn_id) if enc.turn_id else None
        if not (_is_gm(rows, actor) or (current is not None and current.is_controlled_by(actor))):
            raise PermissionDenied("Only the GM, or whoever is acting, passes the turn.")
        if enc.status != Encounter.Status.RUNNING:
            raise CombatError("The encounter is not running.")
        if seen is not None and (
            (seen.round, seen.turn) != (enc.round, enc.turn_id)
            # The last of a round can be next again for a counterattack: same round, same turn.
            or (seen.countering is not None and seen.countering != enc.countering)
        ):
            now = f"{current.name}'s turn" if current is not None else "nobody's turn"
            raise CombatConflict(
                f"The turn has already moved on (round {enc.round}, {now}); nothing was changed."
            )
        if Declaration.objects.filter(
            encounter=enc, status__in=[Declaration.Status.PENDING, Declaration.Status.DEFENDED]
        ).exists():
            raise CombatError("Resolve or cancel the open attack first.")
        ch = Changes()
        ordered = _order(rows)
        nxt: Participant | None = None
        if enc.countering:
            if current is not None:
                ch.set(current, "counterattacks", 0)
            nxt = next((p for p in ordered if p.counterattacks and p.can_act), None)
            countering = nxt is not None
        else:
            after = ordered[ordered.index(current) + 1 :] if current in ordered else ordered
            nxt = next((p for p in after if include_skipped or p.can_act), None)
            countering = False
            if nxt is None:
                nxt = next((p for p in ordered if p.counterattacks and p.can_act), None)
                countering = nxt is not None
        if nxt is None:
            nxt = _new_round(rows, ch, include_skipped)
            text = f"Round {enc.round}." + (f" {nxt.name} acts." if nxt else " Nobody can act.")
        elif countering:
            ch.set(enc, "countering", True)
            text = f"Before the round ends: {nxt.name}'s counterattack."
        else:
            text = f"{nxt.name}'s turn."
        ch.set(enc, "turn_id", nxt.pk if nxt else None)
        return _log(
            rows, Kind.TURN, actor=actor, changes=ch, participant=nxt, text=text, involves=()
        )


def set_turn(*, encounter: Encounter, participant: Participant, actor: User) -> CombatLogEntry:
    """The GM gives the turn to anyone, skipped or not."""
    with transaction.atomic():
        rows = _lock(encounter)
        _require_gm(rows, actor)
        if rows.encounter.status != Encounter.Status.RUNNING:
            raise CombatError("The encounter is not running.")
        p = _participant(rows, participant.pk)
        ch = Changes()
        ch.set(rows.encounter, "turn_id", p.pk)
        if not ch:
            raise CombatError(f"It is already {p.name}'s turn.")
        return _log(
            rows, Kind.TURN, actor=actor, changes=ch, participant=p, text=f"{p.name}'s turn (GM)."
        )


def finish_encounter(*, encounter: Encounter, actor: User) -> CombatLogEntry:
    with transaction.atomic():
        rows = _lock(encounter)
        _require_gm(rows, actor)
        ch = Changes()
        ch.set(rows.encounter, "status", Encounter.Status.FINISHED.value)
        if not ch:
            raise CombatConflict("The encounter is already over.")
        ch.set(rows.encounter, "turn_id", None)
        for d in Declaration.objects.filter(
            encounter=rows.encounter,
            status__in=[Declaration.Status.PENDING, Declaration.Status.DEFENDED],
        ):
            rows.declarations[d.pk] = d
            ch.set(d, "status", Declaration.Status.CANCELLED.value)
        return _log(rows, Kind.FINISH, actor=actor, changes=ch, text="The fight is over.")


def delete_encounter(*, encounter: Encounter, actor: User) -> None:
    """The GM deletes an encounter being prepared, or one that is over, with its log. A
    running fight is refused (end it first): its players may be acting in it right now.
    Unlike the other services this writes no log entry: the log goes with the encounter."""
    with transaction.atomic():
        rows = _lock(encounter)
        _require_gm(rows, actor)
        if rows.encounter.status == Encounter.Status.RUNNING:
            raise CombatConflict("This fight is running: end it before deleting the encounter.")
        # The log is append-only for the application; it is deleted here only as part of its
        # encounter, by the cascade (which bypasses CombatLogEntry.delete).
        rows.encounter.delete()


# --- Declarations --------------------------------------------------------------------------


def declare_attack(
    *,
    encounter: Encounter,
    attacker: Participant,
    target: Participant,
    action: str,
    actor: User,
    zone: BodyZone | None = None,
    weapon: Weapon | None = None,
    counterattack: bool = False,
) -> tuple[Declaration, CombatLogEntry]:
    """Step 1 of the combat sequence: target, zone, weapon and strike mode or maneuver."""
    action = (action or "").strip().lower()
    with transaction.atomic():
        rows = _lock(encounter)
        a = _participant(rows, attacker.pk)
        t = _participant(rows, target.pk)
        # The declaration points at a zone and a weapon; PostgreSQL checks those foreign keys
        # at commit with FOR KEY SHARE row locks in an order of its own, which deadlocked with
        # a resolution holding the same zone and wanting the weapon. Locking both characters'
        # rows first, in the fixed order, makes those checks wait for nothing.
        rows = _lock(encounter, characters={a.character_id, t.character_id})
        enc = rows.encounter
        a, t = rows.participants[a.pk], rows.participants[t.pk]
        _require_control(rows, a, actor)
        gm = _is_gm(rows, actor)
        if enc.status != Encounter.Status.RUNNING:
            raise CombatError("The encounter is not running.")
        if a.pk == t.pk:
            raise CombatError("Choose someone else to attack.")
        if action not in (*omg.StrikeMode, *omg.Maneuver):
            raise CombatError("Choose a strike mode (fast, precise, mighty) or a maneuver.")
        if counterattack:
            if a.counterattacks < 1:
                raise CombatError(f"{a.name} has no counterattack.")
        elif enc.turn_id != a.pk and not gm:
            raise CombatError(f"It is not {a.name}'s turn.")
        if not a.can_act and not gm:
            raise CombatError(f"{a.name} cannot act ({a.get_state_display()}).")
        if zone is not None and zone.character_id != t.character_id:
            raise CombatError("That body zone is not the target's.")
        if zone is None and action not in (
            omg.Maneuver.FEINT,
            omg.Maneuver.DISARM,
            omg.Maneuver.THROW,
            omg.Maneuver.GRAPPLE,
            omg.Maneuver.SHOVE,
        ):
            raise CombatError("Choose the body zone to strike.")
        if weapon is not None and weapon.character_id != a.character_id:
            raise CombatError("That weapon is not the attacker's.")
        if Declaration.objects.filter(
            attacker=a, status__in=[Declaration.Status.PENDING, Declaration.Status.DEFENDED]
        ).exists():
            raise CombatConflict(f"{a.name} already has an attack waiting.")
        decl = Declaration.objects.create(
            encounter=enc,
            round=enc.round,
            attacker=a,
            target=t,
            zone=zone,
            weapon=weapon,
            action=action,
            counterattack=counterattack,
            # Declarations are born cancelled and opened through Changes, so that undoing
            # the declaration cancels it again.
            status=Declaration.Status.CANCELLED,
            created_by=actor,
        )
        rows.declarations[decl.pk] = decl
        ch = Changes()
        ready = action == omg.Maneuver.FEINT
        ch.set(decl, "status", Declaration.Status.DEFENDED if ready else Declaration.Status.PENDING)
        if counterattack:
            ch.set(a, "counterattacks", a.counterattacks - 1)
        how = f"{action} strike" if action in omg.StrikeMode else action
        where = f" ({zone.name})" if zone else ""
        with_ = f" with {weapon.name}" if weapon else ""
        counter = "Counterattack: " if counterattack else ""
        text = f"{counter}{a.name}: {how} at {t.name}{where}{with_}."
        entry = _log(
            rows,
            Kind.DECLARE,
            actor=actor,
            changes=ch,
            participant=a,
            declaration=decl,
            involves=(a, t),
            text=text,
            public_text=f"{counter}{a.name}: {how} at {t.name}{where}.",
        )
    return decl, entry


def declare_defense(*, declaration: Declaration, defense: str, actor: User) -> CombatLogEntry:
    """Step 2: dodge, parry or block, by the target's player or the GM."""
    defense = (defense or "").strip().lower()
    with transaction.atomic():
        rows = _lock(declaration.encounter_id)
        decl = Declaration.objects.select_for_update().get(pk=declaration.pk)
        rows.declarations[decl.pk] = decl
        t = _participant(rows, decl.target_id)
        _require_control(rows, t, actor)
        if decl.status not in (Declaration.Status.PENDING, Declaration.Status.DEFENDED):
            raise CombatConflict("This attack is no longer open.")
        if not decl.needs_defense:
            raise CombatError("A feint is met with Focus, not a defense mode.")
        if defense not in omg.DefenseMode:
            raise CombatError("Choose dodge, parry or block.")
        ch = Changes()
        ch.set(decl, "defense", defense)
        ch.set(decl, "status", Declaration.Status.DEFENDED.value)
        if not ch:
            raise CombatConflict(f"{t.name} already declared {defense}.")
        a = _participant(rows, decl.attacker_id)
        return _log(
            rows,
            Kind.DEFEND,
            actor=actor,
            changes=ch,
            participant=t,
            declaration=decl,
            involves=(a, t),
            text=f"{t.name} will {defense}.",
        )


def cancel_declaration(*, declaration: Declaration, actor: User) -> CombatLogEntry:
    with transaction.atomic():
        rows = _lock(declaration.encounter_id)
        decl = Declaration.objects.select_for_update().get(pk=declaration.pk)
        rows.declarations[decl.pk] = decl
        a = _participant(rows, decl.attacker_id)
        _require_control(rows, a, actor)
        if not decl.is_open:
            raise CombatConflict("This attack is no longer open.")
        ch = Changes()
        ch.set(decl, "status", Declaration.Status.CANCELLED.value)
        if decl.counterattack:
            ch.set(a, "counterattacks", a.counterattacks + 1)
        return _log(
            rows,
            Kind.CANCEL,
            actor=actor,
            changes=ch,
            participant=a,
            declaration=decl,
            involves=(a,),
            text=f"{a.name}'s attack was called off.",
        )


# --- The PvD and its odds ------------------------------------------------------------------


@dataclass(frozen=True)
class Setup:
    """Engine inputs of a declaration, as the sheets stand now."""

    pro: int
    dif: int
    attacker: omg.Attacker | None  # strikes only
    defender: omg.Defender | None
    feinted: bool


def _weight(c: Character) -> int:
    return c.weight or c.bzf * 14


def _feinted(decl: Declaration, a: Participant, t: Participant, round_: int) -> bool:
    """The attacker's feint on this target in this round strips its Melee Combat
    (docs/rules.md, "Maneuvers")."""
    info = t.conditions.get(omg.Condition.FEINTED.value)
    return bool(info) and info.get("by") == a.pk and info.get("round") == round_


def setup(
    decl: Declaration,
    *,
    attacker: Character,
    target: Character,
    weapon: Weapon | None,
    zone: BodyZone | None,
    levels: dict[tuple[int, str], int],
    defense: str | None,
    feinted: bool,
) -> Setup:
    """``levels`` maps (character pk, discipline name) to its level."""
    weapon_dsc = levels.get((attacker.pk, weapon_discipline(weapon.category)), 0) if weapon else 0
    melee_t = 0 if feinted else levels.get((target.pk, MELEE_COMBAT), 0)
    arm = zone.arm if zone else 0
    arm_bonus = zone.arm_bonus if zone else 0
    if decl.action in omg.StrikeMode:
        mode = omg.StrikeMode(decl.action)
        a = omg.Attacker(
            mode,
            getattr(attacker, omg.STRIKE_APTITUDE[mode].lower()),
            weapon_dsc,
            weapon.dmg if weapon else 0,
            weapon.bonus if weapon else 0,
        )
        d = None
        dif = 0
        if defense:
            dm = omg.DefenseMode(defense)
            d = omg.Defender(
                dm, getattr(target, omg.DEFENSE_APTITUDE[dm].lower()), melee_t, arm, arm_bonus
            )
            dif = d.dif
        return Setup(a.pro, dif, a, d, feinted)
    kind = omg.Maneuver(decl.action)
    melee_a = levels.get((attacker.pk, MELEE_COMBAT), 0)
    p = omg.maneuver_pro(kind, getattr(attacker, omg.MANEUVER_APTITUDE[kind].lower()), melee_a)
    if kind is omg.Maneuver.FEINT:
        dif = omg.dif(omg.score(target.foc, melee_t))
    elif defense:
        dm = omg.DefenseMode(defense)
        dif = omg.defense_dif(dm, getattr(target, omg.DEFENSE_APTITUDE[dm].lower()), melee_t)
    else:
        dif = 0
    return Setup(p, dif, None, None, feinted)


def _levels_of(*characters: Character) -> dict[tuple[int, str], int]:
    return {(c.pk, d.name): d.level for c in characters for d in c.disciplines.all()}


def declaration_odds(decl: Declaration) -> dict[str, Any]:
    """PvD and exact odds per defense mode (the declared one only, once declared). Expects
    the declaration's attacker and target characters with disciplines prefetched."""
    a_p, t_p = decl.attacker, decl.target
    a, t = a_p.character, t_p.character
    levels = _levels_of(a, t)
    feinted = _feinted(decl, a_p, t_p, decl.encounter.round)
    modes = [decl.defense] if decl.defense else [m.value for m in omg.DefenseMode]
    if not decl.needs_defense:
        modes = [""]
    out: dict[str, Any] = {}
    for mode in modes:
        s = setup(
            decl,
            attacker=a,
            target=t,
            weapon=decl.weapon,
            zone=decl.zone,
            levels=levels,
            defense=mode or None,
            feinted=feinted,
        )
        if s.attacker is not None and s.defender is not None:
            so = odds.strike_odds(s.attacker, s.defender)
            co = so.check
            hit = co.hits
            out[mode or "focus"] = {
                "pvd": f"{s.pro}v{s.dif}",
                "pro": s.pro,
                "dif": s.dif,
                "hit": hit,
                "second_hit": co.second_hit if s.attacker.fast else 0,
                "epic_success": co.counts[omg.Degree.EPIC_SUCCESS],
                "epic_failure": co.counts[omg.Degree.EPIC_FAILURE],
                "mean_damage": round(float(so.mean_damage), 2),
            }
        else:
            co = odds.check_odds(s.pro, s.dif)
            out[mode or "focus"] = {
                "pvd": f"{s.pro}v{s.dif}",
                "pro": s.pro,
                "dif": s.dif,
                "hit": co.hits,
                "second_hit": 0,
                "epic_success": co.counts[omg.Degree.EPIC_SUCCESS],
                "epic_failure": co.counts[omg.Degree.EPIC_FAILURE],
                "mean_damage": None,
            }
    return out


def odds_for_viewer(decl: Declaration, hidden: set[int]) -> dict[str, Any] | None:
    """:func:`declaration_odds` as a viewer may see them when ``hidden`` participants' numbers
    are kept from them: their own side's number stays (a player facing a hidden NPC still
    sees their PRO, or their DIF per defense mode), the hidden side's becomes None ("?" in
    the PvD), and so does everything computed from both (hit chances, epics, damage), which
    would give the hidden number away. None when both sides are hidden."""
    show_pro = decl.attacker_id not in hidden
    show_dif = decl.target_id not in hidden
    if not (show_pro or show_dif):
        return None
    full = declaration_odds(decl)
    if show_pro and show_dif:
        return full
    masked: dict[str, Any] = {}
    for mode, o in full.items():
        pro = o["pro"] if show_pro else None
        dif = o["dif"] if show_dif else None
        masked[mode] = {
            "pvd": f"{'?' if pro is None else pro}v{'?' if dif is None else dif}",
            "pro": pro,
            "dif": dif,
            **dict.fromkeys(("hit", "second_hit", "epic_success", "epic_failure")),
            "mean_damage": None,
        }
    return masked


# --- Resolution ----------------------------------------------------------------------------


def _roll(roll: int | None, rng: random.Random | None) -> tuple[int, bool]:
    if roll is not None:
        if isinstance(roll, bool) or not isinstance(roll, int) or not 1 <= roll <= 100:
            raise CombatError("A d100 roll is a whole number from 1 to 100 (00 is 100).")
        return roll, True
    return (rng or random.SystemRandom()).randint(1, 100), False


def _wound(
    rows: Rows, ch: Changes, t: Participant, zone: BodyZone, damages: list[int], wear: int
) -> dict[str, Any]:
    """Hits on a zone in order, then the armor wear; Vitality, grievous wound, Stamina test
    prompt and "down" follow the rules (rules.engine.omg.take_damage)."""
    c = t.character
    v0 = max(0, min(c.vitality, 1000))
    rz = omg.Zone(zone.name, wounds=zone.wounds, grievous=bool(zone.grievous))
    vit = v0
    grievous = False
    for dmg in damages:
        w = omg.take_damage(rz, dmg, bzf=c.bzf, vitality=vit)
        rz, vit = w.zone, w.vitality
        grievous = grievous or w.grievous
    ch.set(zone, "wounds", rz.wounds)
    if wear:
        ch.set(zone, "arm", max(0, zone.arm - wear))
    if grievous:
        ch.set(zone, "grievous", GRIEVOUS_NOTE)
        ch.set(t, "stamina_due", True)
    lost = v0 - vit
    if lost:
        ch.set(c, "vitality", c.vitality - lost)
    if lost and vit == 0 and t.state == Participant.State.ACTIVE:
        ch.set(t, "state", Participant.State.DOWN.value)
    return {"vit_loss": lost, "vitality": c.vitality, "grievous": grievous, "down": vit == 0}


def _epic(rows: Rows, ch: Changes, c: Character, discipline: str | None, check: Any) -> None:
    """EXP on the discipline used and Fate on an epic roll (RULES.md, "Advancement"). Without
    the discipline on the sheet the mark goes to the sheet's general EXP marks."""
    if check.exp:
        row = rows.discipline_row(c, discipline) if discipline else None
        if row is not None:
            ch.set(row, "exp_marks", row.exp_marks + check.exp)
        else:
            ch.set(c, "exp_marks", c.exp_marks + check.exp)
    if check.fate:
        ch.set(c, "fate", min(1000, max(0, c.fate + check.fate)))


def _apply_resolution(
    rows: Rows, decl: Declaration, value: int, ch: Changes
) -> tuple[dict[str, Any], str, str]:
    enc = rows.encounter
    a_p = rows.participants[decl.attacker_id]
    t_p = rows.participants[decl.target_id]
    a, t = a_p.character, t_p.character
    zone = rows.zones.get(decl.zone_id) if decl.zone_id else None
    weapon = rows.weapons.get(decl.weapon_id) if decl.weapon_id else None
    if decl.zone_id and zone is None:
        raise CombatConflict("The targeted zone no longer exists.")
    levels = {(d.character_id, d.name): d.level for d in rows.disciplines.values()}
    feinted = _feinted(decl, a_p, t_p, enc.round)
    s = setup(
        decl,
        attacker=a,
        target=t,
        weapon=weapon,
        zone=zone,
        levels=levels,
        defense=decl.defense or None,
        feinted=feinted,
    )
    if feinted:
        conditions = dict(t_p.conditions)
        conditions.pop(omg.Condition.FEINTED.value, None)
        ch.set(t_p, "conditions", conditions)
    ch.set(decl, "status", Declaration.Status.RESOLVED.value)
    where = f"'s {zone.name}" if zone else ""
    if s.attacker is not None and s.defender is not None:
        r = omg.strike(s.attacker, s.defender, value)
        result = r.as_dict()
        if zone is not None and r.hits:
            result["wounds"] = _wound(rows, ch, t_p, zone, [h.damage for h in r.hits], r.armor_wear)
        elif zone is not None and r.armor_wear:
            ch.set(zone, "arm", r.arm_after)
        if weapon is not None and r.weapon_wear:
            ch.set(weapon, "dmg", r.weapon_dmg_after)
        if r.counterattack:
            ch.set(t_p, "counterattacks", t_p.counterattacks + 1)
        _epic(rows, ch, a, weapon_discipline(weapon.category) if weapon else None, r.check)
        label = r.degree.label + (f" ({r.check.abbr})" if r.check.abbr else "")
        parts = [f"{a.name} {decl.action} strike at {t.name}{where} vs {decl.defense}"]
        parts.append(f"{r.check.pvd}, rolled {value}: {label}.")
        if r.hits:
            dmg = " + ".join(str(h.damage) for h in r.hits)
            parts.append(f"{len(r.hits)} hit{'s' if len(r.hits) > 1 else ''}, {dmg} damage.")
            w = result.get("wounds", {})
            if w.get("vit_loss"):
                parts.append(f"{t.name} loses {w['vit_loss']} Vitality.")
            if w.get("grievous"):
                parts.append("Grievous wound: Stamina test!")
            if w.get("down"):
                parts.append(f"{t.name} is down.")
        if r.armor_wear:
            parts.append("Armor destroyed." if r.armor_destroyed else "Armor worn by 1.")
        if r.weapon_wear:
            parts.append(
                f"{weapon.name} destroyed." if r.weapon_destroyed else f"{weapon.name} loses 1 DMG."  # type: ignore[union-attr]
            )
        if r.counterattack:
            parts.append(f"{t.name} gains a counterattack.")
        if feinted:
            parts.append("The feint left no Melee defense.")
        public = f"{a.name} {decl.action} strike at {t.name}{where}: " + (
            "hit." if r.hits else "miss."
        )
        return result, " ".join(parts), public
    kind = omg.Maneuver(decl.action)
    m = omg.maneuver(
        kind,
        apt=getattr(a, omg.MANEUVER_APTITUDE[kind].lower()),
        melee=levels.get((a.pk, MELEE_COMBAT), 0),
        defense_apt=t.foc
        if kind is omg.Maneuver.FEINT
        else getattr(t, omg.DEFENSE_APTITUDE[omg.DefenseMode(decl.defense)].lower()),
        defense_melee=0 if feinted else levels.get((t.pk, MELEE_COMBAT), 0),
        defense=decl.defense or None,
        roll=value,
        attacker_weight=_weight(a),
        target_weight=_weight(t),
        attacker_mov=omg.derived(
            aptitudes_of(a), bzf=a.bzf, yards_per_height=a.yards_per_height
        ).mov,
        weapon_dmg=weapon.dmg if weapon else 0,
        weapon_bonus=weapon.bonus if weapon else 0,
        arm=zone.arm if zone else 0,
        arm_bonus=zone.arm_bonus if zone else 0,
    )
    result = {
        **m.check.as_dict(),
        "maneuver": kind.value,
        "condition": m.condition.value if m.condition else None,
        "too_heavy": m.too_heavy,
        "stamina_test": m.stamina_test,
        "shove_yards": m.shove_yards,
        "hits": [],
    }
    if m.condition is not None:
        conditions = dict(t_p.conditions)
        conditions[m.condition.value] = {"by": a_p.pk, "round": enc.round}
        ch.set(t_p, "conditions", conditions)
    if m.hit is not None and zone is not None:
        result["hits"] = [{"roll": m.hit.roll, "damage": m.hit.damage, "raw": m.hit.raw}]
        result["wounds"] = _wound(rows, ch, t_p, zone, [m.hit.damage], m.hit.armor_wear)
    if m.stamina_test:
        ch.set(t_p, "stamina_due", True)
    _epic(rows, ch, a, MELEE_COMBAT, m.check)
    label = m.check.degree.label + (f" ({m.check.abbr})" if m.check.abbr else "")
    against = "Focus" if kind is omg.Maneuver.FEINT else decl.defense
    text = f"{a.name} tries to {kind.value} {t.name} vs {against}, {m.check.pvd}, "
    text += f"rolled {value}: {label}."
    if m.too_heavy:
        text += f" {t.name} is too heavy: no effect."
    elif m.condition is not None:
        text += f" {t.name} is {m.condition.value}."
        if m.hit is not None:
            text += f" {m.hit.damage} damage; Stamina test!"
        if m.shove_yards:
            text += f" Shoved {m.shove_yards} yd."
    outcome = f"{t.name} is {m.condition.value}." if m.condition else "no effect."
    return result, text, f"{a.name} tries to {kind.value} {t.name}: {outcome}"


def _resolution_rows(decl: Declaration, *extra_participants: int) -> Rows:
    rows = _lock(decl.encounter_id)
    ids = {rows.participants[decl.attacker_id].character_id}
    ids.add(rows.participants[decl.target_id].character_id)
    for pk in extra_participants:
        ids.add(_participant(rows, pk).character_id)
    return _lock(decl.encounter_id, characters=ids)


def resolve(
    *,
    declaration: Declaration,
    actor: User,
    roll: int | None = None,
    rng: random.Random | None = None,
) -> CombatLogEntry:
    """Steps 4-5: the attacker's d100 (server dice from ``rng``, or the typed ``roll`` of
    physical dice) resolved by the engine and applied in one transaction. A declaration
    resolves once: a second press finds it resolved and raises CombatConflict."""
    value, physical = _roll(roll, rng)
    with transaction.atomic():
        rows = _resolution_rows(declaration)
        decl = Declaration.objects.select_for_update().get(pk=declaration.pk)
        rows.declarations[decl.pk] = decl
        a_p = rows.participants[decl.attacker_id]
        _require_control(rows, a_p, actor)
        if decl.status == Declaration.Status.RESOLVED:
            raise CombatConflict("This attack has already been rolled.")
        if decl.status == Declaration.Status.CANCELLED:
            raise CombatConflict("This attack was called off.")
        if decl.status == Declaration.Status.PENDING:
            raise CombatError("Wait for the defense before rolling.")
        ch = Changes()
        try:
            result, text, public = _apply_resolution(rows, decl, value, ch)
        except RulesError as exc:
            raise CombatError(str(exc)) from exc
        return _log(
            rows,
            Kind.ROLL,
            actor=actor,
            changes=ch,
            participant=a_p,
            declaration=decl,
            involves=(a_p, rows.participants[decl.target_id]),
            roll=value,
            physical=physical,
            text=text,
            public_text=public,
            result=result,
        )


def stamina_check(
    *,
    participant: Participant,
    actor: User,
    roll: int | None = None,
    rng: random.Random | None = None,
    difficulty: int = STAMINA_DIF,
) -> CombatLogEntry:
    """The Stamina test a grievous wound or a stun calls for; failure knocks out. Only
    when one is due: a second press (or a test nothing called for) is refused with
    CombatConflict, so one wound never gets two rolls."""
    value, physical = _roll(roll, rng)
    if not omg.DIF_MIN <= difficulty <= omg.DIF_MAX:
        raise CombatError("The difficulty is a number from 5 to 50.")
    with transaction.atomic():
        rows = _lock(participant.encounter_id)
        p = _participant(rows, participant.pk)
        rows = _lock(participant.encounter_id, characters={p.character_id})
        p = rows.participants[p.pk]
        _require_control(rows, p, actor)
        if not p.stamina_due:
            raise CombatConflict(
                f"No Stamina test is due for {p.name}: nothing calls for one, or it was "
                "already rolled."
            )
        c = p.character
        result = omg.stamina_test(c.nrv + c.vgr, difficulty, value)
        ch = Changes()
        ch.set(p, "stamina_due", False)
        if not result.success and p.state == Participant.State.ACTIVE:
            ch.set(p, "state", Participant.State.UNCONSCIOUS.value)
        verdict = "stays conscious" if result.success else "is knocked out"
        return _log(
            rows,
            Kind.STAMINA,
            actor=actor,
            changes=ch,
            participant=p,
            involves=(p,),
            roll=value,
            physical=physical,
            text=f"{p.name}'s Stamina test {result.pvd}, rolled {value}: {verdict}.",
            public_text=f"{p.name}'s Stamina test: {verdict}.",
            result=result.as_dict(),
        )


# --- Undo and Fate -------------------------------------------------------------------------


def _inactive(encounter: Encounter) -> set[int]:
    """Entries whose effects are currently undone. An entry that reverts another deactivates
    it; undoing that reverting entry (a Fate spend) brings the first back."""
    entries = list(
        CombatLogEntry.objects.filter(encounter=encounter)
        .exclude(reverts=None)
        .order_by("seq")
        .values_list("pk", "reverts_id")
    )
    reverts_of = dict(entries)
    inactive: set[int] = set()
    for _pk, target in entries:
        inactive.add(target)
        if target in reverts_of:
            inactive.discard(reverts_of[target])
    return inactive


def _revert(rows: Rows, entry: CombatLogEntry, ch: Changes) -> None:
    """Write back the entry's before values, newest change first, after checking each field
    still holds the value the entry left in it."""
    for c in reversed(entry.changes):
        obj = rows.get(c["model"], c["pk"])
        if obj is None:
            raise CombatConflict(f"A {c['model']} this changed no longer exists.")
        if getattr(obj, c["field"]) != c["after"]:
            raise CombatConflict(
                f"{c['model']} {c['field']} was changed elsewhere since; correct it by hand."
            )
        ch.set(obj, c["field"], c["before"])


def _rows_for(encounter_id: int, entries: list[CombatLogEntry], *participants: int) -> Rows:
    rows = _lock(encounter_id)
    ids: set[int] = set()
    decls: set[int] = set()
    for entry in entries:
        for c in entry.changes:
            if c["model"] == "character":
                ids.add(c["pk"])
            elif c["model"] in SHEET_ROWS:
                ids.add(c["char"])
            elif c["model"] == "declaration":
                decls.add(c["pk"])
    for pk in participants:
        ids.add(_participant(rows, pk).character_id)
    rows = _lock(encounter_id, characters=ids)
    rows.declarations = {
        d.pk: d
        for d in Declaration.objects.select_for_update().filter(
            encounter_id=encounter_id, pk__in=decls
        )
    }
    return rows


def undo_target(encounter: Encounter) -> CombatLogEntry | None:
    """The latest entry whose effects are in force and can be undone."""
    inactive = _inactive(encounter)
    for entry in (
        CombatLogEntry.objects.filter(encounter=encounter)
        .exclude(kind__in=[Kind.UNDO, Kind.JOIN, Kind.CREATE])
        .order_by("-seq")
        .iterator(chunk_size=20)  # the target is nearly always among the newest
    ):
        if entry.pk not in inactive and entry.changes:
            return entry
    return None


def undo_last(*, encounter: Encounter, actor: User) -> CombatLogEntry:
    """The GM takes back the last action: a compensating entry restores every value it
    changed. Repeat to go further back."""
    with transaction.atomic():
        rows = _lock(encounter)
        _require_gm(rows, actor)
        target = undo_target(rows.encounter)
        if target is None:
            raise CombatError("Nothing to undo.")
        # A Fate re-roll is one step: its new roll and the Fate spend go back together.
        # Undoing the roll alone would reopen the attack, and its attacker may have declared
        # another one since (one open attack each).
        spend = _fate_spend_of(target)
        targets = [target] if spend is None else [target, spend]
        rows = _rows_for(encounter.pk, targets)
        steps = []
        for t in targets:  # reverted on the same loaded rows; nothing is saved before both
            ch = Changes()
            _revert(rows, t, ch)
            steps.append((t, ch))
        undos = [
            _log(
                rows,
                Kind.UNDO,
                actor=actor,
                changes=ch,
                reverts=t,
                participant=t.participant,
                declaration=t.declaration,
                involves=tuple(rows.participants.get(pk) for pk in t.payload.get("involves", [])),
                text=f"Undone: {t.text}",
                public_text=f"Undone: {t.payload.get('public_text', t.kind)}",
            )
            for t, ch in steps
        ]
        return undos[0]


def _fate_spend_of(entry: CombatLogEntry) -> CombatLogEntry | None:
    """The Fate entry that made ``entry`` a re-roll, if it is one."""
    original = entry.payload.get("reroll_of") if entry.kind == Kind.ROLL else None
    if original is None:
        return None
    spend = (
        CombatLogEntry.objects.filter(
            encounter_id=entry.encounter_id, kind=Kind.FATE, reverts_id=original
        )
        .order_by("-seq")
        .first()
    )
    if spend is None or spend.pk in _inactive(entry.encounter):
        return None
    return spend


def latest_roll(encounter: Encounter) -> CombatLogEntry | None:
    """The table's latest roll still in force (strike, maneuver or Stamina test)."""
    inactive = _inactive(encounter)
    for entry in (
        CombatLogEntry.objects.filter(encounter=encounter, roll__isnull=False)
        .exclude(kind=Kind.FATE)
        .order_by("-seq")
        .iterator(chunk_size=20)
    ):
        if entry.pk not in inactive:
            return entry
    return None


def fate_spenders(entry: CombatLogEntry, user: User) -> list[Participant]:
    """The participants ``user`` may spend Fate from on this roll (their own characters in
    the encounter, any NPC for the GM)."""
    if not user.is_authenticated:
        return []
    return list(
        entry.encounter.participants.filter(character__owner=user).select_related("character")
    )


def spend_fate(
    *,
    entry: CombatLogEntry,
    spender: Participant,
    action: str,
    actor: User,
    roll: int | None = None,
    rng: random.Random | None = None,
) -> tuple[CombatLogEntry, CombatLogEntry | None]:
    """1 Fate from ``spender`` re-rolls or revokes the latest roll while no later roll exists
    (RULES.md, "Fate"): its effects are undone exactly, then (re-roll) the same declaration
    is resolved again. Returns the Fate entry and the new roll's entry (re-roll only)."""
    if action not in omg.FateAction:
        raise CombatError("Spend Fate to reroll or revoke.")
    value, physical = _roll(roll, rng) if action == omg.FateAction.REROLL else (0, False)
    with transaction.atomic():
        rows = _lock(entry.encounter_id)
        entry = CombatLogEntry.objects.select_related("declaration").get(pk=entry.pk)
        if entry.kind != Kind.ROLL or entry.declaration is None:
            raise CombatError("Fate re-rolls or revokes an attack's roll.")
        latest = latest_roll(rows.encounter)
        if latest is None or latest.pk != entry.pk:
            raise CombatConflict("Only the latest roll can be re-rolled or revoked.")
        s = _participant(rows, spender.pk)
        _require_control(rows, s, actor)
        if s.character.owner_id != actor.pk:
            raise PermissionDenied("Fate is spent by the character's own player.")
        rows = _rows_for(entry.encounter_id, [entry], s.pk, entry.declaration.attacker_id)
        s = rows.participants[s.pk]
        decl = rows.declarations.get(entry.declaration_id)
        if decl is None:
            raise CombatConflict("The attack of this roll is gone.")
        ch = Changes()
        _revert(rows, entry, ch)
        c = s.character
        if c.fate < 1:
            raise CombatError(f"{c.name} has no Fate to spend.")
        ch.set(c, "fate", c.fate - 1)
        if action == omg.FateAction.REVOKE:
            # The attack stays spent: revoked, not merely undone.
            ch.set(decl, "status", Declaration.Status.CANCELLED.value)
        involves = tuple(rows.participants.get(pk) for pk in entry.payload.get("involves", []))
        verb = "re-rolls" if action == omg.FateAction.REROLL else "revokes"
        ch3 = Changes()
        if action == omg.FateAction.REROLL:
            # Resolved again before anything is saved: the attack is never seen open in the
            # database, where another open attack of the same attacker may exist.
            result, text, public = _apply_resolution(rows, decl, value, ch3)
        fate_entry = _log(
            rows,
            Kind.FATE,
            actor=actor,
            changes=ch,
            reverts=entry,
            participant=s,
            declaration=decl,
            involves=(*involves, s),
            text=f"{s.name} spends 1 Fate and {verb} roll {entry.roll}.",
            action=action,
        )
        if action == omg.FateAction.REVOKE:
            return fate_entry, None
        new = _log(
            rows,
            Kind.ROLL,
            actor=actor,
            changes=ch3,
            participant=rows.participants[decl.attacker_id],
            declaration=decl,
            involves=involves,
            roll=value,
            physical=physical,
            text=f"Re-roll: {text}",
            public_text=f"Re-roll: {public}",
            result=result,
            reroll_of=entry.pk,
        )
        return fate_entry, new


# --- Manual damage and healing -------------------------------------------------------------


def adjust_zone(
    *, encounter: Encounter, zone: BodyZone, amount: int, actor: User
) -> CombatLogEntry:
    """The GM's damage (``amount`` > 0) or healing (< 0) on a participant's zone, with
    Vitality, grievous wound and "down" as for a hit (rules.engine.omg.take_damage / heal)."""
    if isinstance(amount, bool) or not isinstance(amount, int) or amount == 0:
        raise CombatError("Give a number of wounds to add (or, negative, to heal).")
    if abs(amount) > 1000:
        raise CombatError("At most 1000 wounds at once.")
    with transaction.atomic():
        rows = _lock(encounter)
        _require_gm(rows, actor)
        p = next(
            (p for p in rows.participants.values() if p.character_id == zone.character_id), None
        )
        if p is None:
            raise CombatError("That zone belongs to nobody in this encounter.")
        rows = _lock(encounter, characters={p.character_id})
        p = rows.participants[p.pk]
        z = rows.zones.get(zone.pk)
        if z is None:
            raise CombatConflict("That zone no longer exists.")
        ch = Changes()
        c = p.character
        if amount > 0:
            info = _wound(rows, ch, p, z, [amount], 0)
            text = f"GM: {amount} damage to {c.name}'s {z.name}"
            text += f", {info['vit_loss']} Vitality lost." if info["vit_loss"] else "."
            kind = Kind.DAMAGE
        else:
            max_vit = omg.derived(aptitudes_of(c), bzf=c.bzf).vit
            vit = max(0, min(c.vitality, max_vit))
            h = omg.heal(
                omg.Zone(z.name, wounds=z.wounds),
                -amount,
                bzf=c.bzf,
                vitality=vit,
                max_vitality=max_vit,
            )
            ch.set(z, "wounds", h.zone.wounds)
            if h.vit_gain:
                ch.set(c, "vitality", c.vitality + h.vit_gain)
            text = f"GM: {c.name}'s {z.name} healed by {h.healed}"
            text += f", {h.vit_gain} Vitality back." if h.vit_gain else "."
            kind = Kind.HEAL
        if not ch:
            raise CombatError("That changes nothing.")
        return _log(
            rows,
            kind,
            actor=actor,
            changes=ch,
            participant=p,
            involves=(p,),
            text=text,
            public_text=f"GM: {c.name}'s {z.name} {'wounded' if amount > 0 else 'healed'}.",
        )
