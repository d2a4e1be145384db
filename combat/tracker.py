"""The tracker's read model: an encounter loaded once (:func:`load_state`, a fixed number of
queries whatever the number of participants) and the page's context drawn from it for one
viewer (:func:`view_context`: hidden numbers masked, the viewer's controls added). The
encounter page (combat/views.py), the live feed's renders (combat/render.py) and the table
display (combat/display.py) all read a fight through it."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from django.contrib.auth.models import AnonymousUser
from django.urls import reverse
from django.utils.html import format_html_join
from django.utils.safestring import SafeString

from combat import access, services
from combat.models import CombatLogEntry, Declaration, Encounter, Participant
from combat.results import result_card
from combat.wound_words import wounds_in_words
from rules.engine import omg
from sheets.models import BodyZone, Character, Weapon, attach_rows
from sheets.numbers import aptitudes_of

if TYPE_CHECKING:
    from sheets.users import AnyUser

LOG_LENGTH = 40
OPEN = (Declaration.Status.PENDING, Declaration.Status.DEFENDED)
ACTIONS = [
    ("fast", "Fast strike (SPD)"),
    ("precise", "Precise strike (SKL)"),
    ("mighty", "Mighty strike (VGR)"),
    *((m.value, f"{m.value.capitalize()} ({apt})") for m, apt in omg.MANEUVER_APTITUDE.items()),
]


class RowBits:
    """What a participant's row draws the same for every viewer, computed at most once per
    load (so once for the page, and once for every audience of a live pass), each bit when
    first drawn: its URLs and the zone lists that four places of the page repeat (the row,
    its GM menu, the declare form's targets, the GM's wound form). A 20-participant fight
    would otherwise run the same template loops and URL reversals in every one of them."""

    def __init__(self, encounter: Encounter, p: Participant, zones: list[BodyZone]) -> None:
        self.encounter, self.p, self.zones = encounter, p, zones

    def _url(self, name: str) -> str:
        return _reverse(name, self.encounter.pk, self.p.pk)

    @functools.cached_property
    def update_url(self) -> str:
        return self._url("combat:participant_update")

    @functools.cached_property
    def set_turn_url(self) -> str:
        return self._url("combat:encounter_set_turn")

    @functools.cached_property
    def stamina_url(self) -> str:
        return self._url("combat:participant_stamina")

    @functools.cached_property
    def condition_add_url(self) -> str:
        return self._url("combat:condition_add")

    @functools.cached_property
    def condition_remove_url(self) -> str:
        return self._url("combat:condition_remove")

    @functools.cached_property
    def _zones(self) -> ZoneLists:
        key = tuple((z.pk, z.name, z.wounds, z.arm, z.arm_max) for z in self.zones)
        return _zone_lists(self.p.pk, self.p.name, self.p.character.bzf, key)

    @property
    def zone_items(self) -> SafeString:
        """The row's zones, each ``name wounds/BZF`` (`` · ARM`` when it has armour)."""
        return self._zones.items

    @property
    def zone_options(self) -> SafeString:
        return self._zones.options

    @property
    def named_zone_options(self) -> SafeString:
        return self._zones.named_options

    @property
    def target_options(self) -> SafeString:
        return self._zones.target_options


@functools.lru_cache(maxsize=1024)
def _reverse(name: str, encounter_pk: int, participant_pk: int) -> str:
    return reverse(name, args=[encounter_pk, participant_pk])


class ZoneLists(NamedTuple):
    items: SafeString
    options: SafeString
    named_options: SafeString
    target_options: SafeString


ZoneKey = tuple[int, str, int, int, int]  # pk, name, wounds, ARM, ARM max


@functools.lru_cache(maxsize=4096)
def _zone_lists(pk: int, who: str, bzf: int, zones: tuple[ZoneKey, ...]) -> ZoneLists:
    """A row's zone lists, drawn once for as long as the row's zones, name and BZF stay as
    they are (a pure function of its arguments: a table redrawn after each event draws again
    only the rows that changed)."""
    return ZoneLists(
        items=format_html_join(
            "",
            '<li class="{}" data-testid="zone-{}" data-short="{}" title="{} {}/{}{}">'
            '<span class="zone-name">{}</span> <span class="zone-count">{}/{}</span>'
            '<span class="zone-arm">{}</span></li>',
            (
                (
                    _zone_class(wounds, bzf),
                    zpk,
                    _short(name),
                    *(name, wounds, bzf, _armour(arm, arm_max)) * 2,
                )
                for zpk, name, wounds, arm, arm_max in zones
            ),
        ),
        options=format_html_join(
            "", '<option value="{}">{}</option>', ((z[0], z[1]) for z in zones)
        ),
        named_options=format_html_join(
            "", '<option value="{}">{}: {}</option>', ((z[0], who, z[1]) for z in zones)
        ),
        target_options=format_html_join(
            "", '<option value="{}:{}">{}: {}</option>', ((pk, z[0], who, z[1]) for z in zones)
        ),
    )


def _short(name: str) -> str:
    """A zone's label in the cockpit's narrow strip: "LA" for "left arm", "Ch" for "chest"
    (the full name stays in the chip's text for screen readers, and in its tooltip)."""
    words = name.split()
    if len(words) > 1:
        return "".join(w[0] for w in words).upper()
    return name[:2].capitalize()


def _armour(arm: int, arm_max: int) -> str:
    return f" · {arm}" if arm_max else ""


def _zone_class(wounds: int, bzf: int) -> str:
    if wounds > bzf:
        return "over"
    if wounds == bzf:
        return "full"
    return "hurt" if wounds else ""


@dataclass
class Row:
    """One participant as the viewer may see it: ``show`` is False for hidden numbers.
    ``controller`` is set in the players' shared render only: the player whose controls on
    this row (the Stamina roll) static/js/live.js switches on. ``bits``: what every viewer's
    row draws alike (:class:`RowBits`)."""

    p: Participant
    show: bool
    mine: bool
    is_turn: bool
    vit_max: int
    zones: list[BodyZone]
    weapons: list[Weapon]
    bits: RowBits
    controller: int | None = None
    state_options: str = ""

    @property
    def skipped(self) -> bool:
        return not self.p.can_act

    @property
    def wounds_word(self) -> str | None:
        """For a viewer kept from the numbers, the word the GM lets them see, else None."""
        p = self.p
        if self.show or p.hidden_shows != Participant.HiddenShows.WORDS:
            return None
        return wounds_in_words(
            state=p.state,
            vitality=p.character.vitality,
            vit_max=self.vit_max,
            zones=((z.wounds, p.character.bzf) for z in self.zones),
        )


def declare_context(rows: list[Row], mine: list[Row], attacker_pk: int | None) -> dict[str, Any]:
    """The declare form for one attacker among the viewer's own: the one asked for, else the
    one acting now, else the first. Its targets leave the attacker out, its weapons are the
    attacker's (the first one chosen), so the form's defaults are a valid attack."""
    attacker = next((r for r in mine if r.p.pk == attacker_pk), None)
    attacker = attacker or next((r for r in mine if r.is_turn), None)
    attacker = attacker or next(iter(mine), None)
    if attacker is None:
        return {
            "declare_attacker": None,
            "declare_targets": [],
            "declare_weapons": [],
            "declare_disarmed": False,
        }
    return {
        "declare_attacker": attacker,
        # The helpless (unconscious, dying) are no targets: docs/rules.md, "Conditions".
        "declare_targets": [r for r in rows if r.p.pk != attacker.p.pk and r.p.can_defend],
        # Disarmed: no weapon in hand, so none is offered (docs/rules.md, "Disarm").
        "declare_weapons": [] if attacker.p.disarmed else attacker.weapons,
        "declare_disarmed": attacker.p.disarmed,
        "declare_chosen": attacker_pk == attacker.p.pk,
    }


DEFENSE_NAMES = tuple(m.value for m in omg.DefenseMode)


@dataclass(frozen=True)
class AttackView:
    """An open attack (``decl``) as one viewer sees it: its odds, the weapon they may see, the
    controls they have on it, and, in the players' shared render, whose controls those are."""

    decl: Declaration
    #: PvD and odds per defense mode, a hidden side's numbers left out (odds_for_viewer).
    odds: Any
    #: A hidden attacker's weapon is one of its numbers: the log's public text leaves it out,
    #: and so does the open-attack panel.
    shown_weapon: Weapon | None
    can_defend: bool
    can_roll: bool
    can_cancel: bool
    #: The players whose controls these are, in the shared render (None elsewhere).
    target_owner: int | None
    attacker_owner: int | None
    #: A player's own character under attack: shown first, with the defense choices.
    incoming: bool

    @property
    def defense_buttons(self) -> list[tuple[str, int | None]]:
        """Each defense button with its DIF (None when the GM hides the defender's side)."""
        return [(mode, ((self.odds or {}).get(mode) or {}).get("dif")) for mode in DEFENSE_NAMES]


@dataclass(frozen=True)
class LogLine:
    """A log entry as one viewer may read it: its text, and its d100 unless that is hidden."""

    entry: CombatLogEntry
    text: str
    roll: int | None


@dataclass
class TableState:
    """An encounter as it stands, loaded once (a fixed number of queries whatever the number
    of participants): every viewer's page, and every audience of the live feed, is drawn from
    it. Nothing in it depends on who looks: :func:`view_context` masks and adds the controls."""

    encounter: Encounter
    participants: list[Participant]
    vit_max: dict[int, int]
    zones: dict[int, list[BodyZone]]
    weapons: dict[int, list[Weapon]]
    declarations: list[Declaration]
    log: list[CombatLogEntry]
    fate_roll: CombatLogEntry | None
    odds: dict[tuple[int, frozenset[int]], Any]
    bits: dict[int, RowBits]

    @property
    def hidden(self) -> set[int]:
        """Every hidden participant: what a player owning none of them may not see."""
        return {p.pk for p in self.participants if p.hidden}


def load_state(encounter: Encounter) -> TableState:
    ps = list(encounter.participants.select_related("character__owner"))
    characters = {}
    for p in ps:
        p.encounter = encounter
        characters[p.character_id] = p.character
    attach_rows(characters.values())
    pmap = {p.pk: p for p in ps}
    declarations = list(
        Declaration.objects.filter(encounter=encounter, status__in=OPEN).select_related(
            "zone", "weapon"
        )
    )
    for d in declarations:
        d.encounter = encounter
        d.attacker = pmap[d.attacker_id]
        d.target = pmap[d.target_id]
    latest = services.latest_roll(encounter)
    zones = {p.pk: list(p.character.zones.all()) for p in ps}
    vit_max = {p.pk: omg.derived(aptitudes_of(p.character), bzf=p.character.bzf).vit for p in ps}
    if encounter.status == Encounter.Status.FINISHED and encounter.record:
        _as_recorded(encounter.record, ps, zones, vit_max)
    return TableState(
        encounter=encounter,
        participants=ps,
        vit_max=vit_max,
        zones=zones,
        weapons={p.pk: list(p.character.weapons.all()) for p in ps},
        declarations=declarations,
        log=list(encounter.log.order_by("-seq")[:LOG_LENGTH]),
        fate_roll=latest
        if latest is not None
        and latest.kind in (CombatLogEntry.Kind.ROLL, CombatLogEntry.Kind.STAMINA)
        else None,
        odds={},
        bits={p.pk: RowBits(encounter, p, zones[p.pk]) for p in ps},
    )


def _as_recorded(
    snapshot: dict[str, Any],
    ps: list[Participant],
    zones: dict[int, list[BodyZone]],
    vit_max: dict[int, int],
) -> None:
    """A finished fight's page shows its participants as its record keeps them (names,
    Vitality, zones, states), not as later fights left the sheets: the loaded rows take the
    snapshot's values, in memory only."""
    frozen = {item["id"]: item for item in snapshot["participants"]}
    for p in ps:
        item = frozen.get(p.pk)
        if item is None:
            continue
        c = p.character
        c.name, c.vitality, c.bzf = item["name"], item["vitality"], item["bzf"]
        p.state, p.hidden, p.initiative = item["state"], item["hidden"], item["initiative"]
        vit_max[p.pk] = item["vit_max"]
        zones[p.pk] = [
            BodyZone(pk=zpk, character=c, name=name, wounds=wounds, arm=arm, arm_max=arm_max)
            for zpk, name, wounds, arm, arm_max in item["zones"]
        ]


@functools.cache
def state_options(current: str) -> SafeString:
    """The GM's state menu of a row, ``current`` chosen: one of a few strings."""
    return format_html_join(
        "",
        '<option value="{}"{}>{}</option>',
        (
            (value, " selected" if value == current else "", label)
            for value, label in Participant.State.choices
        ),
    )


def _player_owner(p: Participant) -> int | None:
    """Whose controls these are in the players' shared render: the character's player, or
    None for the GM's characters (the GM has a render of their own)."""
    owner = p.character.owner_id
    return None if owner == p.encounter.campaign.gm_id else owner


def view_context(
    state: TableState,
    user: AnyUser,
    *,
    shared: bool = False,
    attacker_pk: int | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The encounter page as ``user`` sees it. ``shared`` is the render every player who owns
    no hidden participant receives on the live feed: hidden numbers masked, and the controls
    that belong to one player (defend, roll, call off, Stamina, Fate, declare, next turn) drawn
    for each of them with ``data-owner``, for static/js/live.js to keep the viewer's own. The
    server checks every request anyway; the page itself (``shared`` False) draws only the
    viewer's controls, so every form works without JavaScript."""
    encounter = state.encounter
    ps = state.participants
    is_gm = not shared and encounter.campaign.is_gm(user)
    hidden = state.hidden if shared else access.hidden_ids(encounter, user, ps)
    key = frozenset(hidden)
    pmap = {p.pk: p for p in ps}

    def controls(p: Participant) -> bool:
        return (_player_owner(p) is not None) if shared else p.is_controlled_by(user)

    rows = [
        Row(
            p=p,
            show=p.pk not in hidden,
            mine=not shared and p.is_controlled_by(user),
            is_turn=encounter.turn_id == p.pk,
            vit_max=state.vit_max[p.pk],
            zones=state.zones[p.pk],
            weapons=state.weapons[p.pk],
            bits=state.bits[p.pk],
            controller=_player_owner(p) if shared else None,
            state_options=state_options(p.state) if is_gm else "",
        )
        for p in ps
    ]
    declarations = []
    for d in state.declarations:
        if (d.pk, key) not in state.odds:
            state.odds[d.pk, key] = services.odds_for_viewer(d, hidden)
        can_defend = d.needs_defense and d.target.can_defend and controls(d.target)
        declarations.append(
            AttackView(
                decl=d,
                odds=state.odds[d.pk, key],
                shown_weapon=None if d.attacker_id in hidden else d.weapon,
                can_defend=can_defend,
                can_roll=d.status == Declaration.Status.DEFENDED and controls(d.attacker),
                can_cancel=controls(d.attacker),
                target_owner=_player_owner(d.target) if shared else None,
                attacker_owner=_player_owner(d.attacker) if shared else None,
                incoming=can_defend and not is_gm,
            )
        )
    viewer = AnonymousUser() if shared else user
    result = result_card(state.log[0] if state.log else None, viewer, hidden, ps, is_gm=is_gm)
    log = [
        LogLine(entry, entry.text_for(viewer, hidden), entry.roll_for(hidden))
        for entry in state.log
    ]
    # Once the fight is over its rolls stand (spend_fate refuses): no Fate buttons.
    fate_roll = state.fate_roll if encounter.status != Encounter.Status.FINISHED else None
    if shared:
        # A hidden character's Fate is one of its numbers: its player has a render of their own.
        spenders = [
            p
            for p in ps
            if fate_roll and _player_owner(p) and p.pk not in hidden and p.character.fate > 0
        ]
    else:
        spenders = [
            p for p in ps if fate_roll and p.character.owner_id == user.pk and p.character.fate > 0
        ]
    in_fight = {p.character_id for p in ps}
    candidates = npcs = []
    if is_gm:
        campaign_chars = list(Character.objects.filter(campaign=encounter.campaign))
        candidates = [c for c in campaign_chars if c.pk not in in_fight]
        npcs = [c for c in campaign_chars if c.is_npc and c.pk not in in_fight]
    turn = pmap.get(encounter.turn_id) if encounter.turn_id else None
    # A player declares on their character's turn, or to spend a queued counterattack; the GM
    # runs every NPC and may declare at any time. (The server checks turns on its own.)
    if shared:
        owners = sorted({r.controller for r in rows if r.controller is not None})
        panels = []
        for owner in owners:
            theirs = [r for r in rows if r.controller == owner and r.show and r.p.can_act]
            if any(r.is_turn or r.p.counterattacks for r in theirs):
                panels.append(
                    {"owner": owner, "mine": theirs, **declare_context(rows, theirs, None)}
                )
        mine: list[Row] = []
        can_pass = False
        pass_owner = _player_owner(turn) if turn else None
    else:
        mine = [r for r in rows if r.mine]
        # Only those who can act are offered as attackers (docs/rules.md, "Conditions").
        able = [r for r in mine if r.p.can_act]
        can_declare = is_gm or any(r.is_turn or r.p.counterattacks for r in able)
        chosen = declare_context(rows, able, attacker_pk)
        panels = [{"owner": None, "mine": able, **chosen}] if able and can_declare else []
        can_pass = is_gm or bool(turn and turn.character.owner_id == user.pk)
        pass_owner = None
    return {
        "encounter": encounter,
        "campaign": encounter.campaign,
        "is_gm": is_gm,
        "shared": shared,
        "rows": rows,
        "mine": mine,
        "can_declare": bool(panels),
        "declare_panels": panels,
        "can_pass": can_pass,
        "pass_owner": pass_owner,
        "turn": turn,
        "declarations": declarations,
        "log": log,
        "result": result,
        "undo": services.undo_target(encounter) if is_gm else None,
        "fate_roll": fate_roll,
        "fate_roll_value": fate_roll.roll_for(hidden) if fate_roll else None,
        "spenders": spenders,
        "candidates": candidates,
        "npcs": npcs,
        "actions": ACTIONS,
        "defenses": [m.value for m in omg.DefenseMode],
        "states": Participant.State.choices,
        "max_copies": services.MAX_COPIES,
        "adjust_url": reverse("combat:zone_adjust", args=[encounter.pk]),
        "running": encounter.status == Encounter.Status.RUNNING,
        **(panels[0] if panels and not shared else declare_context(rows, mine, attacker_pk)),
        **extra,
    }
