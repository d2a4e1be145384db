"""The record of a fight: its log, round by round, and its outcome, for the campaign's journal
(Markdown or JSON). Built as the viewer sees the fight: a player's record reads the public text
of every entry involving a participant hidden from them and carries none of the log's numbers
(results, changes) nor the d100 of its rolls; the GM's has everything (docs/security.md,
"Who sees an NPC"). A finished fight's participants are read from the snapshot taken when it
ended (``Encounter.record``), not from the sheets as later fights left them."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from combat import access, conditions
from combat.models import CombatLogEntry, Encounter, Participant
from rules.engine import omg
from sheets.models import BodyZone
from sheets.numbers import aptitudes_of

if TYPE_CHECKING:
    from sheets.users import AnyUser as User

FORMAT_VERSION = 1


@dataclass(frozen=True)
class Outcome:
    """Who was left standing, who fell (with how), how many rounds, and when it ended."""

    standing: list[str]
    fallen: list[tuple[str, str]]
    rounds: int
    ended_at: datetime | None

    @property
    def summary(self) -> str:
        standing = ", ".join(self.standing) or "nobody"
        return f"{self.rounds} round{'s' if self.rounds != 1 else ''}; standing: {standing}"


_STATES = {value: str(label) for value, label in Participant.State.choices}


def snapshot(
    encounter: Any, participants: Iterable[Any], zones: dict[int, list[Any]]
) -> dict[str, Any]:
    """What the record keeps of each participant and its sheet, as it stands now: taken when
    the fight ends (Encounter.record) and read from then on, whatever later fights do to the
    sheets. ``zones``: each character's zones by character id.

    Model fields only (no properties or methods of the models): the migration that froze the
    fights finished before snapshots existed calls it with its historical models."""
    out = []
    for p in participants:
        c = p.character
        out.append(
            {
                "id": p.pk,
                "name": c.name,
                "npc": c.is_npc,
                "owner": c.owner_id,
                "hidden": p.hidden,
                "state": p.state,
                "state_display": _STATES.get(p.state, p.state),
                "conditions": [s.label for s in conditions.shown(p.conditions, encounter.round)],
                "initiative": p.initiative,
                "on_alert": p.on_alert,
                "vitality": c.vitality,
                "vit_max": omg.derived(aptitudes_of(c), bzf=c.bzf).vit,
                "bzf": c.bzf,
                "zones": [[z.pk, z.name, z.wounds, z.arm, z.arm_max] for z in zones.get(c.pk, [])],
            }
        )
    return {"format": FORMAT_VERSION, "participants": out}


def take_snapshot(encounter: Encounter) -> dict[str, Any]:
    """:func:`snapshot` of the encounter's participants, read now (three queries)."""
    ps = list(encounter.participants.select_related("character"))
    zones: dict[int, list[BodyZone]] = {}
    for z in BodyZone.objects.filter(character_id__in=[p.character_id for p in ps]):
        zones.setdefault(z.character_id, []).append(z)
    return snapshot(encounter, ps, zones)


def people(encounter: Encounter) -> list[dict[str, Any]]:
    """The participants as the record shows them: the snapshot of a finished fight (one
    finished before snapshots existed was given one by the migration that added them), the
    sheets as they stand for a fight still going on."""
    frozen = encounter.record if encounter.status == Encounter.Status.FINISHED else None
    if frozen is None:
        frozen = take_snapshot(encounter)
    return list(frozen["participants"])


def _ended(encounter: Encounter) -> datetime | None:
    return (
        CombatLogEntry.objects.filter(encounter=encounter, kind=CombatLogEntry.Kind.FINISH)
        .order_by("-seq")
        .values_list("created_at", flat=True)
        .first()
    )


def _outcome(encounter: Encounter, ps: list[dict[str, Any]], ended: datetime | None) -> Outcome:
    active = Participant.State.ACTIVE
    return Outcome(
        standing=[p["name"] for p in ps if p["state"] == active],
        fallen=[(p["name"], p["state_display"]) for p in ps if p["state"] != active],
        rounds=encounter.round,
        ended_at=ended,
    )


def past_fights(encounters: list[Encounter]) -> list[tuple[Encounter, Outcome]]:
    """Finished encounters with their outcome (each from its snapshot), in one query whatever
    their number (and a few for a fight without a snapshot)."""
    ids = [e.pk for e in encounters]
    ended = dict(
        CombatLogEntry.objects.filter(encounter_id__in=ids, kind=CombatLogEntry.Kind.FINISH)
        .order_by("seq")
        .values_list("encounter_id", "created_at")
    )
    return [(e, _outcome(e, people(e), ended.get(e.pk))) for e in encounters]


def build(encounter: Encounter, user: User) -> dict[str, Any]:
    """The record as ``user`` may read it (a JSON-ready dict)."""
    ps = people(encounter)
    gm = encounter.campaign.is_gm(user)
    hidden = access.hidden_among(encounter, user, ((p["id"], p["hidden"], p["owner"]) for p in ps))
    o = _outcome(encounter, ps, _ended(encounter))
    entries = []
    round_ = 0
    for entry in encounter.log.select_related("reverts").order_by("seq"):
        for c in entry.changes:
            if c["model"] == "encounter" and c["field"] == "round":
                round_ = int(c["after"] or 0)
        item: dict[str, Any] = {
            "seq": entry.seq,
            "round": round_,
            "kind": entry.kind,
            "at": entry.created_at.isoformat(),
            "text": entry.text_for(user, hidden),
            # Not the d100 of a roll whose numbers are hidden from the viewer: with the degree
            # or the effect it bounds the hidden side's PRO or DIF (docs/security.md).
            "roll": entry.roll_for(hidden),
            "table_dice": entry.physical,
            "undoes": entry.reverts.seq if entry.reverts is not None else None,
        }
        if gm:
            item["result"] = entry.outcome.as_payload() if entry.outcome else None
            item["changes"] = entry.changes
        entries.append(item)
    return {
        "format": FORMAT_VERSION,
        "encounter": {
            "id": encounter.pk,
            "name": encounter.name,
            "campaign": encounter.campaign.name,
            "status": encounter.status,
            "rounds": o.rounds,
            "created_at": encounter.created_at.isoformat(),
            "ended_at": o.ended_at.isoformat() if o.ended_at else None,
        },
        "for_gm": gm,
        "outcome": {
            "standing": o.standing,
            "fallen": [{"name": n, "state": s} for n, s in o.fallen],
        },
        "participants": [
            {
                "id": p["id"],
                "name": p["name"],
                "npc": p["npc"],
                "hidden": p["hidden"],
                "state": p["state"],
                "conditions": p["conditions"],
                **(
                    {"vitality": p["vitality"]}
                    if p["id"] not in hidden
                    else {}  # a hidden NPC's numbers stay with the GM
                ),
            }
            for p in ps
        ],
        "log": entries,
    }


# What changes meaning in the Markdown a record is pasted into (GitHub, Discord, Slack): only
# that is escaped, so a name such as "Thug #2" or "Bang!" reads as typed. Anywhere in a line:
# code, emphasis and strikethrough marks, link brackets (which also stops "![" images), "<"
# (HTML and autolinks), an underscore at a word's edge (inside a word it is not emphasis), a
# pair of pipes (Discord's spoiler), "&" opening an entity, and a backslash that would escape
# what follows it (or what this code puts after the text).
_MD_INLINE = re.compile(
    r"[`*\[\]<~]"
    r"|\\(?=[!-/:-@\[-`{-~]|$)"
    r"|(?<![^\W_])_|_(?![^\W_])"
    r"|\|(?=\|)|(?<=\|)\|"
    r"|&(?=#?[0-9A-Za-z]+;)"
)
# At the start of a line only: a heading, a quote, a list item.
_MD_LINE_START = re.compile(
    r"^(?:(?=#{1,6}(?:\s|$))|(?=>)|(?=[-+](?:\s|$))|(\d{1,9})(?=[.)](?:\s|$)))"
)


def md(text: str) -> str:
    """User text made inert in Markdown: no markup, links or HTML from names and labels, and
    nothing escaped that would not change meaning (see _MD_INLINE).

    >>> md("<b>Bob</b> [x](y) *z* Thug #2!")
    '\\\\<b>Bob\\\\</b> \\\\[x\\\\](y) \\\\*z\\\\* Thug #2!'
    >>> md("# 1. Boss")
    '\\\\# 1. Boss'
    """
    text = " ".join(str(text).split())
    text = _MD_INLINE.sub(lambda m: "\\" + m.group(0), text)
    # The whole text is one line: its start is the only line start.
    return _MD_LINE_START.sub(lambda m: (m.group(1) or "") + "\\", text, count=1)


def markdown(record: dict[str, Any]) -> str:
    """The record as a Markdown page: heading, outcome, who fought, the log by round."""
    e = record["encounter"]
    out = [f"# {md(e['name'])}", ""]
    out.append(f"*{md(e['campaign'])}*, {e['created_at'][:10]}")
    out.append("")
    rounds = e["rounds"]
    out.append(f"**Rounds:** {rounds} · **Status:** {e['status']}")
    standing = ", ".join(md(n) for n in record["outcome"]["standing"]) or "nobody"
    out.append("")
    out.append(f"**Left standing:** {standing}")
    if record["outcome"]["fallen"]:
        fallen = ", ".join(
            f"{md(f['name'])} ({md(f['state'])})" for f in record["outcome"]["fallen"]
        )
        out.append("")
        out.append(f"**Fallen:** {fallen}")
    out += ["", "## Who fought", ""]
    for p in record["participants"]:
        bits = ["NPC" if p["npc"] else "PC"]
        if p["state"] != "active":
            bits.append(p["state"])
        bits += [md(c) for c in p["conditions"]]
        out.append(f"- {md(p['name'])} ({', '.join(bits)})")
    current = None
    for item in record["log"]:
        if item["round"] != current:
            current = item["round"]
            out += ["", f"## Round {current}" if current else "## Before the fight", ""]
        line = md(item["text"])
        if item["roll"] is not None and str(item["roll"]) not in item["text"]:
            line += f" (d100: {item['roll']})"
        out.append(f"- {line}")
    out.append("")
    return "\n".join(out)
