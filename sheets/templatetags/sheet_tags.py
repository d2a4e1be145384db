"""The editable field of a character sheet: one small form per field, saved by htmx on change."""

from __future__ import annotations

from typing import Any

from django import template
from django.db import models

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
    return {
        "character": context["character"],
        "kind": kind,
        "row": row,
        "field": field,
        "dom_id": f"f-{kind}-{row or 0}-{field}",
        "label": label or _first_upper(str(model_field.verbose_name)),
        "value": "" if value is None else value,
        "widget": widget,
        "choices": model_field.choices or (),
        "required": not model_field.blank,
        "bounds": bounds,
        "help": model_field.help_text,
        "can_edit": context.get("can_edit", False),
        "error": context.get("field_error") if is_edited else None,
        "conflict": context.get("conflict") if is_edited else None,
        "oob": oob,
        "csrf_token": context.get("csrf_token"),
    }


def _first_upper(text: str) -> str:
    return text[:1].upper() + text[1:]
