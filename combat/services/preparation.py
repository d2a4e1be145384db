"""Setting up a fight: the encounter, its participants, NPC copies, a participant's state."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.core.exceptions import PermissionDenied
from django.db import transaction

from combat import conditions as condition_rules
from combat.models import CombatLogEntry, Encounter, Participant
from combat.services.rows import Changes, CombatError, Kind, lock, log
from rules.engine import omg
from sheets.models import BodyZone, Campaign, Character, Discipline, Weapon

if TYPE_CHECKING:
    # Whoever acts, signed in or not (the services refuse the latter themselves).
    from sheets.users import AnyUser as User

MAX_COPIES = 20


def create_encounter(*, campaign: Any, name: str, actor: User) -> tuple[Encounter, CombatLogEntry]:
    if not campaign.is_gm(actor):
        raise PermissionDenied("Only the GM runs encounters.")
    name = name.strip()
    if not name:
        raise CombatError("Give the encounter a name.")
    with transaction.atomic():
        # The campaign's lock first: a deletion of the campaign holding it is waited for, and
        # then the campaign is gone (a 404). Without it the new encounter's foreign key was
        # checked at COMMIT, after the deletion's, and failed (a 500). No one else can hold
        # the new encounter, so this cannot invert the lock order (docs/architecture.md).
        if not Campaign.objects.select_for_update().filter(pk=campaign.pk).exists():
            raise Campaign.DoesNotExist("No such campaign: it was deleted meanwhile.")
        encounter = Encounter.objects.create(campaign=campaign, name=name[:120])
        rows = lock(encounter, actor=actor)
        entry = log(rows, Kind.CREATE, actor=actor, text=f"Encounter “{encounter.name}” created.")
    return encounter, entry


def add_participants(
    *, encounter: Encounter, characters: list[Character], actor: User, hidden: bool = False
) -> CombatLogEntry:
    """Add campaign characters (player characters or NPCs themselves, not copies)."""
    with transaction.atomic():
        rows = lock(encounter, actor=actor)
        rows.require_gm(actor)
        # Each new participant points at its character (see declare_attack): lock them first.
        rows.lock_sheets({c.pk for c in characters})
        enc = rows.encounter
        if enc.status == Encounter.Status.FINISHED:
            raise CombatError("This encounter is over.")
        present = {p.character_id for p in rows.participants.values()}
        added: list[Participant] = []
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
        return log(
            rows,
            Kind.JOIN,
            actor=actor,
            text=f"Joined the fight: {names}.",
            participants=[p.pk for p in added],
        )


def _copy_character(npc: Character, name: str, *, hidden: bool) -> Character:
    copy = Character.objects.get(pk=npc.pk)
    copy.pk = None
    copy.id = None
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
    models: tuple[type[BodyZone | Weapon | Discipline], ...] = (BodyZone, Weapon, Discipline)
    for model in models:
        rows: list[Any] = list(model._default_manager.filter(character=npc))
        for row in rows:
            row.pk = None
            row._state.adding = True
            row.character = copy
        model._default_manager.bulk_create(rows)
    return copy


def copy_name(npc_name: str, n: int) -> str:
    """The name of an NPC's ``n``th copy in a fight, the one style every path uses: the
    tracker's "Add copies" and a prepared encounter's start both come here.

    >>> copy_name("Thug", 2)
    'Thug #2'
    """
    return f"{npc_name} #{n}"


def add_npc_copies(
    *,
    encounter: Encounter,
    npc: Character,
    count: int,
    actor: User,
    hidden: bool = False,
) -> CombatLogEntry:
    """``count`` copies of an NPC, each its own sheet (own wounds, armor and weapon state),
    named by :func:`copy_name` with the first numbers no participant's name takes."""
    if not 1 <= count <= MAX_COPIES:
        raise CombatError(f"Add between 1 and {MAX_COPIES} copies at once.")
    with transaction.atomic():
        rows = lock(encounter, actor=actor)
        rows.require_gm(actor)
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
            name = copy_name(npc.name, n)
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
        return log(
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
    hidden_shows: str | None = None,
) -> CombatLogEntry:
    """The GM's switches on one participant: hide its numbers, on alert, tie-break order,
    ITV, state (e.g. back on their feet), clearing its conditions, and what players see of
    its wounds while it is hidden (nothing, or a word)."""
    with transaction.atomic():
        rows = lock(participant.encounter_id, actor=actor)
        rows.require_gm(actor)
        p = rows.participant(participant.pk)
        ch = Changes()
        if hidden is not None:
            ch.set(p, "hidden", bool(hidden))
        if on_alert is not None:
            ch.set(p, "on_alert", bool(on_alert))
        if hidden_shows is not None:
            if hidden_shows not in Participant.HiddenShows.values:
                raise CombatError("Players see nothing of a hidden fighter, or its state in words.")
            ch.set(p, "hidden_shows", hidden_shows)
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
        return log(
            rows,
            Kind.PARTICIPANT,
            actor=actor,
            changes=ch,
            participant=p,
            involves=(p,),
            text=f"{p.name}: {what} changed.",
        )


def add_condition(
    *,
    participant: Participant,
    name: str,
    actor: User,
    rounds: int | None = None,
    until_removed: bool = False,
) -> CombatLogEntry:
    """The GM puts a condition on a participant: a built-in (stunned, prone, grappled,
    disarmed, shoved, and "thrown"/"held" for those) with its own duration unless told, or
    their own named one, for ``rounds`` rounds (counting this one) or ``until_removed``.
    "unconscious" and "dying" are states: they set the participant's state. The same name
    again replaces the condition (a new duration)."""
    state = _STATE_NAMES.get(name.strip().lower()) if isinstance(name, str) else None
    with transaction.atomic():
        rows = lock(participant.encounter_id, actor=actor)
        rows.require_gm(actor)
        p = rows.participant(participant.pk)
        if rows.encounter.status == Encounter.Status.FINISHED:
            raise CombatError("This encounter is over.")
        ch = Changes()
        if state is not None:
            ch.set(p, "state", state)
            label = Participant.State(state).label
        else:
            try:
                key, info = condition_rules.entry(
                    name,
                    round_=rows.encounter.round,
                    rounds=rounds,
                    until_removed=until_removed,
                )
            except condition_rules.ConditionError as exc:
                raise CombatError(str(exc)) from exc
            if key not in p.conditions and len(p.conditions) >= condition_rules.MAX_CONDITIONS:
                raise CombatError(
                    f"name: at most {condition_rules.MAX_CONDITIONS} conditions at once."
                )
            ch.set(p, "conditions", {**p.conditions, key: info})
            label = condition_rules.label_of(key, info)
            shown = next(
                s for s in condition_rules.shown(p.conditions, p.encounter.round) if s.key == key
            )
            label = f"{label} ({shown.left})"
        if not ch:
            raise CombatError(f"{p.name} is already {label.lower()}.")
        return log(
            rows,
            Kind.CONDITION,
            actor=actor,
            changes=ch,
            participant=p,
            involves=(),
            text=f"GM: {p.name} is {label.lower()}.",
        )


def remove_condition(*, participant: Participant, key: str, actor: User) -> CombatLogEntry:
    """The GM lifts one condition (its key as the API lists it); "unconscious" and "dying"
    put the participant back on their feet (state active)."""
    with transaction.atomic():
        rows = lock(participant.encounter_id, actor=actor)
        rows.require_gm(actor)
        p = rows.participant(participant.pk)
        ch = Changes()
        if key in _STATE_NAMES:
            if p.state != _STATE_NAMES[key]:
                raise CombatError(f"{p.name} is not {key}.")
            ch.set(p, "state", Participant.State.ACTIVE.value)
            label = key
        else:
            if key not in p.conditions:
                raise CombatError(f"{p.name} has no condition {key!r}.")
            label = condition_rules.label_of(key, p.conditions[key])
            ch.set(p, "conditions", {k: v for k, v in p.conditions.items() if k != key})
        return log(
            rows,
            Kind.CONDITION,
            actor=actor,
            changes=ch,
            participant=p,
            involves=(),
            text=f"GM: {p.name} is no longer {label.lower()}.",
        )


#: The conditions that are participant states (docs/rules.md, "Conditions").
_STATE_NAMES = {
    "unconscious": Participant.State.UNCONSCIOUS.value,
    "dying": Participant.State.DOWN.value,
}
