"""The tracker's per-row pieces that are the same for every page and live render showing the
same values: drawn once (sheets/fragments.py) and reused, so a 20-participant fight does not run
a row's menu templates, URL reversals and form tokens twenty times per render."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.safestring import SafeString

from combat.services import STAMINA_DIF
from rules.engine import omg
from sheets import fragments

register = template.Library()

#: The GM's Difficulty Categories offered for a Stamina test: (name, DIF, the default?).
STAMINA_DIFS = tuple((c.name, c.dif, c.dif == STAMINA_DIF) for c in omg.DIFFICULTY_CATEGORIES)


def _token(context: template.Context) -> str | None:
    """The viewer's CSRF token, or None in the live feed's renders (one serves many viewers;
    htmx sends the token from the page's ``<body hx-headers>``)."""
    if context.get("live_fragment"):
        return None
    token = context.get("csrf_token")
    return str(token) if token else None


@register.simple_tag(takes_context=True)
def tracker_row(context: template.Context, row: Any, counter: int) -> SafeString:
    """``row`` (a :class:`combat.tracker.Row`), the ``counter``-th of the initiative order. Its
    numbers are among its values only when the viewer may see them (``row.show``)."""
    p = row.p
    show = row.show
    is_gm = context.get("is_gm", False)
    running = context.get("running", False)
    numbers: dict[str, Any] = dict.fromkeys(
        ("initiative", "on_alert", "vit_max", "vitality", "zone_items")
    )
    if show:
        numbers = {
            "initiative": p.initiative,
            "on_alert": p.on_alert,
            "vit_max": row.vit_max,
            "vitality": p.character.vitality,
            "zone_items": row.bits.zone_items,
        }
    return fragments.drawn(
        "combat/_row.html",
        {
            "pk": p.pk,
            "counter": counter,
            "is_turn": row.is_turn,
            "skipped": row.skipped,
            "name": p.name,
            "is_npc": p.character.is_npc,
            "hidden": p.hidden,
            "show": show,
            "wounds_word": row.wounds_word,
            **numbers,
            "state": p.state,
            "state_display": p.get_state_display(),
            "conditions": _conditions(context, row, fragments.TOKEN_PLACEHOLDER),
            "counterattacks": p.counterattacks,
            "stamina_due": p.stamina_due and not _finished(context),
            "mine": row.mine,
            "controller": row.controller,
            "stamina_url": row.bits.stamina_url if p.stamina_due else "",
            # The GM sets the Stamina test's DIF (docs/rules.md, "Encounters").
            "stamina_difs": STAMINA_DIFS if is_gm and p.stamina_due else (),
            "is_gm": is_gm,
            "running": running,
            "set_turn_url": row.bits.set_turn_url if is_gm and running else "",
            "menu": _menu(context, row, fragments.TOKEN_PLACEHOLDER) if is_gm else "",
        },
        token=_token(context),
    )


@register.simple_tag(takes_context=True)
def row_conditions(context: template.Context, row: Any) -> SafeString:
    """The conditions of ``row``, with the GM's remove buttons in a fight not finished."""
    return _conditions(context, row, _token(context))


def _finished(context: template.Context) -> bool:
    return bool(context["encounter"].status == "finished")


def _conditions(context: template.Context, row: Any, token: str | None) -> SafeString:
    p = row.p
    removable = bool(context.get("is_gm")) and not _finished(context)
    return fragments.drawn(
        "combat/_conditions.html",
        {
            "pk": p.pk,
            "name": p.name,
            "shown": tuple(p.shown_conditions()),
            "removable": removable,
            "condition_remove_url": row.bits.condition_remove_url if removable else "",
        },
        token=token,
    )


def _menu(context: template.Context, row: Any, token: str | None) -> SafeString:
    """The GM's menu of ``row``: wounds, conditions, hiding, alert and state."""
    p = row.p
    bits = row.bits
    return fragments.drawn(
        "combat/_row_menu.html",
        {
            "pk": p.pk,
            "name": p.name,
            "hidden": p.hidden,
            "hidden_shows": p.hidden_shows,
            "on_alert": p.on_alert,
            "gm_order": p.gm_order,
            "state_options": row.state_options,
            "zone_options": bits.zone_options if row.zones else "",
            "finished": _finished(context),
            "adjust_url": context["adjust_url"],
            "update_url": bits.update_url,
            "condition_add_url": bits.condition_add_url,
        },
        token=token,
    )
