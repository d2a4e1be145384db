"""Undo and Fate: both write an entry's before values back, in a new entry, after checking
that nothing changed them since."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from django.core.exceptions import PermissionDenied
from django.db import transaction

from combat.models import CombatLogEntry, Declaration, Encounter, Participant
from combat.outcome import StaminaOutcome
from combat.services.resolution import (
    apply_resolution,
    apply_stamina,
    require_not_over,
    roll_value,
)
from combat.services.rows import (
    SHEET_ROWS,
    Changes,
    CombatConflict,
    CombatError,
    Kind,
    Rows,
    lock,
    log,
)
from rules.engine import omg

if TYPE_CHECKING:
    # Whoever acts, signed in or not (the services refuse the latter themselves).
    from sheets.users import AnyUser as User


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


def _lock_changed(rows: Rows, entries: list[CombatLogEntry], *participants: int) -> None:
    """Lock, into ``rows``, what ``entries`` changed and the sheets of ``participants``: the
    declarations, then the characters with their zones, weapons and disciplines (the fixed
    order)."""
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
        ids.add(rows.participant(pk).character_id)
    if decls:
        rows.declarations = {
            d.pk: d
            for d in Declaration.objects.select_for_update()
            .filter(encounter_id=rows.encounter.pk, pk__in=sorted(decls))
            .order_by("pk")
        }
    rows.lock_sheets(ids)


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
        rows = lock(encounter, actor=actor)
        rows.require_gm(actor)
        target = undo_target(rows.encounter)
        if target is None:
            raise CombatError("Nothing to undo.")
        # A Fate re-roll is one step: its new roll and the Fate spend go back together.
        # Undoing the roll alone would reopen the attack, and its attacker may have declared
        # another one since (one open attack each).
        spend = _fate_spend_of(target)
        targets = [target] if spend is None else [target, spend]
        _lock_changed(rows, targets)
        steps = []
        for t in targets:  # reverted on the same loaded rows; nothing is saved before both
            ch = Changes()
            _revert(rows, t, ch)
            steps.append((t, ch))
        undos = [
            log(
                rows,
                Kind.UNDO,
                actor=actor,
                changes=ch,
                reverts=t,
                participant=t.participant,
                declaration=t.declaration,
                involves=tuple(rows.participants.get(pk) for pk in t.involves),
                text=f"Undone: {t.text}",
                public_text=f"Undone: {t.public_text}",
            )
            for t, ch in steps
        ]
        if rows.encounter.status != Encounter.Status.FINISHED and rows.encounter.record:
            # The end of the fight undone: its record is read live again, and taken anew when
            # it ends again.
            rows.encounter.record = None
            Encounter.objects.filter(pk=rows.encounter.pk).update(record=None)
        return undos[0]


def _fate_spend_of(entry: CombatLogEntry) -> CombatLogEntry | None:
    """The Fate entry that made ``entry`` a re-roll, if it is one."""
    original = entry.reroll_of if entry.kind in (Kind.ROLL, Kind.STAMINA) else None
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
    (docs/rules.md, "Fate"): its effects are undone exactly, then (re-roll) the same declaration
    is resolved again, or the same Stamina test rolled again against the same DIF. Returns
    the Fate entry and the new roll's entry (re-roll only). Once the fight is over, or with
    no Fate left, CombatError."""
    if action not in omg.FateAction:
        raise CombatError("Spend Fate to reroll or revoke.")
    value, physical = roll_value(roll, rng) if action == omg.FateAction.REROLL else (0, False)
    with transaction.atomic():
        rows = lock(entry.encounter_id, actor=actor)
        entry = CombatLogEntry.objects.select_related("declaration").get(pk=entry.pk)
        stamina = entry.kind == Kind.STAMINA and entry.participant_id is not None
        if not stamina and (entry.kind != Kind.ROLL or entry.declaration is None):
            raise CombatError("Fate re-rolls or revokes a roll: an attack's or a Stamina test.")
        latest = latest_roll(rows.encounter)
        if latest is None or latest.pk != entry.pk:
            raise CombatConflict("Only the latest roll can be re-rolled or revoked.")
        s = rows.participant(spender.pk)
        rows.require_control(s, actor)
        if s.character.owner_id != actor.pk:
            raise PermissionDenied("Fate is spent by the character's own player.")
        require_not_over(rows.encounter)
        if stamina:
            return _spend_on_stamina(rows, entry, s, action, value, physical, actor)
        # A re-roll resolves the attack again, which reads and may change both sides' sheets,
        # whatever the first roll changed: a miss changed nothing of the target's, whose zone,
        # disciplines (its defense) and Vitality the new roll needs all the same.
        decl0 = entry.declaration
        assert decl0 is not None  # an attack's roll (checked above)
        _lock_changed(rows, [entry], s.pk, decl0.attacker_id, decl0.target_id)
        decl = rows.declarations.get(entry.declaration_id) if entry.declaration_id else None
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
        involves = tuple(rows.participants.get(pk) for pk in entry.involves)
        verb = "re-rolls" if action == omg.FateAction.REROLL else "revokes"
        ch3 = Changes()
        if action == omg.FateAction.REROLL:
            # Resolved again before anything is saved: the attack is never seen open in the
            # database, where another open attack of the same attacker may exist.
            outcome, text, public = apply_resolution(rows, decl, value, ch3)
        fate_entry = log(
            rows,
            Kind.FATE,
            actor=actor,
            changes=ch,
            reverts=entry,
            participant=s,
            declaration=decl,
            involves=(*involves, s),
            text=f"{s.name} spends 1 Fate and {verb} roll {entry.roll}.",
            # The d100 bounds a hidden side's PRO or DIF: not in the public text.
            public_text=f"{s.name} spends 1 Fate and {verb} the roll.",
            action=action,
        )
        if action == omg.FateAction.REVOKE:
            return fate_entry, None
        new = log(
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
            result=outcome.as_payload(),
            reroll_of=entry.pk,
        )
        return fate_entry, new


def _spend_on_stamina(
    rows: Rows,
    entry: CombatLogEntry,
    s: Participant,
    action: str,
    value: int,
    physical: bool,
    actor: User,
) -> tuple[CombatLogEntry, CombatLogEntry | None]:
    """:func:`spend_fate` on a Stamina test, the encounter locked and the spender checked: the
    test's effects undone (the state it knocked out of), then rolled again against the same
    DIF (re-roll), or left spent: no longer due, as a revoked attack stays called off."""
    p = rows.participant(entry.participant_id)
    _lock_changed(rows, [entry], s.pk, p.pk)
    ch = Changes()
    _revert(rows, entry, ch)
    c = s.character
    if c.fate < 1:
        raise CombatError(f"{c.name} has no Fate to spend.")
    ch.set(c, "fate", c.fate - 1)
    if action == omg.FateAction.REVOKE:
        ch.set(p, "stamina_due", False)
    verb = "re-rolls" if action == omg.FateAction.REROLL else "revokes"
    ch2 = Changes()
    if action == omg.FateAction.REROLL:
        # Its own sheet, locked above: the test reads NRV and VGR.
        first = entry.outcome
        assert isinstance(first, StaminaOutcome)  # a Stamina test's entry (spend_fate checked)
        stamina, text, public = apply_stamina(p, first.dif, value, ch2)
    fate_entry = log(
        rows,
        Kind.FATE,
        actor=actor,
        changes=ch,
        reverts=entry,
        participant=s,
        involves=(p, s),
        text=f"{s.name} spends 1 Fate and {verb} {p.name}'s Stamina test (roll {entry.roll}).",
        public_text=f"{s.name} spends 1 Fate and {verb} {p.name}'s Stamina test.",
        action=action,
    )
    if action == omg.FateAction.REVOKE:
        return fate_entry, None
    new = log(
        rows,
        Kind.STAMINA,
        actor=actor,
        changes=ch2,
        participant=p,
        involves=(p,),
        roll=value,
        physical=physical,
        text=f"Re-roll: {text}",
        public_text=f"Re-roll: {public}",
        result=stamina.as_payload(),
        reroll_of=entry.pk,
    )
    return fate_entry, new
