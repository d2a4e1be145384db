"""The fight forecast of a prepared encounter: its sheets read into the engine's fighters
(rules/engine/forecast.py), the fights played, and the answer cached by what it was computed
from (docs/rules.md, "The fight forecast").

The sheets are read by the matchup table's own code (prep.matchups.sides), and each number a
strike or a defense uses comes from the tracker's ``setup``, so the forecast, the matchup
table and the tracker never read a sheet differently."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.cache import cache

from combat.models import Declaration, Encounter, Participant
from combat.services.attacks import setup
from config.throttling import CACHE_ERRORS, cache_unavailable
from prep import matchups
from prep.matchups import Fighter
from prep.models import LibraryNpc, PreparedEncounter
from rules.engine import forecast, omg
from sheets.ids import parse_id
from sheets.models import BodyZone, Weapon

if TYPE_CHECKING:
    from sheets.users import AnyUser

#: The page's first answer: fast enough to draw at once; the refined one follows.
QUICK_FIGHTS = 1_000
#: What the refined answer and the API play unless told (fewer for a large fight: see
#: max_fights).
FIGHTS = 10_000
MAX_FIGHTS = 20_000
#: Fights times fighters at most: the time of a forecast grows with both, so a large fight
#: plays fewer fights (10,000 for 10 fighters, 3,333 for 30) and stays within the budget
#: docs/rules.md states (bench/bench_forecast.py measures the worst cases).
MAX_FIGHTER_FIGHTS = 100_000
#: A larger fight would hold a worker for several seconds (the time grows with the fighters).
MAX_FIGHTERS = 30
#: The seed of a request that names none.
SEED = 1
#: Seconds of CPU the exact duel may walk before the fights are played instead.
DUEL_BUDGET = 1.0
#: The exact duel gives up past this many open states (a few MB) too.
DUEL_STATES = 20_000
#: The fights stop once this much work is done (strikes and the targets they weigh,
#: rules.engine.forecast.simulate): about 1.5 s of CPU here, whatever the fight. Only long
#: fights of many fighters reach it (bench/bench_forecast.py).
SIM_WORK = 1_500_000


def max_fights(fighters: int) -> int:
    """The most fights a forecast of this many fighters plays."""
    return max(1, min(MAX_FIGHTS, MAX_FIGHTER_FIGHTS // max(1, fighters)))


class ForecastError(ValueError):
    """A bad request for a forecast; ``field`` names the parameter."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def _dsc(fighter: Fighter, weapon: Weapon | None) -> int:
    c = fighter.character
    levels = {(c.pk, n): lvl for n, lvl in fighter.levels.items()}
    s = setup(
        Declaration(action=omg.StrikeMode.FAST.value),
        attacker=c,
        target=c,
        weapon=weapon,
        zone=None,
        levels=levels,
        defense=omg.DefenseMode.DODGE.value,
        feinted=False,
    )
    assert s.attacker is not None and s.defender is not None
    return s.attacker.dsc if weapon is not None else s.defender.dsc


def _zones(zones: list[BodyZone]) -> tuple[forecast.ZoneIn, ...]:
    ordered = sorted(zones, key=lambda z: (z.position, z.name))
    if not ordered:
        # A sheet without zones still gets hit somewhere: the seven unarmored humanoid zones.
        return tuple(forecast.ZoneIn(z.name) for z in omg.default_zones())
    return tuple(
        forecast.ZoneIn(
            z.name or f"zone {i + 1}",
            wounds=z.wounds,
            arm=z.arm,
            arm_bonus=z.arm_bonus,
            grievous=bool(z.grievous),
        )
        for i, z in enumerate(ordered)
    )


def combatants(fighter: Fighter, *, on_alert: bool = False) -> list[forecast.Combatant]:
    """The fighters one side's entry brings: a character as it stands now (wounds, worn
    armor, current Vitality), or ``count`` unhurt copies of a library NPC at full VIT."""
    c = fighter.character
    melee = _dsc(fighter, None)
    weapons = tuple(
        forecast.WeaponIn(w.name, dmg=w.dmg, bonus=w.bonus, dsc=_dsc(fighter, w))
        for w in fighter.weapons
    )
    maxima = c.maxima()
    vit = maxima.vit if fighter.npc and maxima is not None else c.vitality
    base: dict[str, Any] = {
        "side": "foes" if fighter.npc else "party",
        "spd": c.spd,
        "skl": c.skl,
        "vgr": c.vgr,
        "melee": melee,
        "stm": c.nrv + c.vgr,
        "bzf": c.bzf,
        "vitality": max(0, min(vit, 1_000)),
        "zones": _zones(fighter.zones),
        "weapons": weapons,
        "itv": None if fighter.npc else c.itv,
        "itv_base": c.foc + c.spd + c.svy,
        "foc": c.foc,
        "on_alert": on_alert,
        "group": fighter.key,
        "group_name": fighter.label,
    }
    if not fighter.npc:
        return [forecast.Combatant(fighter.key, fighter.label, **base)]
    return [
        forecast.Combatant(f"{fighter.key}-{n}", f"{fighter.label} {n}", **base)
        for n in range(1, fighter.count + 1)
    ]


@dataclass
class WhatIf:
    """One NPC more (a library NPC of the GM's) or one fewer (of a group), or neither."""

    add: LibraryNpc | None = None
    remove: int | None = None  # a group's pk

    @property
    def label(self) -> str:
        if self.add is not None:
            return f"one more {self.add.name}"
        return "one NPC fewer" if self.remove is not None else ""


def fighters_for(prepared: PreparedEncounter, what_if: WhatIf | None = None) -> list[Any]:
    """Every fighter of the prepared encounter, the what-if applied."""
    npcs, characters = matchups.sides(prepared)
    alert = dict(prepared.groups.values_list("pk", "on_alert"))
    out: list[forecast.Combatant] = []
    for f in characters:
        out += combatants(f)
    for f in npcs:
        pk = int(f.key.removeprefix("group-"))
        if what_if is not None and what_if.remove == pk:
            f.count -= 1
        if f.count > 0:
            out += combatants(f, on_alert=alert.get(pk, False))
    if what_if is not None and what_if.add is not None:
        extra = matchups.from_sheet(
            what_if.add.sheet, label=what_if.add.name, pk=-10_000, key="what-if"
        )
        out += combatants(extra)
    return out


def _key(fighters: list[forecast.Combatant], *parts: object) -> str:
    # The fighters are every number the forecast reads from the sheets: any edit of a sheet
    # that matters changes the key, whoever made it, with no version to remember to bump.
    digest = hashlib.sha256(repr((fighters, *parts)).encode()).hexdigest()
    return f"prep-forecast:{digest}"


def _cache_get(key: str) -> dict[str, Any] | None:
    try:
        found = cache.get(key)
    except CACHE_ERRORS as exc:  # computed again rather than failed
        cache_unavailable(exc)
        return None
    return found if isinstance(found, dict) else None


def _cache_put(key: str, value: dict[str, Any], *, replace: bool = True) -> bool:
    """Keep ``value`` under ``key`` unless it is larger than FORECAST_CACHE_MAX_BYTES (as
    JSON); with ``replace`` False, only if the key holds nothing yet. True if kept."""
    if len(json.dumps(value, separators=(",", ":"))) > settings.FORECAST_CACHE_MAX_BYTES:
        return False
    try:
        if replace:
            cache.set(key, value, settings.FORECAST_CACHE_SECONDS)
            return True
        return bool(cache.add(key, value, settings.FORECAST_CACHE_SECONDS))
    except CACHE_ERRORS as exc:
        cache_unavailable(exc)
        return False


def forecast_for(
    prepared: PreparedEncounter,
    *,
    fights: int | None = None,
    seed: int | None = None,
    what_if: WhatIf | None = None,
    cached_only: bool = False,
    exact: bool = True,
) -> dict[str, Any] | None:
    """The forecast as a JSON-ready dict (cached), or None while a side is empty (or, with
    ``cached_only``, while it has not been computed yet). One against one is walked exactly
    unless ``exact`` is False. ``fights`` defaults to FIGHTS (fewer for a large fight);
    without a ``seed`` any cached answer for the same sheets and fights serves."""
    fighters = fighters_for(prepared, what_if)
    if not any(f.side == "party" for f in fighters) or not any(f.side == "foes" for f in fighters):
        return None
    return _computed(fighters, fights=fights, seed=seed, cached_only=cached_only, exact=exact)


def _fights(fighters: list[forecast.Combatant], fights: int | None) -> int:
    n = len(fighters)
    if n > MAX_FIGHTERS:
        raise ForecastError(
            "detail",
            f"The forecast plays fights of at most {MAX_FIGHTERS} fighters; this one has {n}.",
        )
    cap = max_fights(n)
    if fights is None:
        return min(FIGHTS, cap)
    if not 1 <= fights <= cap:
        raise ForecastError(
            "fights",
            f"fights: a whole number from 1 to {cap} for a fight of {n} fighters (at most "
            f"{MAX_FIGHTS}, and fights times fighters at most {MAX_FIGHTER_FIGHTS}).",
        )
    return fights


def _joined(*notes: str | None) -> str | None:
    return " ".join(n for n in notes if n) or None


def _computed(
    fighters: list[forecast.Combatant],
    *,
    fights: int | None,
    seed: int | None,
    cached_only: bool = False,
    exact: bool = True,
) -> dict[str, Any] | None:
    """The forecast of these fighters, from the cache when it holds it. A duel is walked
    exactly unless ``exact`` is False (the page's quick first look), or unless the walk is
    too big or too long (DUEL_STATES, DUEL_BUDGET): the fights are then played. The fights
    stop early at SIM_WORK. The answer's ``note`` says when either happened."""
    fights = _fights(fighters, fights)
    gave_up: str | None = None
    if exact and len(fighters) == 2 and {f.side for f in fighters} == {"party", "foes"}:
        # The exact answer does not depend on fights or seed; a walk given up is remembered
        # under the same key, so the next request goes straight to the fights.
        key = _key(fighters, "exact")
        found = _cache_get(key)
        if found is not None and "abandoned" not in found:
            return dict(found, cached=True)
        if found is not None:
            gave_up = str(found["abandoned"])
        elif cached_only:
            return None
        else:
            party, foe = sorted(fighters, key=lambda f: f.side != "party")
            try:
                duel = forecast.exact_duel(party, foe, max_states=DUEL_STATES, budget=DUEL_BUDGET)
            except forecast.DuelAbandoned as exc:
                gave_up = f"The exact duel was given up ({exc}): the fights were played."
                _cache_put(key, {"abandoned": gave_up})
            else:
                result = dict(duel.as_dict(), note=None)
                _cache_put(key, result)
                return dict(result, cached=False)
    # Without a seed the client takes any answer for these sheets and fights: a new seed is
    # a new simulation only when asked for.
    key = _key(fighters, fights, seed if seed is not None else "any seed")
    found = _cache_get(key)
    if found is not None:
        return dict(found, note=_joined(gave_up, found["note"]), cached=True)
    if cached_only:
        return None
    played = SEED if seed is None else seed
    sim = forecast.simulate(fighters, fights=fights, seed=played, max_work=SIM_WORK)
    short = None
    if sim.fights < fights:
        short = (
            f"Stopped at the forecast's time budget: {sim.fights} of the {fights} fights "
            "asked for were played."
        )
    result = dict(sim.as_dict(), note=short)
    _cache_put(_key(fighters, fights, played), result)
    _cache_put(_key(fighters, fights, "any seed"), result, replace=seed is None)
    return dict(result, note=_joined(gave_up, short), cached=False)


def fighters_for_encounter(encounter: Encounter) -> list[forecast.Combatant]:
    """A fight from where it stands: each participant's sheet as it is now (wounds, worn
    armor, current Vitality), its initiative in this fight (on alert counted), and out of it
    if down or unconscious. Player characters are the party; NPCs the foes, copies of one NPC
    gathered as a group."""
    participants = encounter.participants.select_related(
        "character", "character__copied_from"
    ).prefetch_related("character__weapons", "character__zones", "character__disciplines")
    out: list[forecast.Combatant] = []
    for p in participants:
        c = p.character
        fighter = matchups.from_character(c)
        fighter.npc = c.is_npc
        (one,) = combatants(fighter)
        template = c.copied_from or c
        out.append(
            replace(
                one,
                key=f"participant-{p.pk}",
                name=c.name,
                vitality=max(0, min(c.vitality, 1_000)),
                itv=p.initiative if p.initiative is not None else c.itv,
                on_alert=p.on_alert and p.initiative is None,
                able=p.state == Participant.State.ACTIVE,
                group=f"npc-{template.pk}" if c.is_npc else f"participant-{p.pk}",
                group_name=template.name if c.is_npc else c.name,
            )
        )
    return out


def forecast_for_encounter(
    encounter: Encounter, *, fights: int | None = None, seed: int | None = None
) -> dict[str, Any] | None:
    """The forecast of a fight from where it stands (cached), or None while a side is
    empty."""
    fighters = fighters_for_encounter(encounter)
    if not any(f.side == "party" for f in fighters) or not any(f.side == "foes" for f in fighters):
        return None
    return _computed(fighters, fights=fights, seed=seed)


def parse_what_if(user: AnyUser, prepared: PreparedEncounter, params: Any) -> WhatIf:
    """``add`` (a library NPC of the user's) or ``remove`` (a group of this encounter) from
    query parameters; a bad value raises ForecastError naming it."""
    add_raw, remove_raw = params.get("add"), params.get("remove")
    if add_raw and remove_raw:
        raise ForecastError("add", "add or remove, not both.")
    what_if = WhatIf()
    if add_raw:
        pk = parse_id(str(add_raw))
        npc = LibraryNpc.objects.filter(owner_id=user.pk, pk=pk).first() if pk else None
        if npc is None:
            raise ForecastError("add", "add: an NPC of your library.")
        what_if.add = npc
    if remove_raw:
        pk = parse_id(str(remove_raw))
        if pk is None:
            # The forecast's own group keys ("group-12") are labels, not ids to send back.
            raise ForecastError(
                "remove",
                "remove: the id (a whole number) of a group of this encounter, as the "
                "prepared encounter lists it in groups[].id.",
            )
        if not prepared.groups.filter(pk=pk).exists():
            raise ForecastError("remove", "remove: a group of this encounter.")
        what_if.remove = pk
    return what_if


def parse_int(params: Any, name: str, low: int, high: int) -> int | None:
    """A whole number parameter from ``low`` to ``high``, or None when not given."""
    raw = params.get(name)
    if raw in (None, ""):
        return None
    value = parse_id(str(raw))
    if value is None or not low <= value <= high:
        raise ForecastError(name, f"{name}: a whole number from {low} to {high}.")
    return value


@dataclass(frozen=True)
class Asked:
    """What a forecast request asks for: fights and seed, None when not given."""

    fights: int | None
    seed: int | None


def parse_asked(params: Any) -> Asked:
    """``fights`` (1 to MAX_FIGHTS; the fight's own cap is checked once its size is known) and
    ``seed`` from query parameters; a bad value raises ForecastError naming it."""
    return Asked(
        fights=parse_int(params, "fights", 1, MAX_FIGHTS),
        seed=parse_int(params, "seed", 0, 2**32),
    )


def for_page(result: dict[str, Any] | None) -> dict[str, Any] | None:
    """The forecast with its chances as whole percentages, for the templates."""
    if result is None:
        return None

    def pc(x: float) -> str:
        return f"{round(x * 100)}%"

    lo, hi = result["party_standing_interval"]
    return {
        **result,
        "standing": pc(result["party_standing"]),
        "interval": f"{pc(lo)}–{pc(hi)}",
        "wins": pc(result["party_wins"]),
        "limit": pc(result["round_limit_hit"]),
        "party": [
            {
                **c,
                "down_pc": pc(c["down"]),
                "ko_pc": pc(c["knocked_out"]),
                "out_pc": pc(c["out"]),
                "grievous_pc": pc(c["grievous"]),
            }
            for c in result["combatants"]
            if c["side"] == "party"
        ],
        "npc_groups": [{**g, "beaten_pc": pc(g["beaten"])} for g in result["groups"]],
    }
