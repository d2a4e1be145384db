"""Campaign workflows shared by the pages and the API."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError
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

if TYPE_CHECKING:
    from collections.abc import Collection

    from django.contrib.auth.models import AbstractBaseUser


def join_campaign(*, user: AbstractBaseUser, code: str) -> tuple[Campaign, bool]:
    """Add ``user`` as a player of the campaign whose join code is ``code``.

    Returns the campaign and whether a membership was created (False when the user already
    plays in it or runs it). Raises ValidationError for an unknown code.
    """
    normalized = normalize_join_code(code)
    if not normalized:
        raise ValidationError({"code": "Enter the join code your GM gave you."})
    campaign = Campaign.objects.filter(join_code=normalized).first()
    if campaign is None:
        raise ValidationError(
            {"code": "No campaign has this join code. Check it, or ask your GM for a new one."}
        )
    if campaign.gm_id == user.pk:
        return campaign, False
    with transaction.atomic():
        _, created = Membership.objects.get_or_create(campaign=campaign, user=user)
    return campaign, created


def remove_player(*, campaign: Campaign, user_id: int) -> bool:
    """Remove a player from the campaign. Returns False when they were not a player."""
    deleted, _ = Membership.objects.filter(campaign=campaign, user_id=user_id).delete()
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


class EditConflict(Exception):
    """The value changed since the editor loaded it (another tab, another person)."""

    def __init__(self, current: object) -> None:
        super().__init__("changed elsewhere")
        self.current = current


def create_character(
    *,
    campaign: Campaign,
    owner: AbstractBaseUser,
    name: str,
    is_npc: bool = False,
    zones: tuple[str, ...] = DEFAULT_ZONES,
    **fields: Any,
) -> Character:
    """A new sheet with the default body zones and full Vitality, Mana and Chi. BZF follows the
    weight unless it was rolled or given (an imported sheet keeps the BZF it had)."""
    with transaction.atomic():
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


def delete_character(*, character: Character) -> bool:
    """Delete a sheet with its rows; False when it is already gone. The sheet is locked first,
    as every write to it locks it before its rows: deleting the rows first took their locks in
    the opposite order and deadlocked with a write in progress (which then finishes first, and
    the rows it added go with the sheet)."""
    with transaction.atomic():
        locked = Character.objects.select_for_update().filter(pk=character.pk).first()
        if locked is None:
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
    them all on every edit was most of an edit's queries (issue 15). Rules checked in
    ``clean_fields``, such as a pool within its maximum, are checked when the pool is changed."""
    checked = set(changed)
    for constraint in model._meta.constraints:
        if isinstance(constraint, models.UniqueConstraint):
            fields = set(constraint.fields)
        elif isinstance(constraint, models.CheckConstraint):
            fields = set(constraint.condition.referenced_base_fields)
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


def edit_field(
    *, character: Character, kind: str, row_id: int | None, field: str, value: str, original: str
) -> models.Model:
    """Change one field of a sheet row, as the sheet page does on every edit.

    ``original`` is the value the editor saw; if the stored value differs, someone else
    changed it meanwhile and :class:`EditConflict` is raised instead of overwriting it.
    Invalid values raise ``ValidationError`` and change nothing.
    """
    if kind not in EDITABLE_FIELDS or field not in EDITABLE_FIELDS[kind]:
        raise ValidationError({field: "This field cannot be edited here."})
    model = ROW_MODELS[kind]
    with transaction.atomic():
        # Lock the character first, then the row: one fixed order for every sheet edit.
        locked = Character.objects.select_for_update().get(pk=character.pk)
        if kind == "character":
            row: models.Model = locked
        else:
            row = model.objects.select_for_update().filter(character=locked, pk=row_id).first()
            if row is None:
                raise ValidationError({field: "That row no longer exists (deleted elsewhere)."})
        before = getattr(row, field)
        if _display(before) != original:
            raise EditConflict(before)
        # The form field only parses the text; the model is validated once, below, with the
        # knock-on fields (a ModelForm validated it a first time, every constraint included).
        try:
            parsed = _formfield(model._meta.get_field(field)).clean(value)
        except ValidationError as exc:
            raise ValidationError({field: exc.messages}) from None
        setattr(row, field, parsed)
        update = [field]
        if isinstance(row, Character):
            if field == "weight":
                row.follow_weight()
                update.append("bzf")
            elif field in APTITUDE_FIELDS:
                update += row.clamp_resources()
        elif isinstance(row, BodyZone) and field == "armor_type" and row.armor_type != before:
            row.fill_armor()
            update += ["arm", "arm_max"]
        # Only the fields written now, and those a constraint ties to them (ARM and max ARM),
        # are checked: an edit of the name is not refused for a Vitality some older version
        # let go over the top, and costs no query per constraint of the untouched fields.
        row.full_clean(exclude=unchanged_fields(model, update))
        if isinstance(row, Character):
            # The locked row's version is the current one: the edit and the new version are
            # one UPDATE.
            row.version += 1
            row.save(update_fields=[*update, "version", "updated_at"])
        else:
            row.save(update_fields=update)
            _rows_changed(locked)
    return row


def add_row(*, character: Character, kind: str, data: dict[str, Any]) -> models.Model:
    """Add a discipline, weapon or zone (``data``: a row form's cleaned data).
    ValidationError, with nothing saved, when the row breaks a rule or a constraint."""
    if kind not in ("discipline", "weapon", "zone"):
        raise ValidationError("Unknown kind of row.")
    # A blank optional field (None) was not given: the model's default, or the armor table.
    given = {k: v for k, v in data.items() if k in EDITABLE_FIELDS[kind] and v is not None}
    with transaction.atomic():
        locked = Character.objects.select_for_update().get(pk=character.pk)
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
    *, character: Character, kind: str, row_id: int, data: dict[str, Any]
) -> models.Model:
    """Change the given fields of a discipline, weapon or zone (``data``: a row serializer's
    validated data, only the fields sent). The row is read again under the character's lock
    and only the fields sent are written, so a concurrent change to another field (the GM's
    damage on ``wounds``, weapon wear, EXP marks) is never written back to an older value.
    ``ObjectDoesNotExist`` when the character or the row was deleted meanwhile;
    ``ValidationError``, with nothing saved, when the result breaks a rule or a constraint."""
    if kind not in ("discipline", "weapon", "zone"):
        raise ValidationError("Unknown kind of row.")
    model = ROW_MODELS[kind]
    with transaction.atomic():
        locked = Character.objects.select_for_update().get(pk=character.pk)
        row = model.objects.select_for_update().get(character=locked, pk=row_id)
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


def delete_row(*, character: Character, kind: str, row_id: int) -> bool:
    if kind not in ("discipline", "weapon", "zone"):
        raise ValidationError("Unknown kind of row.")
    with transaction.atomic():
        locked = Character.objects.select_for_update().get(pk=character.pk)
        deleted, _ = ROW_MODELS[kind].objects.filter(character=locked, pk=row_id).delete()
        if deleted:
            _rows_changed(locked)
    return deleted > 0


def adjust_wounds(*, character: Character, zone_id: int, delta: int) -> BodyZone:
    """Add (delta > 0) or heal (delta < 0) wounds on a zone by hand. Vitality follows the
    wounds beyond BZF exactly as for a hit or healing (rules.engine.omg.take_damage / heal); the
    first overflow records a grievous wound that calls for a Stamina test."""
    with transaction.atomic():
        locked = Character.objects.select_for_update().get(pk=character.pk)
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
    owner: AbstractBaseUser,
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
    Raises rules.RulesError for a build the rules refuse; nothing is saved then."""
    summary = omg.validate_creation(archetype, ranks, weapon_category=weapon_category)
    if weight:
        bzf, rolled = omg.bzf_from_weight(weight), False
    else:
        bzf_roll = omg.roll_bzf(rng=rng)
        bzf, rolled, weight = bzf_roll.bzf, True, bzf_roll.bzf * 14
    apts = aptitudes.aptitudes
    free = set(omg.free_disciplines(archetype, weapon_category))
    with transaction.atomic():
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
            **{abbr.lower(): value for abbr, value in apts.as_dict().items()},
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


def daily_rest(*, character: Character, rng: random.Random) -> omg.RestResult:
    """The daily rest on a sheet: EXP marks raise their disciplines (max 5), aptitude raises
    bought with Fate apply, ITV is rerolled, Mana and Chi refill. Raises RulesError, with
    nothing saved, for stored data the rules refuse (a pending raise of no known aptitude)."""
    with transaction.atomic():
        locked = Character.objects.select_for_update().get(pk=character.pk)
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


def buy_aptitude_raise(*, character: Character, aptitude: str) -> Character:
    """Spend 3 Fate for +1 on an aptitude at the next rest (rules.engine.omg.buy_aptitude_raise)."""
    with transaction.atomic():
        locked = Character.objects.select_for_update().get(pk=character.pk)
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


def roll_reserve(*, character: Character, rng: random.Random, roll: int | None = None) -> int:
    """Roll (or record a typed) d100 as the sheet's RSV."""
    value = roll if roll is not None else rng.randint(1, 100)
    if not 1 <= value <= 100:
        raise ValidationError({"roll": "A d100 roll is 1 to 100 (100 for 00)."})
    with transaction.atomic():
        locked = Character.objects.select_for_update().get(pk=character.pk)
        locked.rsv = value
        locked.version += 1
        locked.save(update_fields=["rsv", "version", "updated_at"])
    return value


def reserve_call(
    *, character: Character, keep_reserve: bool, rng: random.Random, roll: int | None = None
) -> omg.ReserveResult:
    """The GM calls a reserve roll: a new d100 is rolled (or typed); the player uses it, or uses
    RSV and stores the new roll as the RSV (rules.engine.omg.reserve_roll)."""
    value = roll if roll is not None else rng.randint(1, 100)
    with transaction.atomic():
        locked = Character.objects.select_for_update().get(pk=character.pk)
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
    *, campaign: Campaign, rng: random.Random
) -> list[tuple[Character, omg.RestResult]]:
    """The GM's daily rest for every character of the campaign, all or nothing: one
    transaction around them all. A day passes for the whole table; with a transaction each,
    a sheet the rules refuse left the table half rested, and pressing again (once the sheet
    was fixed) rested the others twice. Sheets are locked in id order, each before its rows,
    as the combat services lock theirs: a fight's action holding one makes this wait for it,
    never deadlock with it.
    Each character comes with its rest, in id order (two may share a name).
    Raises RulesError naming the character whose rest the rules refuse; nothing is saved."""
    results = []
    with transaction.atomic():
        for character in campaign.characters.order_by("pk"):
            try:
                results.append((character, daily_rest(character=character, rng=rng)))
            except RulesError as exc:
                raise RulesError(f"{character.name}: {exc}") from exc
    return results
