"""What every change to a campaign's checks shares: the campaign's lock and sequence, the one
refusal of a table that moved on (:class:`CheckConflict`), and the sheet's changes a roll
makes, records and takes back (its EXP and Fate), locked in the sheets' one order."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import Max, QuerySet

from checks import signals
from checks.models import Check, CheckRequest
from checks.services.targets import discipline_row
from rules.engine import omg
from sheets.models import Campaign, Character, Discipline
from sheets.refusals import Conflict
from sheets.services import lock_campaign as lock_campaign_row

MAX_FATE = 1000  # the sheet's bound (sheets.models.Character.fate)

#: One field's change, as a check stores it (``Check.changes``): model, pk, field, before, after.
Change = dict[str, Any]


class CheckConflict(Conflict):
    """The table moved on: the roll is no longer the latest, a value changed since."""


def lock_campaign(campaign: Campaign) -> Campaign:
    """Every change to a campaign's checks holds its row: one sequence, one latest roll; and
    behind a deletion of the campaign, it is waited for, then a 404."""
    return lock_campaign_row(pk=campaign.pk)


def next_seq(campaign: Campaign) -> int:
    """The campaign's next number for a roll or a Fate spend (its row locked)."""
    agg = Check.objects.filter(campaign=campaign).aggregate(s=Max("seq"), f=Max("fate_seq"))
    return max(agg["s"] or 0, agg["f"] or 0) + 1


def tell(campaign: Campaign, asked: QuerySet[CheckRequest]) -> None:
    """The open pages that show ``asked`` (the players' prompts, the GM's results) are told
    to fetch them again once the transaction commits (signals.announce_calls)."""
    signals.announce_calls(campaign, asked.values_list("call_id", "character__owner_id"))


def set_value(
    obj: Character | Discipline, model: str, field: str, value: int, changes: list[Change]
) -> None:
    """Set ``obj.field`` to ``value``, recording the change in ``changes`` if it is one."""
    before = getattr(obj, field)
    if before == value:
        return
    changes.append({"model": model, "pk": obj.pk, "field": field, "before": before, "after": value})
    setattr(obj, field, value)


def save_sheet(character: Character | None, discipline: Discipline | None) -> None:
    if discipline is not None:
        discipline.save(update_fields=["exp_marks"])
    if character is not None:
        character.version += 1
        character.save(update_fields=["fate", "exp_marks", "version", "updated_at"])


def apply_effects(check: Check) -> list[Change]:
    """EXP and Fate of the roll on the locked sheet; returns the changes made."""
    changes: list[Change] = []
    if not check.exp and not check.fate:
        return changes
    c = Character.objects.select_for_update().get(pk=check.character_id)
    row = None
    if check.exp_on == "discipline":
        row = discipline_row(c, check.discipline)
    if check.exp and row is not None:
        set_value(
            row, "discipline", "exp_marks", min(omg.MAX_EXP_MARKS, row.exp_marks + 1), changes
        )
    elif check.exp:
        set_value(c, "character", "exp_marks", min(omg.MAX_EXP_MARKS, c.exp_marks + 1), changes)
    if check.fate:
        fate = min(MAX_FATE, omg.apply_fate(c.fate, check.fate))
        set_value(c, "character", "fate", fate, changes)
    save_sheet(c, row)
    return changes


def lock_sheets(*changes: list[Change], characters: Iterable[int] = ()) -> None:
    """Lock every sheet row ``changes`` name, and ``characters``, in the sheets' one order
    (docs/architecture.md, "The lock order"): the characters by pk, then the disciplines by
    pk. :func:`revert` then finds them locked. Reverting in the changes' own order locked a
    discipline before its character when an epic failure at 0 Fate had changed only its EXP
    mark: the reverse of a sheet edit, which locks the character and then its row."""
    chars: set[int] = set(characters)
    disciplines: set[int] = set()
    for change in (c for group in changes for c in group):
        (chars if change["model"] == "character" else disciplines).add(change["pk"])
    list(Character.objects.select_for_update().filter(pk__in=chars).order_by("pk").values("pk"))
    list(
        Discipline.objects.select_for_update()
        .filter(pk__in=disciplines)
        .order_by("pk")
        .values("pk")
    )


def revert(changes: list[Change]) -> list[Change]:
    """Write the before values back, newest first, after checking each field still holds the
    value the change left. Returns the reverting changes."""
    out: list[Change] = []
    touched: dict[tuple[str, int], Character | Discipline] = {}
    for c in reversed(changes):
        key = (c["model"], c["pk"])
        if key not in touched:
            model = Character if c["model"] == "character" else Discipline
            obj = model.objects.select_for_update().filter(pk=c["pk"]).first()
            if obj is None:
                raise CheckConflict("A sheet this roll changed no longer exists.")
            touched[key] = obj
        found = touched[key]
        if getattr(found, c["field"]) != c["after"]:
            raise CheckConflict(
                f"{c['field'].replace('_', ' ')} changed since this roll; change it back first."
            )
        set_value(found, c["model"], c["field"], c["before"], out)
    for obj in touched.values():
        if isinstance(obj, Character):
            save_sheet(obj, None)
        else:
            save_sheet(None, obj)
    return out
