"""The character sheet page's body, drawn once per state of the sheet and rights of its viewer.

Drawing the sheet's ninety fields, tables and forms was most of the page's time, and
the table reads the same sheet again and again between edits. The body is therefore drawn from
a context that holds only what its key holds, so nothing else can leak into it:

- the sheet's state: every stored value of the character and of its rows, its campaign's name
  and its owner's username (a fingerprint of the values themselves, so no writer anywhere needs
  to remember to bump a version for the cache to stay true);
- the viewer's rights: may edit (owner or GM), is the GM (the NPC visibility form), and the
  pending reserve call kept in the viewer's session;
- the language and the URL prefix.

Who may see the sheet at all (hidden NPCs, outsiders) is checked before, on every request.

The CSRF token is never stored: the body is drawn with a random per-process placeholder in its
place, kept split at the placeholder, and joined with the viewer's token on each request. The
placeholder never leaves the server, so no user text can imitate it.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from django.db import models
from django.template.loader import render_to_string
from django.urls import get_script_prefix
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language

from sheets.models import Character

#: Stands for the viewer's CSRF token in a stored body. Hex, so escaping leaves it as it is.
TOKEN_PLACEHOLDER = f"csrf{secrets.token_hex(16)}"

#: Bodies kept per process. An editable sheet's body is about 110 KB of text; a table of a
#: dozen sheets seen by the GM, the owner and the other players fits many times over.
MAX_BODIES = 64

_bodies: OrderedDict[tuple[Any, ...], tuple[str, ...]] = OrderedDict()
_lock = threading.Lock()


def _values(obj: models.Model) -> tuple[Any, ...]:
    return tuple(getattr(obj, field.attname) for field in obj._meta.concrete_fields)


def sheet_state(character: Character) -> bytes:
    """A digest of everything stored that the sheet's body shows (the character with its rows
    prefetched, as ``Character.objects.with_sheet()`` gives it)."""
    state = (
        _values(character),
        character.campaign.name,
        character.owner.get_username(),
        [_values(row) for row in character.disciplines.all()],
        [_values(row) for row in character.weapons.all()],
        [_values(row) for row in character.zones.all()],
    )
    return hashlib.blake2b(repr(state).encode("utf-8", "surrogatepass"), digest_size=20).digest()


def sheet_body(
    template: str,
    character: Character,
    *,
    can_edit: bool,
    is_gm: bool,
    reserve_pending: Any,
    token: str,
    context: Callable[[], dict[str, Any]],
) -> SafeString:
    """The body drawn by ``template`` (a partial), from ``context()`` (called on a miss only)
    with the key's facts added, with ``token`` as its CSRF token."""
    if not token.isascii() or not token.isalnum():
        # A CSRF token is letters and digits; anything else would be markup let through.
        raise ValueError("A CSRF token is letters and digits only.")
    key = (
        template,
        character.pk,
        sheet_state(character),
        can_edit,
        is_gm,
        reserve_pending,
        get_language(),
        get_script_prefix(),
    )
    with _lock:
        pieces = _bodies.get(key)
        if pieces is not None:
            _bodies.move_to_end(key)
    if pieces is None:
        # No request: no context processor adds the user, the session or a token the key
        # does not cover.
        html = render_to_string(
            template,
            {
                **context(),
                "character": character,
                "can_edit": can_edit,
                "is_gm": is_gm,
                "reserve_pending": reserve_pending,
                "csrf_token": TOKEN_PLACEHOLDER,
            },
        )
        pieces = tuple(html.split(TOKEN_PLACEHOLDER))
        with _lock:
            _bodies[key] = pieces
            _bodies.move_to_end(key)
            while len(_bodies) > MAX_BODIES:
                _bodies.popitem(last=False)
    return _join(pieces, token)


def _join(pieces: tuple[str, ...], between: str) -> SafeString:
    # The pieces are a template's own output, escaped there; only a token (letters and
    # digits, checked by the callers) or a token's input built here goes between.
    return mark_safe(between.join(pieces))  # noqa: S308


#: Small fragments kept per process (a row's menu is about 3 KB): a few tables' rows.
MAX_FRAGMENTS = 2048

_fragments: OrderedDict[tuple[Any, ...], tuple[str, ...]] = OrderedDict()

_TOKEN_INPUT = '<input type="hidden" name="csrfmiddlewaretoken" value="{}">'  # noqa: S105 - markup, not a secret


def drawn(template: str, values: dict[str, Any], *, token: str | None) -> SafeString:
    """``template`` drawn from ``values`` alone (hashable plain values: text, numbers, URLs,
    already drawn fragments) once per set of values, language and URL prefix, then reused.
    Its forms' ``{% form_token %}`` inputs carry ``token``; with None (the live feed's shared
    renders, or no token) they are left out. The template sees nothing but ``values``: no
    request, user or session, so nothing that the key does not hold can get into it."""
    if token is not None and not (token.isascii() and token.isalnum()):
        raise ValueError("A CSRF token is letters and digits only.")
    key = (template, tuple(sorted(values.items())), get_language(), get_script_prefix())
    with _lock:
        pieces = _fragments.get(key)
        if pieces is not None:
            _fragments.move_to_end(key)
    if pieces is None:
        html = render_to_string(template, {**values, "csrf_token": TOKEN_PLACEHOLDER})
        pieces = tuple(html.split(_TOKEN_INPUT.format(TOKEN_PLACEHOLDER)))
        with _lock:
            _fragments[key] = pieces
            _fragments.move_to_end(key)
            while len(_fragments) > MAX_FRAGMENTS:
                _fragments.popitem(last=False)
    return _join(pieces, _TOKEN_INPUT.format(token) if token is not None else "")


def clear() -> None:
    """Forget every stored body (tests)."""
    with _lock:
        _bodies.clear()
        _fragments.clear()
