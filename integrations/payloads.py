"""What a webhook carries: an event as a player of the campaign may see it.

The rule is the player's view of the combat log (combat.access.hidden_ids for someone who is
neither the GM nor the hidden character's player): an entry that involves a hidden participant
goes out as its public text only, without its roll, PvD, degree, hits, damage, wounds or
changes. Characters go out only while every player may see them (not a secret NPC, nor one
hidden in a fight). Nothing is ever read from an entry's ``changes`` list.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from django.utils import timezone

from combat.models import CombatLogEntry, Participant
from combat.outcome import AttackOutcome, ManeuverOutcome, Outcome, Wounds
from integrations.models import WebhookEndpoint
from sheets.models import Character

#: Combat log kinds and the webhook event each one is.
KIND_EVENTS: dict[str, str] = {
    CombatLogEntry.Kind.ROLL: "roll.resolved",
    CombatLogEntry.Kind.STAMINA: "roll.resolved",
    CombatLogEntry.Kind.DAMAGE: "damage.applied",
    CombatLogEntry.Kind.HEAL: "damage.applied",
    CombatLogEntry.Kind.TURN: "turn.passed",
    CombatLogEntry.Kind.START: "encounter.started",
    CombatLogEntry.Kind.FINISH: "encounter.finished",
}


def envelope(event_type: str, data: dict[str, Any], at: datetime | None = None) -> dict[str, Any]:
    """The Standard Webhooks body: ``{"type", "timestamp", "data"}``."""
    return {
        "type": event_type,
        "timestamp": (at or timezone.now()).isoformat().replace("+00:00", "Z"),
        "data": data,
    }


def player_hidden_ids(entry: CombatLogEntry) -> set[int]:
    """Hidden participants of the entry's encounter, as any player sees them: all of them."""
    return set(
        Participant.objects.filter(encounter_id=entry.encounter_id, hidden=True).values_list(
            "pk", flat=True
        )
    )


def _name(p: Participant | None) -> str | None:
    return p.name if p is not None else None


def combat_data(entry: CombatLogEntry) -> dict[str, Any]:
    encounter = entry.encounter
    hidden = player_hidden_ids(entry)
    redacted = entry.hides_numbers(hidden)
    data: dict[str, Any] = {
        "campaign": {"id": encounter.campaign_id, "name": encounter.campaign.name},
        "encounter": {
            "id": encounter.pk,
            "name": encounter.name,
            "round": encounter.round,
        },
        "entry": {"id": entry.pk, "seq": entry.seq, "kind": entry.kind},
        "actor": entry.actor.get_username() if entry.actor else None,
        "text": entry.text_for(_NoOne(), hidden) if redacted else entry.text,  # type: ignore[arg-type]  # reads only its pk
        "redacted": redacted,
    }
    decl = entry.declaration
    attacker = entry.participant
    target = None
    if decl is not None:
        attacker = Participant.objects.filter(pk=decl.attacker_id).first() or attacker
        target = Participant.objects.filter(pk=decl.target_id).first()
        data["action"] = decl.action
        data["defense"] = decl.defense or None
    data["participant"] = _name(attacker)
    data["target"] = _name(target)
    if entry.kind == CombatLogEntry.Kind.TURN and encounter.turn_id:
        data["turn_of"] = _name(Participant.objects.filter(pk=encounter.turn_id).first())
    if redacted:
        return data
    if entry.kind in (CombatLogEntry.Kind.ROLL, CombatLogEntry.Kind.STAMINA):
        outcome = entry.outcome
        data["result"] = _shown(outcome)
        if isinstance(outcome, AttackOutcome) and outcome.wounds is not None:
            data["wounds"] = _wounds(outcome.wounds)
        data["physical"] = entry.physical
    return data


def _shown(outcome: Outcome | None) -> dict[str, Any]:
    """What a visible roll's result carries, with the engine's own field names: the check, a
    maneuver's condition, the damage of each hit and their sum."""
    shown: dict[str, Any] = {}
    if outcome is not None:
        shown.update(
            pro=outcome.pro,
            dif=outcome.dif,
            roll=outcome.roll,
            degree=outcome.degree.value,
            abbr=outcome.abbr,
            success=outcome.success,
        )
        if isinstance(outcome, ManeuverOutcome):
            shown.update(maneuver=outcome.maneuver, condition=outcome.condition)
        shown["pvd"] = outcome.pvd
    hits = outcome.hits if isinstance(outcome, AttackOutcome) else ()
    shown["hits"] = [h.damage for h in hits]
    shown["damage"] = sum(h.damage for h in hits)
    return shown


def _wounds(w: Wounds) -> dict[str, Any]:
    return {"vit_loss": w.vit_loss, "vitality": w.vitality, "grievous": w.grievous, "down": w.down}


class _NoOne:
    """A viewer who is nobody's player and not the GM (text_for only reads hidden_ids)."""

    pk = None
    is_authenticated = True


def _puts_down(change: dict[str, Any]) -> bool:
    return (
        change.get("model") == "participant"
        and change.get("field") == "state"
        and change.get("after") != Participant.State.ACTIVE
    )


def may_put_down(entry: CombatLogEntry) -> bool:
    """Does this entry put a participant down or out (before asking who may see it)?"""
    return any(_puts_down(change) for change in entry.changes)


def downs(entry: CombatLogEntry) -> list[dict[str, Any]]:
    """Participants this entry put down or out, when players may see them."""
    out = []
    hidden: set[int] | None = None  # read only when someone went down (most entries: nobody)
    for change in entry.changes:
        if _puts_down(change):
            if hidden is None:
                hidden = player_hidden_ids(entry)
            if change.get("pk") in hidden:
                continue
            p = Participant.objects.filter(pk=change["pk"]).first()
            if p is not None:
                out.append({"participant": p.name, "state": change["after"]})
    return out


def character_visible(character: Character) -> bool:
    """May every player of the campaign see this sheet? (sheets.models visible_to's rule)."""
    if character.is_npc and not character.revealed:
        return False
    hidden = Participant.objects.filter(hidden=True)
    return not (
        hidden.filter(character=character).exists()
        or hidden.filter(character__copied_from=character).exists()
    )


def character_data(character: Character, **extra: Any) -> dict[str, Any]:
    return {
        "campaign": {"id": character.campaign_id, "name": character.campaign.name},
        "character": {
            "id": character.pk,
            "name": character.name,
            "player": character.owner.get_username(),
            "npc": character.is_npc,
            "version": character.version,
        },
        **extra,
    }


# --- The chat format ------------------------------------------------------------------------

#: Each event's title in a chat message (the embed's heading), never its raw key.
CHAT_TITLES: dict[str, str] = {
    "roll.resolved": "Roll",
    "damage.applied": "Damage",
    "participant.down": "Down",
    "turn.passed": "Next turn",
    "encounter.started": "Encounter started",
    "encounter.finished": "Encounter finished",
    "character.created": "New character",
    "character.changed": "Sheet changed",
    "character.rested": "Daily rest",
    "check.resolved": "Check",
}


def _down_sentence(data: dict[str, Any]) -> str:
    state = data.get("state", Participant.State.DOWN)
    label = Participant.State(state).label if state in Participant.State.values else state
    return f"{data.get('participant') or 'A participant'} is {label}."


def _character_sentence(verb: str) -> Any:
    return lambda data: f"{data.get('character', {}).get('name') or 'A character'} {verb}."


#: A human sentence for each event, when the event carries none of its own: combat events
#: carry the log's text (a roll, the damage, whose turn), the others are said here.
CHAT_SENTENCES: dict[str, Any] = {
    "roll.resolved": lambda data: "A roll was resolved.",
    "damage.applied": lambda data: f"{data.get('target') or 'Someone'} took damage.",
    "participant.down": _down_sentence,
    "turn.passed": lambda data: f"Turn of {data.get('turn_of') or 'the next participant'}.",
    "encounter.started": lambda data: "The encounter started.",
    "encounter.finished": lambda data: "The encounter is over.",
    "character.created": _character_sentence("was created"),
    "character.changed": _character_sentence("had their sheet changed"),
    "character.rested": _character_sentence("took a daily rest"),
    "check.resolved": _character_sentence("rolled a check"),
}

#: Discord markdown, mention and link syntax (a backslash shows the character as typed; an
#: escaped ``:`` keeps ``http://`` from becoming a link and ``:name:`` from an emoji).
_DISCORD_SPECIAL = re.compile(r"([\\*_~`|<>#\-\[\]():!])")
_ZERO_WIDTH_SPACE = "\u200b"


def discord_escape(text: str) -> str:
    r"""Text as Discord shows it, typed: no markdown, link, mention or ping forms (and a
    zero-width space after each ``@``).

    >>> print(discord_escape("**Bram** <#1> [x](http://a)"))
    \*\*Bram\*\* \<\#1\> \[x\]\(http\://a\)
    """
    return _DISCORD_SPECIAL.sub(r"\\\1", text).replace("@", "@" + _ZERO_WIDTH_SPACE)


def slack_escape(text: str) -> str:
    """Text as Slack and Mattermost show it: ``&``, ``<`` and ``>`` escaped, as Slack asks, so
    ``<!channel>`` and ``<http://…|x>`` cannot form; a zero-width space after each ``@`` keeps
    Mattermost from reading ``@channel`` or ``@all``.

    >>> print(slack_escape("<!channel> & <http://a|x>"))
    &lt;!channel&gt; &amp; &lt;http://a|x&gt;
    """
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("@", "@" + _ZERO_WIDTH_SPACE)


def chat_sentence(event: dict[str, Any]) -> str:
    """The event in one plain sentence: the log's text, or the event's own sentence (always
    for someone going down: the log's text is the roll that did it, sent as its own event)."""
    data = event["data"]
    if event["type"] == "participant.down" or not data.get("text"):
        return str(CHAT_SENTENCES[event["type"]](data))
    return str(data["text"])


def chat_message(event: dict[str, Any]) -> dict[str, Any]:
    """What chat servers' incoming webhooks accept: ``content`` (Discord) and ``text`` (Slack,
    Mattermost) with one embed: who, against whom, PvD, roll, degree, hits and damage.

    Everything a player or the GM typed (names, the log's text) is escaped for each server, and
    Discord is told to ping nobody (``allowed_mentions``), so a character called
    ``@everyone`` shows as typed and notifies no one."""
    data = event["data"]
    text = chat_sentence(event)
    fields = []
    # The event's own "result" (combat_data's, as sent): not the stored outcome.
    shown = data.get("result") or {}
    for name, value in (
        ("Who", data.get("participant")),
        ("Against", data.get("target")),
        ("PvD", shown.get("pvd")),
        ("Roll", shown.get("roll")),
        ("Degree", (shown.get("degree") or "").replace("_", " ") or None),
        ("Hits", ", ".join(str(h) for h in shown.get("hits", [])) or None),
        ("Damage", shown.get("damage") if shown.get("hits") else None),
    ):
        if value not in (None, ""):
            fields.append({"name": name, "value": discord_escape(str(value)), "inline": True})
    where = data.get("encounter", {}).get("name") or data.get("campaign", {}).get("name", "")
    title = CHAT_TITLES[event["type"]]
    embed = {
        "title": f"{where}: {title}" if where else title,
        "description": discord_escape(text),
        "fields": fields,
        "timestamp": event["timestamp"],
    }
    return {
        "content": discord_escape(text),
        "text": slack_escape(text),
        "embeds": [embed],
        "allowed_mentions": {"parse": []},
    }


def body_for(endpoint: WebhookEndpoint, event: dict[str, Any]) -> dict[str, Any]:
    return chat_message(event) if endpoint.format == WebhookEndpoint.Format.CHAT else event
