"""The editable field of a character sheet: one small form per field, saved by htmx on change.

A sheet draws about ninety of them, so the HTML is built here with ``format_html`` from facts
worked out once per model field (widget, bounds, choices, label) rather than by an inclusion
tag: rendering a template per field was most of the page's time.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from django import forms, template
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.template.defaultfilters import linebreaksbr
from django.urls import reverse
from django.utils.formats import localize
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import get_language

register = template.Library()

KIND_OF = {
    "Character": "character",
    "Discipline": "discipline",
    "Weapon": "weapon",
    "BodyZone": "zone",
}


# format_html needs an argument: these constant pieces of markup pass their one value in.
OOB = format_html(' hx-swap-oob="{}"', "true")
INVALID = format_html(' aria-invalid="{}"', "true")
BLANK_OPTION = format_html('<option value="">{}</option>', "—")
SELECTED = format_html(" {}", "selected")
NUMERIC = format_html(' inputmode="{}"', "numeric")


@dataclass(frozen=True)
class FieldFacts:
    """What a sheet field's HTML needs from its model field, the same for every row."""

    kind: str
    label: str
    widget: str
    choices: tuple[tuple[Any, str], ...]
    required: bool
    title: str


@functools.cache
def _facts(model: type[models.Model], field: str, widget: str, language: str) -> FieldFacts:
    model_field = model._meta.get_field(field)
    if not isinstance(model_field, models.Field):
        raise TypeError(f"{model.__name__}.{field} is a relation, not a field of the sheet")
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
        if isinstance(validator, MinValueValidator):
            bounds["min"] = validator.limit_value
        if isinstance(validator, MaxValueValidator):
            bounds["max"] = validator.limit_value
    if isinstance(model_field, models.PositiveIntegerField | models.PositiveSmallIntegerField):
        bounds.setdefault("min", 0)
    title = ""
    if widget == "number" and "min" in bounds and "max" in bounds:
        title = f"{bounds['min']} to {bounds['max']}"
    return FieldFacts(
        kind=KIND_OF[model.__name__],
        label=_first_upper(str(model_field.verbose_name)),
        widget=widget,
        choices=tuple((key, str(text)) for key, text in model_field.choices or ()),
        required=not model_field.blank,
        title=title,
    )


@register.simple_tag(takes_context=True)
def sheet_field(
    context: template.Context,
    obj: models.Model,
    field: str,
    label: str = "",
    widget: str = "",
    oob: bool = False,
) -> SafeString:
    """One field of the sheet: its small form, or its value when the user only reads."""
    facts = _facts(type(obj), field, widget, get_language() or "")
    kind = facts.kind
    value = getattr(obj, field)
    value = "" if value is None else value
    row = "" if kind == "character" else obj.pk
    dom_id = f"f-{kind}-{row or 0}-{field}"
    label = label or facts.label
    oob_attr = OOB if oob else ""
    if not context.get("can_edit", False):
        if facts.widget == "select":
            shown = "".join(text for key, text in facts.choices if key == value)
        elif facts.widget == "textarea":
            shown = linebreaksbr(value, autoescape=True)
        else:
            shown = localize(value or "—")
        return format_html(
            '<div id="{}" class="sheet-field readonly"{}>\n  <span class="label">{}</span>\n'
            '  <span class="value">{}</span>\n</div>\n',
            dom_id,
            oob_attr,
            label,
            shown,
        )
    is_edited = context.get("edited") == (kind, row or None, field)
    error = context.get("field_error") if is_edited else None
    conflict = context.get("conflict") if is_edited else None
    invalid = INVALID if error else ""
    shown_value = localize(value)
    if facts.widget == "select":
        control = format_html(
            '<select id="{}-value" name="value"{} aria-describedby="{}-msg">\n{}\n{}\n</select>',
            dom_id,
            invalid,
            dom_id,
            BLANK_OPTION if not facts.required else "",
            _options(facts, value),
        )
    elif facts.widget == "textarea":
        control = format_html(
            '<textarea id="{}-value" name="value" rows="3" aria-describedby="{}-msg">{}</textarea>',
            dom_id,
            dom_id,
            shown_value,
        )
    else:
        # No min/max on the input: the server's inline message explains a bad value better
        # than the browser's bubble.
        number = facts.widget == "number"
        control = format_html(
            '<input id="{}-value" name="value" type="{}" value="{}"{}{} aria-describedby="{}-msg">',
            dom_id,
            "text" if number else facts.widget,
            shown_value,
            _number_attrs(facts.title) if number else "",
            invalid,
            dom_id,
        )
    message: str  # SafeString or empty: format_html escapes it below either way
    if conflict is not None:
        message = format_html(
            "Changed elsewhere to “{}” while you edited; your value was not saved. "
            "This is the current value now.",
            conflict or "—",
        )
    elif error:
        message = format_html("{} The last good value is kept.", error)
    else:
        message = ""
    # Enter (a phone's Go key) fires change and then submits the form: both go through htmx,
    # and the submit is dropped while the change's save is on its way, so one edit is one save
    # (a second save would carry the old "original" and read as a conflict). A submit alone
    # (a browser that fires no change on Enter) still saves.
    return format_html(
        '<form id="{}" class="sheet-field{}" method="post"\n      action="{}"\n'
        '      hx-post="{}" hx-trigger="change, submit" hx-sync="this:drop"\n'
        '      hx-target="this" hx-swap="outerHTML"{}>\n'
        '  <input type="hidden" name="csrfmiddlewaretoken" value="{}">\n'
        '  <input type="hidden" name="kind" value="{}">\n'
        '  <input type="hidden" name="row" value="{}">\n'
        '  <input type="hidden" name="field" value="{}">\n'
        '  <input type="hidden" name="original" value="{}">\n'
        '  <label for="{}-value">{}</label>\n  {}\n'
        '  <small id="{}-msg" class="field-msg" role="status">{}</small>\n'
        '  <noscript><button type="submit" class="secondary">Save</button></noscript>\n'
        "</form>\n",
        dom_id,
        " has-error" if error or conflict is not None else "",
        *[
            context.get("field_url")
            or reverse("sheets:character_edit_field", args=[context["character"].pk])
        ]
        * 2,
        oob_attr,
        context.get("csrf_token") or "",
        kind,
        row,
        field,
        shown_value,
        dom_id,
        label,
        control,
        dom_id,
        message,
    )


@functools.cache
def _number_attrs(title: str) -> SafeString:
    if title:
        return format_html(' inputmode="numeric" title="{}"', title)
    return NUMERIC


def _options(facts: FieldFacts, value: Any) -> SafeString:
    """A select's options with ``value`` selected, drawn once per field, language and value
    (the armor select repeats on every zone)."""
    key = (facts, value if any(k == value for k, _ in facts.choices) else None)
    if key not in _OPTIONS:
        _OPTIONS[key] = format_html_join(
            "",
            '<option value="{}"{}>{}</option>',
            ((k, SELECTED if k == value else "", text) for k, text in facts.choices),
        )
    return _OPTIONS[key]


_OPTIONS: dict[tuple[FieldFacts, Any], SafeString] = {}


#: The blank "add a row" forms' fields as HTML, per (section, language): the same on every
#: sheet, and Django's form renderer takes a template per widget to draw them.
_BLANK_ROW_FORMS: dict[tuple[str, str], SafeString] = {}


@register.simple_tag
def row_form_fields(form: forms.BaseForm) -> SafeString:
    """``form.as_div()``, drawn once per section and language while the form is blank (a
    form with the user's data and its errors is drawn as it is)."""
    if form.is_bound:
        return form.as_div()
    key = (form.prefix or "", get_language() or "")
    if key not in _BLANK_ROW_FORMS:
        _BLANK_ROW_FORMS[key] = form.as_div()
    return _BLANK_ROW_FORMS[key]


def _first_upper(text: str) -> str:
    return text[:1].upper() + text[1:]
