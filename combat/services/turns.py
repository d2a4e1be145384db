"""Initiative and turns: start, roll initiative, next turn, give the turn, finish, delete."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied
from django.db import transaction

from combat import conditions, record
from combat.models import CombatLogEntry, Declaration, Encounter, Participant
from combat.services.rows import (
    Changes,
    CombatConflict,
    CombatError,
    Kind,
    Rows,
    lock,
    log,
)
from rules.engine import omg
from sheets.numbers import aptitudes_of
from sheets.randomness import server_rng

if TYPE_CHECKING:
    # Whoever acts, signed in or not (the services refuse the latter themselves).
    from sheets.users import AnyUser as User


def _order(rows: Rows) -> list[Participant]:
    return sorted(rows.participants.values(), key=lambda p: (p.position, p.pk))


def _initiative(rows: Rows, ch: Changes, rng: random.Random) -> list[Participant]:
    """Fill missing ITV (the character's daily ITV, rolled and kept on the sheet when
    missing), double it on alert, and order them (docs/rules.md, "Initiative"): ITV, SPD, FOC,
    the GM's order."""
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
    rng = rng or server_rng()
    with transaction.atomic():
        rows = lock(encounter, actor=actor)
        rows.require_gm(actor)
        rows.lock_sheets(_character_ids(rows))
        enc = rows.encounter
        if enc.status != Encounter.Status.PREPARING:
            raise CombatConflict("This encounter has already started.")
        if not rows.participants:
            raise CombatError("Add participants before starting.")
        ch = Changes()
        ordered = _initiative(rows, ch, rng)
        first = next((p for p in ordered if p.can_act), ordered[0])
        ended: list[str] = []
        _turns_come(ch, ordered[: ordered.index(first) + 1], ended)
        ch.set(enc, "status", Encounter.Status.RUNNING.value)
        ch.set(enc, "round", 1)
        ch.set(enc, "turn_id", first.pk)
        order = ", ".join(f"{p.name} {p.initiative}" for p in ordered)
        return log(
            rows,
            Kind.START,
            actor=actor,
            changes=ch,
            participant=first,
            text=f"Round 1. Initiative: {order}. {first.name} acts first.{_ended_text(ended)}",
            public_text=f"Round 1. Order: {', '.join(p.name for p in ordered)}."
            + _ended_text(ended),
            involves=tuple(ordered),
        )


def roll_initiative(
    *, encounter: Encounter, actor: User, rng: random.Random | None = None
) -> CombatLogEntry:
    """Order again (after on-alert or tie-break changes); missing ITVs are rolled."""
    rng = rng or server_rng()
    with transaction.atomic():
        rows = lock(encounter, actor=actor)
        rows.require_gm(actor)
        rows.lock_sheets(_character_ids(rows))
        if not rows.participants:
            raise CombatError("Add participants first.")
        ch = Changes()
        ordered = _initiative(rows, ch, rng)
        order = ", ".join(f"{p.name} {p.initiative}" for p in ordered)
        return log(
            rows,
            Kind.INITIATIVE,
            actor=actor,
            changes=ch,
            text=f"Initiative: {order}.",
            public_text=f"Order: {', '.join(p.name for p in ordered)}.",
            involves=tuple(ordered),
        )


def _new_round(
    rows: Rows, ch: Changes, include_skipped: bool, ended: list[str]
) -> Participant | None:
    """Round + 1: counterattacks and the last round's conditions go (docs/rules.md,
    "Conditions"); then the first in order who can act has the turn, and those passed over
    before them have had theirs."""
    enc = rows.encounter
    new = enc.round + 1
    ch.set(enc, "round", new)
    ch.set(enc, "countering", False)
    for p in _order(rows):
        ch.set(p, "counterattacks", 0)
        kept, gone = conditions.at_new_round(p.conditions, new)
        ch.set(p, "conditions", kept)
        ended.extend(f"{p.name} is no longer {label.lower()}" for label in gone)
    ordered = _order(rows)
    nxt = next((p for p in ordered if include_skipped or p.can_act), None)
    _turns_come(ch, ordered[: ordered.index(nxt) + 1] if nxt else ordered, ended)
    return nxt


def _turns_come(ch: Changes, participants: list[Participant], ended: list[str]) -> None:
    """Their turns come, acted or passed over: what lasts until their next turn ends. A
    stunned participant is passed over and so loses exactly that one turn."""
    for p in participants:
        kept, gone = conditions.at_turn(p.conditions)
        ch.set(p, "conditions", kept)
        ended.extend(f"{p.name} is no longer {label.lower()}" for label in gone)


def _ended_text(ended: list[str]) -> str:
    return "".join(f" {line}." for line in ended)


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
        rows = lock(encounter, actor=actor)
        enc = rows.encounter
        current = rows.participants.get(enc.turn_id) if enc.turn_id else None
        if not (rows.is_gm(actor) or (current is not None and current.is_controlled_by(actor))):
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
        ended: list[str] = []
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
            # Those passed over on the way have had their turn (docs/rules.md, "Conditions").
            _turns_come(ch, after[: after.index(nxt) + 1] if nxt else after, ended)
            if nxt is None:
                nxt = next((p for p in ordered if p.counterattacks and p.can_act), None)
                countering = nxt is not None
        if nxt is None:
            nxt = _new_round(rows, ch, include_skipped, ended)
            text = f"Round {enc.round}." + (f" {nxt.name} acts." if nxt else " Nobody can act.")
        elif countering:
            ch.set(enc, "countering", True)
            text = f"Before the round ends: {nxt.name}'s counterattack."
        else:
            text = f"{nxt.name}'s turn."
        ch.set(enc, "turn_id", nxt.pk if nxt else None)
        return log(
            rows,
            Kind.TURN,
            actor=actor,
            changes=ch,
            participant=nxt,
            text=text + _ended_text(ended),
            involves=(),
        )


def set_turn(*, encounter: Encounter, participant: Participant, actor: User) -> CombatLogEntry:
    """The GM gives the turn to anyone, skipped or not."""
    with transaction.atomic():
        rows = lock(encounter, actor=actor)
        rows.require_gm(actor)
        if rows.encounter.status != Encounter.Status.RUNNING:
            raise CombatError("The encounter is not running.")
        p = rows.participant(participant.pk)
        ch = Changes()
        ch.set(rows.encounter, "turn_id", p.pk)
        if not ch:
            raise CombatError(f"It is already {p.name}'s turn.")
        ended: list[str] = []
        _turns_come(ch, [p], ended)
        return log(
            rows,
            Kind.TURN,
            actor=actor,
            changes=ch,
            participant=p,
            text=f"{p.name}'s turn (GM).{_ended_text(ended)}",
        )


def finish_encounter(*, encounter: Encounter, actor: User) -> CombatLogEntry:
    with transaction.atomic():
        rows = lock(encounter, actor=actor)
        rows.require_gm(actor)
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
        entry = log(rows, Kind.FINISH, actor=actor, changes=ch, text="The fight is over.")
        # The record keeps the sheets as they are now, in the transaction that ends the fight
        # (not in the log's changes: those reach players for an entry involving nobody hidden).
        rows.encounter.record = record.take_snapshot(rows.encounter)
        Encounter.objects.filter(pk=rows.encounter.pk).update(record=rows.encounter.record)
        return entry


def delete_encounter(*, encounter: Encounter, actor: User) -> None:
    """The GM deletes an encounter being prepared, or one that is over, with its log. A
    running fight is refused (end it first): its players may be acting in it right now.
    Unlike the other services this writes no log entry: the log goes with the encounter."""
    with transaction.atomic():
        rows = lock(encounter, actor=actor)
        rows.require_gm(actor)
        if rows.encounter.status == Encounter.Status.RUNNING:
            raise CombatConflict("This fight is running: end it before deleting the encounter.")
        # The log is append-only for the application; it is deleted here only as part of its
        # encounter, by the cascade (which bypasses CombatLogEntry.delete).
        rows.encounter.delete()
