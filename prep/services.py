"""The GM's library and prepared encounters: every write, with its permission check."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.core.exceptions import PermissionDenied
from django.db import transaction

from combat import services as combat
from combat.models import Encounter, Participant
from combat.services.rows import lock as lock_fight
from prep import starter, statblock
from prep.models import MAX_COUNT, FightSheet, LibraryNpc, PreparedEncounter, PreparedGroup
from sheets.models import Character, lock_user
from sheets.refusals import Refused
from sheets.services import lock_campaign

if TYPE_CHECKING:
    from sheets.users import AnyUser, User

MAX_LIBRARY = 500


class PrepError(Refused):
    """A request the GM can fix (the message says how)."""


def _lock_library(owner: User) -> None:
    """The owner's row, first in a write that adds to their library: behind a deletion of the
    account it waits, then finds no account (a 404), instead of a new NPC pointing at a
    deleted account (a 500 at COMMIT); two additions wait for each other, so the library's
    limit holds (docs/architecture.md, "The lock order")."""
    if not lock_user(owner):
        raise LibraryNpc.DoesNotExist("This account was deleted meanwhile.")


def add_starter_set(*, owner: User) -> list[LibraryNpc]:
    """The starter stat blocks the GM does not have yet (by their starter key): pressing the
    button twice adds nothing the second time; a deleted starter comes back."""
    added = []
    with transaction.atomic():
        _lock_library(owner)
        have = set(LibraryNpc.objects.filter(owner=owner).values_list("starter", flat=True))
        for key, data in starter.STARTERS.items():
            if key in have:
                continue
            sheet, errors = statblock.validate(data, request=None)
            assert sheet is not None, errors  # the tests check every starter
            added.append(
                LibraryNpc.objects.create(
                    owner=owner, name=sheet.pop("name"), sheet=sheet, starter=key
                )
            )
    return added


def save_npc(*, owner: User, sheet: dict[str, Any], npc: LibraryNpc | None = None) -> LibraryNpc:
    """Create (``npc`` None) or replace a library NPC from a validated stat block."""
    sheet = dict(sheet)
    name = sheet.pop("name")
    if npc is None:
        with transaction.atomic():
            _lock_library(owner)
            if LibraryNpc.objects.filter(owner=owner).count() >= MAX_LIBRARY:
                raise PrepError(f"A library holds at most {MAX_LIBRARY} NPCs.")
            return LibraryNpc.objects.create(owner=owner, name=name, sheet=sheet)
    if npc.owner_id != owner.pk:
        raise PermissionDenied("Not your library.")
    npc.name, npc.sheet = name, sheet
    npc.save(update_fields=["name", "sheet", "updated_at"])
    return npc


def full_sheet(npc: LibraryNpc) -> dict[str, Any]:
    """The stat block as a JSON document (what the export gives and the import takes)."""
    return {"name": npc.name, **npc.sheet}


def duplicate_npc(*, npc: LibraryNpc) -> LibraryNpc:
    with transaction.atomic():
        _lock_library(npc.owner)
        if LibraryNpc.objects.filter(owner=npc.owner).count() >= MAX_LIBRARY:
            raise PrepError(f"A library holds at most {MAX_LIBRARY} NPCs.")
        name = f"{npc.name} (copy)"[:120]
        return LibraryNpc.objects.create(owner=npc.owner, name=name, sheet=dict(npc.sheet))


def lock_npcs(ids: list[int] | set[int]) -> dict[int, LibraryNpc]:
    """The library NPCs ``ids`` that still exist, read and locked (pk order) until the end of
    the caller's transaction: a start, a group written, or a delete of one of them waits for
    the others, so no sheet or group is ever made from an NPC deleted meanwhile. They are
    the last rows of the lock order (docs/architecture.md): a write that takes them has
    locked its encounter, campaign and characters before, as the GM's account deletion
    has, which deletes their NPCs last."""
    rows = LibraryNpc.objects.select_for_update().filter(pk__in=sorted(ids)).order_by("pk")
    return {npc.pk: npc for npc in rows}


def _gone(names: list[str]) -> PrepError:
    listed = ", ".join(sorted(set(names)))
    return PrepError(f"No longer in your library (deleted meanwhile): {listed}. Nothing was done.")


def delete_npc(*, npc: LibraryNpc, actor: AnyUser) -> None:
    """Delete a library NPC, unless a prepared encounter uses it: that is refused, naming the
    encounters, so the GM decides what becomes of their groups (docs/security.md). The NPC
    is locked first, so a start or a group being written waits, or is waited for."""
    if npc.owner_id != actor.pk:
        raise PermissionDenied("Not your library.")
    with transaction.atomic():
        if not lock_npcs([npc.pk]):
            return  # deleted meanwhile: what was asked is done
        using = list(
            PreparedEncounter.objects.filter(groups__npc=npc)
            .select_related("campaign")
            .distinct()
            .order_by("name", "pk")
        )
        if using:
            where = "; ".join(f"{p.name} ({p.campaign.name})" for p in using)
            raise PrepError(
                f"{npc.name} is in prepared encounters: {where}. Remove it from them first."
            )
        npc.delete()


def add_group(
    *,
    prepared: PreparedEncounter,
    npc_pk: int,
    count: int,
    hidden: bool,
    on_alert: bool,
    actor: AnyUser,
) -> PreparedGroup:
    """``count`` copies of a library NPC of the GM's into a prepared encounter."""
    if not 1 <= count <= MAX_COUNT:
        raise PrepError(f"How many: 1 to {MAX_COUNT}.")
    with transaction.atomic():
        # The campaign before the NPC (the lock order): a deletion of the campaign or the
        # GM's account holding it is waited for, then a 404.
        lock_campaign(pk=prepared.campaign_id)
        prepared = PreparedEncounter.objects.select_for_update().get(pk=prepared.pk)
        npc = lock_npcs([npc_pk]).get(npc_pk)
        if npc is None or npc.owner_id != actor.pk:
            raise PrepError("Choose an NPC of your library.")
        return PreparedGroup.objects.create(
            prepared=prepared, npc=npc, count=count, hidden=hidden, on_alert=on_alert
        )


@dataclass(frozen=True)
class Pick:
    """``count`` copies of a library NPC for one fight."""

    npc: LibraryNpc
    count: int
    hidden: bool = False
    on_alert: bool = False


def put_into_encounter(
    *, encounter: Encounter, picks: list[Pick], actor: AnyUser
) -> list[Participant]:
    """One step: each picked library NPC becomes a sheet in the encounter's campaign (its
    template, ``fight_only``) and ``count`` copies of it join the fight through combat's own
    service, named as the tracker names them ("Thug #1", "Thug #2"...: combat.copy_name); on
    alert if asked. Every sheet made is tied to the encounter (FightSheet) and goes with it.
    All or nothing."""
    if not picks:
        raise PrepError("Pick at least one NPC.")
    added: list[Participant] = []
    with transaction.atomic():
        # The lock order (docs/architecture.md): the encounter, its campaign, and the
        # library NPCs last, as a deletion of the GM's account takes them. Taking the NPCs
        # first deadlocked with that deletion, which holds the campaign and reaches the NPCs
        # last. Behind a deletion: it is waited for, then a 404.
        encounter = lock_fight(encounter, actor=actor, participants=()).encounter
        campaign = lock_campaign(pk=encounter.campaign_id)
        if not campaign.is_gm(actor):
            raise PermissionDenied("Only the GM runs encounters.")
        locked = lock_npcs({pick.npc.pk for pick in picks})
        gone = [pick.npc.name for pick in picks if pick.npc.pk not in locked]
        if gone:
            raise _gone(gone)
        for pick in picks:
            npc = locked[pick.npc.pk]  # as it is now, not as the caller read it
            if npc.owner_id != actor.pk:
                raise PrepError("That NPC is not in your library.")
            if not 1 <= pick.count <= MAX_COUNT:
                raise PrepError(f"Add between 1 and {MAX_COUNT} of each NPC.")
            template = statblock.materialize(
                {"name": npc.name, **npc.sheet},
                campaign=campaign,
                owner=actor,
                name=npc.name,
            )
            FightSheet.objects.create(character=template, encounter=encounter, source=npc)
            combat.add_npc_copies(
                encounter=encounter,
                npc=template,
                count=pick.count,
                actor=actor,
                hidden=pick.hidden,
            )
            copies = list(Character.objects.filter(copied_from=template))
            FightSheet.objects.bulk_create(
                FightSheet(character=c, encounter=encounter, source=npc) for c in copies
            )
            joined = list(
                Participant.objects.filter(encounter=encounter, character__in=copies).order_by(
                    "position"
                )
            )
            if pick.on_alert:
                for participant in joined:
                    combat.update_participant(participant=participant, actor=actor, on_alert=True)
            added.extend(joined)
    return added


def start_prepared(*, prepared: PreparedEncounter, actor: AnyUser) -> Encounter:
    """The one press at the table: the encounter, its expected characters and its NPC groups,
    all or nothing. The tracker's own "Start" (initiative) is still the GM's next step."""
    with transaction.atomic():
        # The campaign's lock first, the library NPCs last (the lock order,
        # docs/architecture.md), as a deletion of the campaign or of the GM's account takes
        # them: the NPCs first deadlocked with the account's deletion, which reaches them
        # last. Behind a deletion: it is waited for, then a 404.
        campaign = lock_campaign(pk=prepared.campaign_id)
        if not campaign.is_gm(actor):
            raise PermissionDenied("Only the GM starts a prepared encounter.")
        # Read in the transaction. The NPCs are locked by put_into_encounter, after the
        # expected characters: one deleted meanwhile is named in a refusal, and all is
        # rolled back, never half copied (docs/security.md).
        groups = list(prepared.groups.select_related("npc").order_by("pk"))
        expected = list(prepared.expected.filter(campaign=campaign))
        if not groups and not expected:
            raise PrepError("Add NPCs or expected characters before starting.")
        encounter, _ = combat.create_encounter(campaign=campaign, name=prepared.name, actor=actor)
        if expected:
            combat.add_participants(encounter=encounter, characters=expected, actor=actor)
        if groups:
            put_into_encounter(
                encounter=encounter,
                picks=[Pick(g.npc, g.count, g.hidden, g.on_alert) for g in groups],
                actor=actor,
            )
    return encounter
