"""Conditions on a participant: what each one is, how long it lasts and at which turn boundary
it ends (docs/rules.md, "Conditions"). Plain Python over the participant's ``conditions``
JSON, so that every change goes through ``services.Changes`` and undo restores it exactly.

One entry of ``Participant.conditions``::

    "prone": {"by": 12, "round": 3, "ends": "turn"}
    "disarmed": {"by": 12, "round": 3, "ends": "round", "until": 4}
    "gm:blessed": {"by": null, "round": 3, "ends": "round", "until": 5, "label": "Blessed"}

``ends`` is when it goes: ``turn`` at the start of the afflicted participant's next turn (or
when that turn is passed over), ``round`` when round ``until`` ends, ``removed`` when the GM
removes it. Entries written before durations existed carry only ``by`` and ``round``: their
condition's default applies.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any

TURN = "turn"
ROUND = "round"
REMOVED = "removed"
ENDS = (TURN, ROUND, REMOVED)

#: A GM's own condition is stored under this prefix, so it never takes a built-in's place.
CUSTOM_PREFIX = "gm:"
MAX_LABEL = 40
MAX_ROUNDS = 100
MAX_CONDITIONS = 20


@dataclass(frozen=True)
class Kind:
    """A built-in condition. ``rounds``: how many rounds a ``round`` condition lasts,
    counting the round it was applied in. ``stops_acting``: the tracker skips the
    participant and refuses their declarations."""

    name: str
    label: str
    icon: str
    ends: str
    rounds: int = 1
    stops_acting: bool = False
    help: str = ""


KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind(
            "stunned",
            "Stunned",
            "zap-off",
            TURN,
            stops_acting=True,
            help="loses their next turn",
        ),
        Kind("prone", "Prone", "arrow-down-to-line", TURN, help="on the ground until their turn"),
        Kind("grappled", "Grappled", "hand-grab", REMOVED, help="held until released"),
        Kind(
            "disarmed",
            "Disarmed",
            "hand",
            ROUND,
            rounds=2,
            help="spends the next round retrieving the weapon",
        ),
        Kind("shoved", "Shoved", "move-right", ROUND, help="pushed back this round"),
        Kind(
            "feinted", "Feinted", "eye", ROUND, help="the feinter's next attack on them this round"
        ),
    )
}
#: The names players and the API may use for built-ins, and the built-in each means.
ALIASES = {"thrown": "prone", "held": "grappled", **{name: name for name in KINDS}}
#: The participant states the tracker also shows as conditions (they stop acting and
#: defending; the GM removes them by setting the state).
STATE_CONDITIONS = {"unconscious": "unconscious", "down": "dying"}
STATE_ICONS = {"unconscious": "moon-star", "dying": "skull"}


class ConditionError(ValueError):
    """A condition that cannot be written as given (the message names the field)."""


def clean_label(raw: Any) -> str:
    """A GM's condition name: one line of printable text, 1 to 40 characters."""
    if not isinstance(raw, str):
        raise ConditionError("name: give the condition's name as text.")
    label = " ".join(raw.split())
    if not label:
        raise ConditionError("name: give the condition a name.")
    if len(label) > MAX_LABEL:
        raise ConditionError(f"name: at most {MAX_LABEL} characters.")
    if any(unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn") for c in label):
        raise ConditionError("name: use printable characters only.")
    return label


def key_for(name: str) -> str:
    """Where a condition named ``name`` is stored: a built-in's own name, else the GM's."""
    builtin = ALIASES.get(name.strip().lower())
    return builtin or CUSTOM_PREFIX + clean_label(name).casefold()


def entry(
    name: str,
    *,
    round_: int,
    by: int | None = None,
    rounds: int | None = None,
    until_removed: bool = False,
) -> tuple[str, dict[str, Any]]:
    """The (key, entry) of a condition applied in round ``round_``: a built-in keeps its own
    duration unless ``rounds`` or ``until_removed`` says otherwise; a GM's own needs one.

    >>> entry("thrown", round_=3, by=7)
    ('prone', {'by': 7, 'round': 3, 'ends': 'turn'})
    >>> entry("Blessed", round_=2, rounds=3)
    ('gm:blessed', {'by': None, 'round': 2, 'ends': 'round', 'until': 4, 'label': 'Blessed'})
    """
    if rounds is not None and (
        isinstance(rounds, bool) or not isinstance(rounds, int) or not 1 <= rounds <= MAX_ROUNDS
    ):
        raise ConditionError(f"rounds: a whole number from 1 to {MAX_ROUNDS}.")
    key = key_for(name)
    start = max(round_, 1)  # added before the fight starts: counted from round 1
    info: dict[str, Any] = {"by": by, "round": round_}
    kind = KINDS.get(key)
    if until_removed:
        info["ends"] = REMOVED
    elif rounds is not None:
        info.update(ends=ROUND, until=start + rounds - 1)
    elif kind is None:
        raise ConditionError("rounds: say how many rounds, or until removed.")
    else:
        info["ends"] = kind.ends
        if kind.ends == ROUND:
            info["until"] = start + kind.rounds - 1
    if kind is None:
        info["label"] = clean_label(name)
    return key, info


def _ends(key: str, info: dict[str, Any]) -> tuple[str, int | None]:
    """When the entry ends: (boundary, last round) with the defaults of older entries."""
    kind = KINDS.get(key)
    ends = info.get("ends") or (kind.ends if kind else REMOVED)
    until = info.get("until")
    if ends == ROUND and until is None:
        until = int(info.get("round", 0)) + (kind.rounds if kind else 1) - 1
    return ends, until


def stops_acting(conditions: dict[str, Any], round_: int) -> str | None:
    """The condition that keeps its participant from acting now, if one does. A disarmed
    fighter acts on in the round of the disarm and loses the next one (docs/rules.md)."""
    for key, info in conditions.items():
        kind = KINDS.get(key)
        if kind is None:
            continue
        if kind.stops_acting:
            return kind.name
        if key == "disarmed" and round_ > int(info.get("round", 0)):
            return kind.name
    return None


def weapon_out_of_hand(conditions: dict[str, Any]) -> bool:
    """Disarmed: no weapon is in hand from the roll that disarmed until the condition ends
    (the round after, spent retrieving it) or the GM lifts it. The tracker does not know
    which of the sheet's weapons was held, so none is (docs/rules.md, "Disarm")."""
    return "disarmed" in conditions


def weapon_back_after(conditions: dict[str, Any]) -> int | None:
    """The last round of a disarm, when the weapon is back as the next one begins; None
    when nothing says (a disarm the GM set until removed)."""
    info = conditions.get("disarmed")
    if info is None:
        return None
    ends, until = _ends("disarmed", info)
    return until if ends == ROUND else None


def at_new_round(conditions: dict[str, Any], new_round: int) -> tuple[dict[str, Any], list[str]]:
    """The conditions left when round ``new_round`` begins, and the labels of those that
    ended with the last round."""
    kept, ended = {}, []
    for key, info in conditions.items():
        ends, until = _ends(key, info)
        if ends == ROUND and until is not None and until < new_round:
            ended.append(label_of(key, info))
        else:
            kept[key] = info
    return kept, ended


def at_turn(conditions: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The conditions left when their participant's turn comes (or is passed over)."""
    kept, ended = {}, []
    for key, info in conditions.items():
        if _ends(key, info)[0] == TURN:
            ended.append(label_of(key, info))
        else:
            kept[key] = info
    return kept, ended


def label_of(key: str, info: dict[str, Any]) -> str:
    kind = KINDS.get(key)
    return kind.label if kind else str(info.get("label") or key.removeprefix(CUSTOM_PREFIX))


@dataclass(frozen=True)
class Shown:
    """A condition as the tracker and the API show it."""

    key: str
    label: str
    icon: str
    custom: bool
    ends: str
    until: int | None
    rounds_left: int | None
    left: str
    stops_acting: bool
    by: int | None


def shown(conditions: dict[str, Any], round_: int) -> list[Shown]:
    """Every condition with what is left of it, in a stable order (built-ins first)."""
    blocked = stops_acting(conditions, round_)
    out = []
    order = {name: i for i, name in enumerate(KINDS)}
    for key in sorted(conditions, key=lambda k: (order.get(k, len(order)), k)):
        info = conditions[key]
        kind = KINDS.get(key)
        ends, until = _ends(key, info)
        rounds_left = None
        if ends == ROUND and until is not None:
            rounds_left = max(0, until - max(round_, 1) + 1)
            left = f"{rounds_left} round{'s' if rounds_left != 1 else ''} left"
        elif ends == TURN:
            left = "until their next turn"
        else:
            left = "until removed"
        out.append(
            Shown(
                key=key,
                label=label_of(key, info),
                icon=kind.icon if kind else "info",
                custom=kind is None,
                ends=ends,
                until=until if ends == ROUND else None,
                rounds_left=rounds_left,
                left=left,
                stops_acting=blocked == key,
                by=info.get("by"),
            )
        )
    return out
