"""The editable field of a character sheet: one small form per field, saved by htmx on change."""

from __future__ import annotations

import functools
from typing import Any

from django import template
from django.db import models
from django.urls import reverse
from django.utils.translation import get_language

register = template.Library()

KIND_OF = {
    "Character": "character",
    "Discipline": "discipline",
    "Weapon": "weapon",
    "BodyZone": "zone",
}


@register.inclusion_tag("sheets/_field.html", takes_context=True)
def sheet_field(
    context: template.Context,
    obj: models.Model,
    field: str,
    label: str = "",
    widget: str = "",
    oob: bool = False,
) -> dict[str, Any]:
    kind = KIND_OF[type(obj).__name__]
    model_field = obj._meta.get_field(field)
    value = getattr(obj, field)
    row = "" if kind == "character" else obj.pk
    edited = context.get("edited")
    is_edited = edited == (kind, row or None, field)
    if not widget:
        if model_field.choices:
            widget = "select"
        elif isinstance(model_field, models.TextField):
            widget = "textarea"
        elif isinstance(model_field, models.IntegerField):
            widget = "number"
        else:
            widget = "text"
    bounds: dict[str, int] = {}
    for validator in model_field.validators:
        if type(validator).__name__ == "MinValueValidator":
            bounds["min"] = validator.limit_value
        if type(validator).__name__ == "MaxValueValidator":
            bounds["max"] = validator.limit_value
    if isinstance(model_field, models.PositiveIntegerField | models.PositiveSmallIntegerField):
        bounds.setdefault("min", 0)
    character = context["character"]
    return {
        "character": character,
        "field_url": context.get("field_url")
        or reverse("sheets:character_edit_field", args=[character.pk]),
        "kind": kind,
        "row": row,
        "field": field,
        "dom_id": f"f-{kind}-{row or 0}-{field}",
        "label": label or _first_upper(str(model_field.verbose_name)),
        "value": "" if value is None else value,
        "widget": widget,
        "choices": _plain_choices(model_field),
        "required": not model_field.blank,
        "bounds": bounds,
        "help": model_field.help_text,
        "can_edit": context.get("can_edit", False),
        "error": context.get("field_error") if is_edited else None,
        "conflict": context.get("conflict") if is_edited else None,
        "oob": oob,
        "csrf_token": context.get("csrf_token"),
    }


@functools.cache
def _plain_choices_in(field: models.Field[Any, Any], language: str) -> tuple[tuple[Any, str], ...]:
    return tuple((key, str(text)) for key, text in field.choices or ())


def _plain_choices(field: models.Field[Any, Any]) -> tuple[tuple[Any, str], ...]:
    """A field's choices with their labels as plain text, worked out once per language (a
    sheet draws the same select dozens of times: armor on every zone, aptitude per row)."""
    return _plain_choices_in(field, get_language() or "")


def _first_upper(text: str) -> str:
    return text[:1].upper() + text[1:]
