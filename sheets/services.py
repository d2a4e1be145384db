"""Campaign workflows shared by the pages and the API."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.core.validators import MinValueValidator
from django.db import models, transaction

from rules.engine import RulesError, omg
from rules.engine.omg_data import (
    ARCHETYPES,
    ARMORS_BY_NAME,
    DEFAULT_ZONES,
    SECONDARY_LISTS,
    WEAPONS_BY_NAME,
)
from sheets import signals
from sheets.models import (
    APTITUDE_FIELDS,
    RESOURCE_MAXIMA,
    BodyZone,
    Campaign,
    Character,
    Discipline,
    Membership,
    Weapon,
    normalize_join_code,
)
from sheets.numbers import aptitudes_of
from sheets.refusals import Conflict, Refused

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping, Sequence

    from sheets.users import User


def lock_campaign(*, pk: int) -> Campaign:
    """The campaign ``pk``, read and locked until the end of the caller's transaction: the
    first statement of a write that creates a row in it (a sheet, a roll, a membership, a
    webhook, a prepared encounter, a check call). A deletion of the campaign holding it is
    waited for, and then the campaign is gone: ``Campaign.DoesNotExist``, a 404. Without it
    the new row's foreign key was checked at COMMIT, after the deletion's, and failed (a
    500). The new row is nobody else's yet, so this keeps the lock order
    (docs/architecture.md): the campaign before its sheets."""
    try:
        return Campaign.objects.select_for_update().get(pk=pk)
    except Campaign.DoesNotExist:
        raise Campaign.DoesNotExist("No such campaign: it was deleted meanwhile.") from None


def join_campaign(*, user: User, code: str) -> tuple[Campaign, bool]:
    """Add ``user`` as a player of the campaign whose join code is ``code``.

    Returns the campaign and whether a membership was created (False when the user already
    plays in it or runs it). Raises ValidationError for an unknown code.
    """
    normalized = normalize_join_code(code)
    if not normalized:
        raise ValidationError({"code": "Enter the join code your GM gave you."})
    with transaction.atomic():
        # Found and locked in one statement, as :func:`lock_campaign` does: behind a deletion
        # of the campaign it waits, and then finds no row (nor does it after a new code).
        campaign = Campaign.objects.select_for_update().filter(join_code=normalized).first()
        if campaign is None:
            raise ValidationError(
                {"code": "No campaign has this join code. Check it, or ask your GM for a new one."}
            )
        if campaign.gm_id == user.pk:
            return campaign, False
        _, created = Membership.objects.get_or_create(campaign=campaign, user=user)
    return campaign, created


def delete_campaign(*, user: User, campaign: Campaign) -> bool:
    """Delete a campaign with all that is in it (fights, sheets, roll logs); False when it is
    already gone. ``PermissionDenied`` unless ``user`` is its GM.

    Its fights may be played right now: the locks come first, in the documented order
    (:func:`lock_for_deletion`), so an action in progress finishes before anything is
    collected, and every action after it finds nothing (a 404)."""
    with transaction.atomic():
        locked = lock_for_deletion(campaigns=[campaign.pk])
        if not locked:
            return False
        if not locked[0].is_gm(user):
            raise PermissionDenied("Only the campaign's GM deletes it.")
        locked[0].delete()
    return True


def lock_for_deletion(
    *, campaigns: Collection[int] = (), characters: Collection[int] = ()
) -> list[Campaign]:
    """The first statements of a deletion of ``campaigns`` (with all that is in them) and of
    ``characters`` (deleted or handed over), in the lock order of docs/architecture.md: what
    the layers above lock first (:data:`signals.deleting`: combat locks the fights they are
    in), then the campaigns, then every sheet of theirs and ``characters``, by pk, in one
    statement (a sheet before its rows, as every write to it: ``_lock_for_writer``).
    Returns the campaigns that still exist, locked, by pk; the caller's transaction holds
    the locks, and nobody else writes these rows until it ends."""
    signals.deleting.send(sender=Campaign, campaigns=campaigns, characters=characters)
    locked = list(
        Campaign.objects.select_for_update().filter(pk__in=sorted(campaigns)).order_by("pk")
    )
    sheets = Character.objects.filter(
        models.Q(campaign__in=[c.pk for c in locked]) | models.Q(pk__in=sorted(characters))
    )
    list(sheets.select_for_update(of=("self",)).order_by("pk").values_list("pk", flat=True))
    return locked


def lock_fights_of(*, characters: Collection[int]) -> None:
    """The locks of the fights ``characters`` take part in (combat's, through
    :data:`signals.deleting`), first in a write that deletes them or some of their zones or
    weapons, before it locks the sheets: an attack points at its zone and weapon, and a
    deletion must not collect the fight's rows while an action is writing them."""
    signals.deleting.send(sender=Character, campaigns=(), characters=sorted(characters))


def remove_player(*, user: User, campaign: Campaign, user_id: int) -> bool:
    """Remove the player ``user_id`` from the campaign. Returns False when they were not a
    player. ``user`` is the campaign's GM, or the player leaving; else ``PermissionDenied``."""
    with transaction.atomic():
        # Under the campaign's lock, the one a handover takes: the GM checked is still its GM.
        locked = Campaign.objects.select_for_update().get(pk=campaign.pk)
        if not locked.is_gm(user) and user.pk != user_id:
            raise PermissionDenied("Only the campaign's GM removes its players.")
        deleted, _ = Membership.objects.filter(campaign=locked, user_id=user_id).delete()
    return deleted > 0


# --- Character sheets -----------------------------------------------------------------------

#: What the sheet lets a user edit, field by field, per kind of row. Everything else
#: (owner, campaign, version, ...) changes only through its own workflow.
EDITABLE_FIELDS: dict[str, tuple[str, ...]] = {
    "character": (
        "name",
        "occupation",
        "sex",
        "appearance",
        "age",
        "height",
        "weight",
        "attitude",
        "backstory",
        "outlook",
        "objectives",
        "equipment",
        "currency_property",
        "notes",
        "archetype",
        "foc",
        "spd",
        "skl",
        "vgr",
        "nrv",
        "chr",
        "svy",
        "fate",
        "exp_marks",
        "talent_marks",
        "rsv",
        "itv",
        "vitality",
        "mana",
        "chi",
        "bzf",
        "yards_per_height",
    ),
    "discipline": ("name", "level", "exp_marks", "aptitude", "source"),
    "weapon": ("name", "category", "dmg", "dmg_max", "bonus"),
    "zone": ("name", "armor_type", "arm", "arm_max", "arm_bonus", "wounds", "grievous"),
}
#: What else an edit rewrites, so the sheet redraws those fields with the edited one: the
#: weight sets BZF, a lower aptitude can lower the current pools, a new armor type its ARM.
KNOCK_ON_FIELDS: dict[tuple[str, str], tuple[str, ...]] = {
    ("character", "weight"): ("bzf",),
    **{("character", apt): tuple(f for f, _, _ in RESOURCE_MAXIMA) for apt in APTITUDE_FIELDS},
    ("zone", "armor_type"): ("arm", "arm_max"),
}
ROW_MODELS: dict[str, type[models.Model]] = {
    "character": Character,
    "discipline": Discipline,
    "weapon": Weapon,
    "zone": BodyZone,
}


class EditConflict(Conflict):
    """The value changed since the editor loaded it (another tab, another person)."""

    def __init__(self, current: object) -> None:
        super().__init__("changed elsewhere")
        self.current = current


class VersionConflict(Conflict):
    """The sheet's version moved on since the writer read it (the API's ``version``): the
    API's 409 says which version it is now."""

    def __init__(self, current: int) -> None:
        super().__init__("The sheet changed since you read it; fetch it again and retry.")
        self.current = current

    def body(self) -> dict[str, Any]:
        return {**super().body(), "version": self.current}


class RowsRefused(Refused):
    """Rows the models refuse, by set and position: ``{"zones": {0: {"arm": [...]}}}``, which
    is also the API's 400 (the sheet's serializer gives it as its own error, for the import
    page too)."""

    def __init__(self, errors: dict[str, dict[int, dict[str, list[str]]]]) -> None:
        super().__init__(str(errors))
        self.errors = errors

    def body(self) -> dict[str, Any]:
        return dict(self.errors)


def create_character(
    *,
    campaign: Campaign,
    owner: User,
    name: str,
    is_npc: bool = False,
    zones: tuple[str, ...] = DEFAULT_ZONES,
    **fields: Any,
) -> Character:
    """A new sheet with the default body zones and full Vitality, Mana and Chi. BZF follows the
    weight unless it was rolled or given (an imported sheet keeps the BZF it had).
    ``owner`` makes it: the campaign's GM, or one of its players for a sheet that is not an
    NPC nor shown as one; else ``PermissionDenied``, with nothing saved."""
    gm_only = is_npc or any(fields.get(k) for k in GM_FIELDS)
    with transaction.atomic():
        # Behind a deletion of the campaign: wait for it, then a 404 (:func:`lock_campaign`);
        # behind a handover, its GM as it is now.
        campaign = lock_campaign(pk=campaign.pk)
        if not campaign.is_gm(owner) and (gm_only or not campaign.is_member(owner)):
            raise PermissionDenied("Only the campaign's GM and players make its characters.")
        character = Character(campaign=campaign, owner=owner, name=name, is_npc=is_npc, **fields)
        if "bzf" not in fields:
            character.follow_weight()
        maxima = character.maxima()
        for field, attr, _ in RESOURCE_MAXIMA:
            if maxima is not None and field not in fields:
                setattr(character, field, getattr(maxima, attr))
        character.full_clean()
        character.save()
        BodyZone.objects.bulk_create(
            BodyZone(character=character, name=zone, position=i) for i, zone in enumerate(zones)
        )
    return character


def delete_character(*, user: User, character: Character) -> bool:
    """Delete a sheet with its rows; False when it is already gone. The sheet is locked first,
    as every write to it locks it before its rows: deleting the rows first took their locks in
    the opposite order and deadlocked with a write in progress (which then finishes first, and
    the rows it added go with the sheet). ``PermissionDenied`` unless ``user`` may change the
    sheet (its owner, the GM). A sheet in a fight waits for the fight's action in progress:
    the fight's lock comes first (:func:`lock_for_deletion`)."""
    with transaction.atomic():
        lock_fights_of(characters=[character.pk])
        try:
            locked = _lock_for_writer(character, user)
        except Character.DoesNotExist:
            return False
        locked.delete()
    return True


def _display(value: object) -> str:
    return "" if value is None else str(value)


def _formfield(field: models.Field[Any, Any], **kwargs: Any) -> Any:
    """The form field of a model field, whose lowest value is the model's own: a positive
    field's form would otherwise say "at least 0" for -3 and the model "at least 1" for 0."""
    lows = [v.limit_value for v in field.validators if isinstance(v, MinValueValidator)]
    if lows:
        kwargs["min_value"] = max(lows)
    return field.formfield(**kwargs)


def unchanged_fields(model: type[models.Model], changed: Collection[str]) -> list[str]:
    """The fields ``full_clean(exclude=...)`` can leave out after ``changed`` were set: all but
    the changed ones and those a constraint ties to them (DMG and max DMG, ARM and max ARM, a
    row's name and its character). Each constraint checked costs a query or three, so checking
    them all on every edit was most of an edit's queries. Rules checked in
    ``clean_fields``, such as a pool within its maximum, are checked when the pool is changed."""
    checked = set(changed)
    for constraint in model._meta.constraints:
        if isinstance(constraint, models.UniqueConstraint):
            fields = set(constraint.fields)
        elif isinstance(constraint, models.CheckConstraint):
            fields = set(constraint.condition.referenced_base_fields)  # type: ignore[union-attr]  # every check here is a Q
        else:  # no other kind on these models
            continue
        if fields & checked:
            checked |= fields
    return [f.name for f in model._meta.concrete_fields if f.name not in checked]


def _rows_changed(locked: Character) -> None:
    """One step of the sheet's version for an edit of its rows (the Character row is not
    saved: its version is stepped in the database), told to listeners as a save is."""
    Character.objects.filter(pk=locked.pk).update(version=models.F("version") + 1)
    signals.rows_changed.send(sender=Character, character=locked)


#: A sheet's sets of rows, as a document (the API's, an export) names them.
ROW_SETS: dict[str, type[Discipline | Weapon | BodyZone]] = {
    "disciplines": Discipline,
    "weapons": Weapon,
    "zones": BodyZone,
}
#: The rows an attack points at: deleting one (or replacing its set) deletes or changes
#: attacks of the sheet's fights, so the fights are locked first (:func:`lock_fights_of`).
FIGHT_ROWS = ("zone", "weapon")
FIGHT_ROW_SETS = ("zones", "weapons")
#: Only the GM makes a sheet an NPC or shows an NPC's sheet to the players.
GM_FIELDS = ("is_npc", "revealed")


def write_character(
    *,
    user: User,
    values: Mapping[str, Any],
    character: Character | None = None,
    rows: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    version: int | None = None,
    seen: Mapping[str, str] | None = None,
    text: bool = False,
    locked: bool = False,
) -> Character:
    """Write a sheet's own fields and, when ``rows`` are given, replace those sets of rows.
    The one way a character is written: the sheet page's field edits, the API's PUT and
    PATCH, and a new sheet from a document (the API's POST, the JSON import; ``character``
    None, ``values`` naming its campaign) all come here, so they follow one rule:

    - Access: the owner and the campaign's GM write a sheet; a member of the campaign
      makes one; ``is_npc`` and ``revealed`` are the GM's. Else ``PermissionDenied``.
    - Conflicts, checked under the sheet's lock: ``version`` (the API's) must be the
      stored one (:class:`VersionConflict`); so must each value in ``seen``, as the sheet
      page displayed it (:class:`EditConflict`), before its new text (``text``) is parsed.
    - Derived: a new weight sets BZF (docs/rules.md, "Derived") unless BZF is written with
      it or was rolled; an aptitude written lowers current Vitality, Mana and Chi not
      written with it to their maxima. A pool not written is otherwise left as it is.
    - Checks: the fields written, and those a constraint ties to them, are validated
      (``ValidationError``; rows: :class:`RowsRefused`); nothing is saved then.

    The version steps once, and the save is told to listeners as every save is.
    ``locked``: the caller read ``character`` under its lock, in the transaction open now
    (an error then undoes that whole transaction). ``Character.DoesNotExist`` when the sheet
    was deleted meanwhile."""
    if character is None:
        return _new_character(user=user, values=values, rows=rows)
    with transaction.atomic(savepoint=not locked):
        if locked:
            current = character
            _check_writer(current, user)
        else:
            current = _lock_for_writer(character, user)
        if not current.campaign.is_gm(user) and any(
            k in values and values[k] != getattr(current, k) for k in GM_FIELDS
        ):
            raise PermissionDenied("Only the GM makes a sheet an NPC or shows it to the players.")
        if version is not None and current.version != version:
            raise VersionConflict(current.version)
        for field, shown in (seen or {}).items():
            if _display(getattr(current, field)) != shown:
                raise EditConflict(getattr(current, field))
        if text:
            values = {field: _parse(Character, field, value) for field, value in values.items()}
        weight, bzf = current.weight, current.bzf
        for field, value in values.items():
            setattr(current, field, value)
        written = list(values)
        # A PUT of the whole document sends back the BZF it read: that is no change of BZF.
        if current.weight != weight and current.bzf == bzf:
            current.follow_weight()
            written.append("bzf")
        if any(field in values for field in APTITUDE_FIELDS):
            written += current.clamp_resources(keep=values)
        # Only the fields written, and those a constraint ties to them, are checked: an edit
        # of the name is not refused for a Vitality some older version let go over the top,
        # and costs no query per constraint of the fields left alone.
        current.full_clean(exclude=unchanged_fields(Character, written))
        # The locked row's version is the current one: the write and the step are one UPDATE.
        current.version += 1
        current.save(update_fields=[*dict.fromkeys(written), "version", "updated_at"])
        if rows:
            _replace_rows(current, rows)
    return current


def _lock_for_writer(character: Character, user: User) -> Character:
    """The sheet read again under its lock, with its campaign: who may write it is decided on
    this row (``PermissionDenied``), whatever the caller read before."""
    locked = (
        Character.objects.select_for_update(of=("self",))
        .select_related("campaign")
        .get(pk=character.pk)
    )
    _check_writer(locked, user)
    return locked


def _check_writer(character: Character, user: User) -> None:
    if not character.can_edit(user):
        raise PermissionDenied("Only the character's player and the GM can change it.")


def _new_character(
    *,
    user: User,
    values: Mapping[str, Any],
    rows: Mapping[str, Sequence[Mapping[str, Any]]] | None,
) -> Character:
    """A sheet made from a document: :func:`create_character` with the rows it brings."""
    fields = dict(values)
    campaign: Campaign = fields.pop("campaign")
    rows = rows or {}
    with transaction.atomic():
        character = create_character(
            campaign=campaign,
            owner=user,
            # Zones sent with the sheet replace the default humanoid set.
            zones=() if "zones" in rows else DEFAULT_ZONES,
            **fields,
        )
        _replace_rows(character, rows)
    return character


def _replace_rows(character: Character, rows: Mapping[str, Sequence[Mapping[str, Any]]]) -> None:
    """Replace each set of rows given. A row the models refuse (ARM above max ARM once the
    armor fills it in) is reported by its set and position; the caller's transaction undoes
    the whole write."""
    errors: dict[str, dict[int, dict[str, list[str]]]] = {}
    for key, model in ROW_SETS.items():
        if key not in rows:
            continue
        model._default_manager.filter(character=character).delete()
        objs: list[Any] = []
        for position, given in enumerate(rows[key]):
            data = {k: v for k, v in given.items() if k != "id"}
            if key == "zones":
                data.setdefault("position", position)
            obj = model(character=character, **data)
            if isinstance(obj, BodyZone) and "armor_type" in data:
                obj.fill_armor(given=data)
            try:
                obj.full_clean(exclude=["character"])
            except ValidationError as exc:
                errors.setdefault(key, {})[position] = exc.message_dict
            objs.append(obj)
        if key not in errors:
            model._default_manager.bulk_create(objs)
    if errors:
        raise RowsRefused(errors)


def edit_field(
    *,
    user: User,
    character: Character,
    kind: str,
    row_id: int | None,
    field: str,
    value: str,
    original: str,
) -> models.Model:
    """Change one field of a sheet row, as the sheet page does on every edit.

    ``original`` is the value the editor saw; if the stored value differs, someone else
    changed it meanwhile and :class:`EditConflict` is raised instead of overwriting it.
    Invalid values raise ``ValidationError`` and change nothing. A field of the character
    itself is written by :func:`write_character`, as the API writes it.
    """
    if kind not in EDITABLE_FIELDS or field not in EDITABLE_FIELDS[kind]:
        raise ValidationError({field: "This field cannot be edited here."})
    if kind == "character":
        return write_character(
            user=user, character=character, values={field: value}, seen={field: original}, text=True
        )
    model = ROW_MODELS[kind]
    with transaction.atomic():
        # Lock the character first, then the row: one fixed order for every sheet edit.
        locked = _lock_for_writer(character, user)
        row = model._default_manager.select_for_update().filter(character=locked, pk=row_id).first()
        if row is None:
            raise ValidationError({field: "That row no longer exists (deleted elsewhere)."})
        before = getattr(row, field)
        if _display(before) != original:
            raise EditConflict(before)
        setattr(row, field, _parse(model, field, value))
        update = [field]
        if isinstance(row, BodyZone) and field == "armor_type" and row.armor_type != before:
            row.fill_armor()
            update += ["arm", "arm_max"]
        # Only the fields written now, and those a constraint ties to them (ARM and max ARM),
        # are checked.
        row.full_clean(exclude=unchanged_fields(model, update))
        row.save(update_fields=update)
        _rows_changed(locked)
    return row


def _parse(model: type[models.Model], field: str, value: str) -> Any:
    """The sheet page's text for ``field``, parsed by its form field (only parsed: the model
    is validated once, after the write, with the fields the write sets too)."""
    try:
        return _formfield(model._meta.get_field(field)).clean(value)  # type: ignore[arg-type]  # editable fields are columns, never relations
    except ValidationError as exc:
        raise ValidationError({field: exc.messages}) from None


def add_row(*, user: User, character: Character, kind: str, data: dict[str, Any]) -> models.Model:
    """Add a discipline, weapon or zone (``data``: a row form's cleaned data).
    ``PermissionDenied`` unless ``user`` may change the sheet (its owner, the GM);
    ValidationError, with nothing saved, when the row breaks a rule or a constraint."""
    if kind not in ("discipline", "weapon", "zone"):
        raise ValidationError("Unknown kind of row.")
    # A blank optional field (None) was not given: the model's default, or the armor table.
    given = {k: v for k, v in data.items() if k in EDITABLE_FIELDS[kind] and v is not None}
    with transaction.atomic():
        locked = _lock_for_writer(character, user)
        row = ROW_MODELS[kind](character=locked, **given)
        if isinstance(row, BodyZone):
            row.position = locked.zones.count()
            if "armor_type" in given:
                row.fill_armor(given=given)
        row.full_clean()
        row.save()
        _rows_changed(locked)
    return row


def update_row(
    *, user: User, character: Character, kind: str, row_id: int, data: dict[str, Any]
) -> models.Model:
    """Change the given fields of a discipline, weapon or zone (``data``: a row serializer's
    validated data, only the fields sent). The row is read again under the character's lock
    and only the fields sent are written, so a concurrent change to another field (the GM's
    damage on ``wounds``, weapon wear, EXP marks) is never written back to an older value.
    ``PermissionDenied`` unless ``user`` may change the sheet (its owner, the GM);
    ``ObjectDoesNotExist`` when the character or the row was deleted meanwhile;
    ``ValidationError``, with nothing saved, when the result breaks a rule or a constraint."""
    if kind not in ("discipline", "weapon", "zone"):
        raise ValidationError("Unknown kind of row.")
    model = ROW_MODELS[kind]
    with transaction.atomic():
        locked = _lock_for_writer(character, user)
        row = model._default_manager.select_for_update().get(character=locked, pk=row_id)
        armor_type = getattr(row, "armor_type", None)
        fields = [k for k in data if k in EDITABLE_FIELDS[kind] or k == "position"]
        for key in fields:
            setattr(row, key, data[key])
        if isinstance(row, BodyZone) and row.armor_type != armor_type:
            row.fill_armor(given=data)
            fields += ["arm", "arm_max"]
        row.full_clean(exclude=unchanged_fields(model, fields))
        if fields:
            row.save(update_fields=sorted(set(fields)))
        _rows_changed(locked)
    return row


def delete_row(*, user: User, character: Character, kind: str, row_id: int) -> bool:
    """Delete a discipline, weapon or zone; False when it is already gone.
    ``PermissionDenied`` unless ``user`` may change the sheet (its owner, the GM)."""
    if kind not in ("discipline", "weapon", "zone"):
        raise ValidationError("Unknown kind of row.")
    with transaction.atomic():
        if kind in FIGHT_ROWS:
            lock_fights_of(characters=[character.pk])
        locked = _lock_for_writer(character, user)
        deleted, _ = ROW_MODELS[kind]._default_manager.filter(character=locked, pk=row_id).delete()
        if deleted:
            _rows_changed(locked)
    return deleted > 0


def adjust_wounds(*, user: User, character: Character, zone_id: int, delta: int) -> BodyZone:
    """Add (delta > 0) or heal (delta < 0) wounds on a zone by hand. Vitality follows the
    wounds beyond BZF exactly as for a hit or healing (rules.engine.omg.take_damage / heal); the
    first overflow records a grievous wound that calls for a Stamina test.
    ``PermissionDenied`` unless ``user`` may change the sheet (its owner, the GM)."""
    with transaction.atomic():
        locked = _lock_for_writer(character, user)
        zone = BodyZone.objects.select_for_update().filter(character=locked, pk=zone_id).first()
        if zone is None:
            raise ValidationError({"zone": "That zone no longer exists."})
        max_vit = omg.derived(aptitudes_of(locked), bzf=locked.bzf).vit
        vitality = max(0, min(locked.vitality, max_vit))
        rules_zone = omg.Zone(zone.name, wounds=zone.wounds, grievous=bool(zone.grievous))
        if delta >= 0:
            hit = omg.take_damage(rules_zone, delta, bzf=locked.bzf, vitality=vitality)
            zone.wounds, locked.vitality = hit.zone.wounds, hit.vitality
            if hit.grievous:
                zone.grievous = GRIEVOUS_NOTE
        else:
            healed = omg.heal(
                rules_zone, -delta, bzf=locked.bzf, vitality=vitality, max_vitality=max_vit
            )
            zone.wounds, locked.vitality = healed.zone.wounds, healed.vitality
        zone.save(update_fields=["wounds", "grievous"])
        locked.version += 1
        locked.save(update_fields=["vitality", "version", "updated_at"])
    return zone


GRIEVOUS_NOTE = "Grievous wound: Stamina test (STM vs Moderate 20), unconscious on a failure."


# --- Creation and advancement -----------------------------------------------------------------


def create_from_build(
    *,
    campaign: Campaign,
    owner: User,
    name: str,
    aptitudes: omg.AptitudeRoll,
    archetype: str,
    weapon_category: str | None,
    ranks: dict[str, int],
    weight: int | None,
    rng: random.Random,
    is_npc: bool = False,
    weapon: str = "",
    armor: str = "",
    equipment: str = "",
    server_rolled: bool = False,
) -> Character:
    """A character from the creation rules: aptitudes from one of the three methods (their
    sixes already turned into Fate), the archetype's free ranks plus the 7 points
    (rules.engine.omg.validate_creation), BZF from the weight or rolled 6+2d6, and today's ITV.
    Raises rules.RulesError for a build the rules refuse, ``PermissionDenied`` when ``owner``
    may not make it (:func:`create_character`); nothing is saved then."""
    summary = omg.validate_creation(archetype, ranks, weapon_category=weapon_category)
    if weight:
        bzf, rolled = omg.bzf_from_weight(weight), False
    else:
        bzf_roll = omg.roll_bzf(rng=rng)
        bzf, rolled, weight = bzf_roll.bzf, True, bzf_roll.bzf * 14
    apts = aptitudes.aptitudes
    free = set(omg.free_disciplines(archetype, weapon_category))
    with transaction.atomic():
        aptitude_fields: dict[str, Any] = {
            abbr.lower(): value for abbr, value in apts.as_dict().items()
        }
        character = create_character(
            campaign=campaign,
            owner=owner,
            name=name,
            is_npc=is_npc,
            archetype=summary.archetype,
            weight=weight,
            bzf=bzf,
            bzf_rolled=rolled,
            fate=aptitudes.fate,
            itv=omg.roll_itv(apts, rng=rng),
            equipment=equipment,
            creation={
                "method": str(aptitudes.method),
                "dice": list(aptitudes.dice),
                "server_rolled": server_rolled,
            },
            **aptitude_fields,
        )
        if weapon:
            spec = WEAPONS_BY_NAME[weapon]
            Weapon.objects.create(
                character=character,
                name=spec.name,
                category=spec.category or "I",
                dmg=spec.dmg,
                dmg_max=spec.dmg,
            )
        if armor:
            arm = ARMORS_BY_NAME[armor].arm
            character.zones.exclude(name="head").update(armor_type=armor, arm=arm, arm_max=arm)
        Discipline.objects.bulk_create(
            Discipline(
                character=character,
                name=discipline,
                level=rank,
                source=summary.archetype if discipline in free else _source_of(discipline),
                aptitude=guess_aptitude(discipline),
            )
            for discipline, rank in summary.ranks.items()
        )
    return character


def _source_of(discipline: str) -> str:
    for list_name, names in SECONDARY_LISTS.items():
        if discipline in names:
            return list_name
    for archetype in ARCHETYPES:
        if discipline in archetype.pool:
            return archetype.key
    return ""


def guess_aptitude(discipline: str) -> str:
    """The aptitude shown next to a new discipline's PRO; the player can change it. Weapon
    and combat disciplines pair with Skill, lore with Savvy, performance with Charm."""
    lowered = discipline.lower()
    for words, abbr in (
        (("weapon", "melee", "fighting", "kung fu", "lock", "pickpocket", "forgery"), "SKL"),
        (("lore", "accounting", "cartography", "language", "scribe", "research", "arcanum"), "SVY"),
        (("acting", "singing", "conversation", "jesting", "storytelling", "captivate"), "CHR"),
        (("prowling", "evasion", "gymnastics", "dancing"), "SPD"),
        (("meditation", "aethyric", "spellcraft"), "FOC"),
    ):
        if any(word in lowered for word in words):
            return abbr
    return "SVY"


def daily_rest(*, user: User, character: Character, rng: random.Random) -> omg.RestResult:
    """The daily rest on a sheet: EXP marks raise their disciplines (max 5), aptitude raises
    bought with Fate apply, ITV is rerolled, Mana and Chi refill. Raises RulesError, with
    nothing saved, for stored data the rules refuse (a pending raise of no known aptitude).
    ``PermissionDenied`` unless ``user`` may change the sheet (its owner, the GM)."""
    with transaction.atomic():
        locked = _lock_for_writer(character, user)
        disciplines = list(locked.disciplines.select_for_update())
        state = omg.RestState(
            aptitudes_of(locked),
            {d.name: omg.DisciplineState(d.level, d.exp_marks) for d in disciplines},
            fate=locked.fate,
            pending_raises=tuple(filter(None, locked.pending_raises.split(","))),
        )
        result = omg.daily_rest(state, rng=rng)
        for discipline in disciplines:
            discipline.level = max(1, result.state.disciplines[discipline.name].rank)
            discipline.exp_marks = 0
        Discipline.objects.bulk_update(disciplines, ["level", "exp_marks"])
        for abbr, value in result.state.aptitudes.as_dict().items():
            setattr(locked, abbr.lower(), value)
        locked.pending_raises = ""
        locked.itv = result.itv
        locked.mana = result.mna
        locked.chi = result.chi
        locked.version += 1
        locked.save()
        signals.rested.send(sender=Character, character=locked)
    return result


def buy_aptitude_raise(*, user: User, character: Character, aptitude: str) -> Character:
    """Spend 3 Fate for +1 on an aptitude at the next rest (rules.engine.omg.buy_aptitude_raise).
    ``PermissionDenied`` unless ``user`` may change the sheet (its owner, the GM)."""
    with transaction.atomic():
        locked = _lock_for_writer(character, user)
        state = omg.buy_aptitude_raise(
            omg.RestState(
                aptitudes_of(locked),
                fate=locked.fate,
                pending_raises=tuple(filter(None, locked.pending_raises.split(","))),
            ),
            aptitude,
        )
        locked.fate = state.fate
        locked.pending_raises = ",".join(state.pending_raises)
        locked.version += 1
        locked.save(update_fields=["fate", "pending_raises", "version", "updated_at"])
    return locked


def roll_reserve(
    *, user: User, character: Character, rng: random.Random, roll: int | None = None
) -> int:
    """Roll (or record a typed) d100 as the sheet's RSV.
    ``PermissionDenied`` unless ``user`` may change the sheet (its owner, the GM)."""
    value = roll if roll is not None else rng.randint(1, 100)
    if not 1 <= value <= 100:
        raise ValidationError({"roll": "A d100 roll is 1 to 100 (100 for 00)."})
    with transaction.atomic():
        locked = _lock_for_writer(character, user)
        locked.rsv = value
        locked.version += 1
        locked.save(update_fields=["rsv", "version", "updated_at"])
    return value


def reserve_call(
    *,
    user: User,
    character: Character,
    keep_reserve: bool,
    rng: random.Random,
    roll: int | None = None,
) -> omg.ReserveResult:
    """The GM calls a reserve roll: a new d100 is rolled (or typed); the player uses it, or uses
    RSV and stores the new roll as the RSV (rules.engine.omg.reserve_roll).
    ``PermissionDenied`` unless ``user`` may change the sheet (its owner, the GM)."""
    value = roll if roll is not None else rng.randint(1, 100)
    with transaction.atomic():
        locked = _lock_for_writer(character, user)
        if locked.rsv is None:
            raise ValidationError({"rsv": "This sheet has no reserve roll yet: roll RSV first."})
        try:
            result = omg.reserve_roll(locked.rsv, value, keep_reserve=keep_reserve)
        except RulesError as exc:
            raise ValidationError({"roll": str(exc)}) from exc
        locked.rsv = result.rsv
        locked.version += 1
        locked.save(update_fields=["rsv", "version", "updated_at"])
    return result


def rest_campaign(
    *, user: User, campaign: Campaign, rng: random.Random
) -> list[tuple[Character, omg.RestResult]]:
    """The GM's daily rest for every character of the campaign, all or nothing: one
    transaction around them all. A day passes for the whole table; with a transaction each,
    a sheet the rules refuse left the table half rested, and pressing again (once the sheet
    was fixed) rested the others twice. Sheets are locked in id order, each before its rows,
    as the combat services lock theirs: a fight's action holding one makes this wait for it,
    never deadlock with it.
    Each character comes with its rest, in id order (two may share a name).
    Raises RulesError naming the character whose rest the rules refuse; nothing is saved.
    ``PermissionDenied`` unless ``user`` is the campaign's GM."""
    results: list[tuple[Character, omg.RestResult]] = []
    with transaction.atomic():
        # Who runs the table is decided on its row as it is now (a handover changes it), held
        # while the table rests: the campaign before its sheets, as the checks lock them.
        locked = Campaign.objects.select_for_update().filter(pk=campaign.pk).first()
        if locked is None:
            return results
        if not locked.is_gm(user):
            raise PermissionDenied("Only the campaign's GM rests the whole table.")
        for character in locked.characters.order_by("pk"):
            try:
                results.append((character, daily_rest(user=user, character=character, rng=rng)))
            except RulesError as exc:
                raise RulesError(f"{character.name}: {exc}") from exc
    return results
