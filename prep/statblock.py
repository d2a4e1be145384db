"""A library NPC's stat block: validated exactly as a character import is (the sheets API's
serializers, then the models' own checks), stored normalized, and turned into a campaign
sheet when it goes into a fight."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError
from rest_framework import serializers

from rules.engine.omg_data import DEFAULT_ZONES
from sheets import services as sheet_services
from sheets.api.characters import CharacterSerializer
from sheets.models import APTITUDE_FIELDS, BodyZone, Campaign, Character, Discipline, Weapon

if TYPE_CHECKING:
    from sheets.users import User

#: The sheet fields a stat block keeps (besides its rows); everything else of an exported
#: character (campaign, owner, current pools, composites...) is ignored on import.
FIELDS = (
    "occupation",
    "appearance",
    "notes",
    "archetype",
    *APTITUDE_FIELDS,
    "weight",
    "bzf",
    "bzf_rolled",
    "yards_per_height",
)
ROW_FIELDS = {
    "disciplines": ("name", "source", "level", "aptitude"),
    "weapons": ("name", "category", "dmg", "dmg_max", "bonus"),
    "zones": ("name", "position", "armor_type", "arm", "arm_max", "arm_bonus"),
}
ROW_MODELS: dict[str, type[Discipline | Weapon | BodyZone]] = {
    "disciplines": Discipline,
    "weapons": Weapon,
    "zones": BodyZone,
}


class StatBlockSerializer(CharacterSerializer):
    """The character serializer less what belongs to a campaign or is computed."""

    campaign = None  # type: ignore[assignment]  # a field dropped from the parent
    owner = None  # type: ignore[assignment]  # a field dropped from the parent
    composites = None  # type: ignore[assignment]  # a field dropped from the parent
    derived = None  # type: ignore[assignment]  # a field dropped from the parent
    strikes = None  # type: ignore[assignment]  # a field dropped from the parent
    defenses = None  # type: ignore[assignment]  # a field dropped from the parent
    discipline_pro = None  # type: ignore[assignment]  # a field dropped from the parent
    pending_raises = None  # type: ignore[assignment]  # a field dropped from the parent
    creation = None  # type: ignore[assignment]  # a field dropped from the parent

    class Meta(CharacterSerializer.Meta):
        fields = ["name", *FIELDS, "disciplines", "weapons", "zones"]
        read_only_fields: list[str] = []

    def get_fields(self) -> dict[str, Any]:
        return serializers.ModelSerializer.get_fields(self)

    def known_keys(self) -> set[str]:
        # An exported character sheet is a stat block too: its other keys are ignored.
        return {*super().known_keys(), *CharacterSerializer.Meta.fields}


def _flat(exc: ValidationError, prefix: str = "") -> dict[str, list[str]]:
    return {f"{prefix}{k}": list(v) for k, v in exc.message_dict.items()}


def validate(data: Any, *, request: Any) -> tuple[dict[str, Any] | None, Any]:
    """``(sheet, None)`` for a valid stat block, normalized (``name`` included), or
    ``(None, errors)`` with DRF-style errors naming each field."""
    if not isinstance(data, dict):
        return None, {"non_field_errors": ["A stat block is one JSON object."]}
    serializer = StatBlockSerializer(data=data, context={"request": request})
    if not serializer.is_valid():
        return None, serializer.errors
    attrs = dict(serializer.validated_data)
    rows = {key: attrs.pop(key, None) for key in ROW_FIELDS}
    character = Character(name=attrs.pop("name"), is_npc=True, **attrs)
    errors: dict[str, list[str]] = {}
    try:
        if "bzf" not in attrs:
            character.follow_weight()
        character.full_clean(exclude=["campaign", "owner"])
    except ValidationError as exc:
        errors.update(_flat(exc))
    sheet: dict[str, Any] = {"name": character.name}
    sheet.update({f: getattr(character, f) for f in FIELDS})
    if rows["zones"] is None:
        rows["zones"] = [{"name": z} for z in DEFAULT_ZONES]
    for key, fields in ROW_FIELDS.items():
        out = []
        for index, row in enumerate(rows[key] or []):
            row = {k: v for k, v in row.items() if k != "id"}
            if key == "zones":
                row.setdefault("position", index)
            obj = ROW_MODELS[key](**row)
            if isinstance(obj, BodyZone):
                obj.fill_armor(given=row)
            try:
                obj.full_clean(exclude=["character"], validate_unique=False)
            except ValidationError as exc:
                errors.update(_flat(exc, f"{key}.{index}."))
            out.append({f: getattr(obj, f) for f in fields})
        sheet[key] = out
    if not sheet["zones"]:
        errors["zones"] = ["A stat block needs at least one body zone."]
    if errors:
        return None, errors
    return sheet, None


def error_lines(errors: Any, prefix: str = "") -> list[str]:
    """DRF-style errors as "field: message" lines (the character import's wording)."""
    from sheets.views.characters import flatten_errors

    return flatten_errors(errors, prefix)


def materialize(sheet: dict[str, Any], *, campaign: Campaign, owner: User, name: str) -> Character:
    """A campaign sheet for one fight from a stat block: an NPC the players do not see, with
    full Vitality, Mana and Chi, marked ``fight_only``. Call inside a transaction."""
    fields = {f: sheet[f] for f in FIELDS if f in sheet}
    character = sheet_services.create_character(
        campaign=campaign, owner=owner, name=name, is_npc=True, zones=(), **fields
    )
    Character.objects.filter(pk=character.pk).update(fight_only=True)
    character.fight_only = True
    for key, model in ROW_MODELS.items():
        rows = [model(character=character, **row) for row in sheet.get(key, [])]
        model.objects.bulk_create(rows)  # type: ignore[arg-type]  # all rows of this model
    return character
