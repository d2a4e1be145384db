"""Declarations (attack, defense, cancel) and the PvD of a declaration with its odds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.db import transaction

from combat import conditions as condition_rules
from combat.models import CombatLogEntry, Declaration, Encounter, Participant
from combat.services.rows import (
    ROLL_SHEET_FIELDS,
    Changes,
    CombatConflict,
    CombatError,
    Kind,
    Rows,
    lock,
    lock_declaration,
    log,
    pk_of,
)
from rules.engine import odds, omg
from rules.engine.omg_data import APTITUDE_CHOICES, MELEE_COMBAT, weapon_discipline
from sheets.models import BodyZone, Character, Weapon

if TYPE_CHECKING:
    # Whoever acts, signed in or not (the services refuse the latter themselves).
    from sheets.users import AnyUser as User


def declare_attack(
    *,
    encounter: Encounter | int,
    attacker: Participant | int,
    target: Participant | int,
    action: str,
    actor: User,
    zone: BodyZone | int | None = None,
    weapon: Weapon | int | None = None,
    counterattack: bool = False,
) -> tuple[Declaration, CombatLogEntry]:
    """Step 1 of the combat sequence: target, zone, weapon and strike mode or maneuver (each
    a row or its id; ids are checked under the lock, and a CombatError names the field at
    fault). The declaration comes back with its participants, characters, zone and weapon
    loaded (the rows it was checked against) and the disciplines of both sides known, so
    that its odds need no further query."""
    with transaction.atomic():
        rows = declaration_rows(
            encounter,
            pk_of(attacker),
            pk_of(target),
            actor,
            zone=pk_of(zone),
            weapon=pk_of(weapon),
            changes=False,
        )
        return declare(
            rows,
            attacker=pk_of(attacker),
            target=pk_of(target),
            action=action,
            actor=actor,
            zone=pk_of(zone),
            weapon=pk_of(weapon),
            counterattack=counterattack,
        )


#: What a declaration reads of the two sheets: names and owners (the checks, the log), the
#: aptitudes (its odds: :func:`setup`). A strike in one call locks the whole sheets after.
DECLARED_SHEET_FIELDS = ("name", "owner", *(abbr.lower() for abbr, _ in APTITUDE_CHOICES))


def declaration_rows(
    encounter: Encounter | int,
    attacker: int,
    target: int,
    actor: User,
    *,
    zone: int | None,
    weapon: int | None,
    changes: bool = True,
) -> Rows:
    """The rows a new declaration is checked against: the encounter (in ``actor``'s
    campaigns only), the two participants, whether the attacker has an attack open, then
    their sheets: the zone and the weapon named, locked, and the disciplines. A declaration
    alone changes neither sheet, so without ``changes`` the characters and disciplines are
    only read; a strike in one call changes them and locks them, as a roll does. A
    participant not in the fight is a CombatError naming the field."""
    rows = lock(
        encounter,
        actor=actor,
        participants={attacker, target},
        waiting=True,
        sheet_fields=DECLARED_SHEET_FIELDS,
    )
    missing = tuple(
        name
        for name, pk in (("attacker", attacker), ("target", target))
        if pk not in rows.participants
    )
    if missing:
        raise CombatError("That participant is not in this encounter.", fields=missing)
    rows.lock_sheets(
        {p.character_id for p in rows.participants.values()},
        zones={zone} if zone is not None else set(),
        weapons={weapon} if weapon is not None else set(),
        changes=changes,
        fields=ROLL_SHEET_FIELDS,
    )
    return rows


def declare(
    rows: Rows,
    *,
    attacker: int,
    target: int,
    action: str,
    actor: User,
    zone: int | None,
    weapon: int | None,
    counterattack: bool,
) -> tuple[Declaration, CombatLogEntry]:
    """:func:`declare_attack` on rows already locked (:func:`declaration_rows`)."""
    action = (action or "").strip().lower()
    a = rows.participant(attacker)
    t = rows.participant(target)
    enc = rows.encounter
    rows.require_control(a, actor)
    gm = rows.is_gm(actor)
    if enc.status != Encounter.Status.RUNNING:
        raise CombatError("The encounter is not running.")
    if a.pk == t.pk:
        raise CombatError("Choose someone else to attack.")
    if action not in (*omg.StrikeMode, *omg.Maneuver):
        raise CombatError("Choose a strike mode (fast, precise, mighty) or a maneuver.")
    if counterattack:
        if a.counterattacks < 1:
            raise CombatError(f"{a.name} has no counterattack.")
    elif enc.turn_id != a.pk and not gm:
        raise CombatError(f"It is not {a.name}'s turn.")
    _require_able(a, t)
    z = rows.zones.get(zone) if zone is not None else None
    if zone is not None and (z is None or z.character_id != t.character_id):
        raise CombatError("That body zone is not the target's.", fields=("zone",))
    if z is None and action not in (
        omg.Maneuver.FEINT,
        omg.Maneuver.DISARM,
        omg.Maneuver.THROW,
        omg.Maneuver.GRAPPLE,
        omg.Maneuver.SHOVE,
    ):
        raise CombatError("Choose the body zone to strike.")
    w = rows.weapons.get(weapon) if weapon is not None else None
    if weapon is not None and (w is None or w.character_id != a.character_id):
        raise CombatError("That weapon is not the attacker's.", fields=("weapon",))
    if w is not None and a.disarmed:
        raise CombatError(_no_weapon(a), fields=("weapon",), explains=True)
    if a._waiting:  # type: ignore[attr-defined]  # read with the participants (lock(waiting=True))
        raise CombatConflict(f"{a.name} already has an attack waiting.")
    ready = action == omg.Maneuver.FEINT
    decl = Declaration.objects.create(
        encounter=enc,
        round=enc.round,
        attacker=a,
        target=t,
        zone=z,
        weapon=w,
        action=action,
        counterattack=counterattack,
        status=Declaration.Status.DEFENDED if ready else Declaration.Status.PENDING,
        created_by=actor if actor.is_authenticated else None,
    )
    rows.declarations[decl.pk] = decl
    # What the odds read, from the locked rows (declaration_odds).
    decl._levels = {(d.character_id, d.name): d.level for d in rows.disciplines.values()}  # type: ignore[attr-defined]  # read by the odds on the page
    ch = Changes()
    # A declaration counts as born cancelled: undoing it cancels it again. It is inserted
    # open, and the change is recorded as made.
    ch.record(decl, "status", Declaration.Status.CANCELLED.value)
    if counterattack:
        ch.set(a, "counterattacks", a.counterattacks - 1)
    how = f"{action} strike" if action in omg.StrikeMode else action
    where = f" ({z.name})" if z else ""
    with_ = f" with {w.name}" if w else ""
    counter = "Counterattack: " if counterattack else ""
    text = f"{counter}{a.name}: {how} at {t.name}{where}{with_}."
    entry = log(
        rows,
        Kind.DECLARE,
        actor=actor,
        changes=ch,
        participant=a,
        declaration=decl,
        involves=(a, t),
        text=text,
        public_text=f"{counter}{a.name}: {how} at {t.name}{where}.",
    )
    return decl, entry


def _no_weapon(a: Participant) -> str:
    """Why a disarmed attacker may name no weapon (docs/rules.md, "Disarm")."""
    last = condition_rules.weapon_back_after(a.conditions)
    back = f"it is back when round {last} ends" if last is not None else "until the GM lifts it"
    return (
        f"{a.name} is disarmed and holds no weapon ({back}): attack or maneuver unarmed, "
        "with no weapon chosen."
    )


def in_hand(attacker: Participant, weapon: Weapon | None) -> Weapon | None:
    """The declared weapon if its attacker still holds it: a disarm between the declaration
    and the roll leaves the attack to be made without it (docs/rules.md, "Disarm")."""
    return None if attacker.disarmed else weapon


def _require_able(a: Participant, t: Participant) -> None:
    """Conditions and states the tracker enforces, for the GM too (docs/rules.md,
    "Conditions"): the GM lifts one from the row's menu first."""
    if a.state != Participant.State.ACTIVE:
        raise CombatError(f"{a.name} cannot act ({a.get_state_display()}).")
    if (stopped := a.stopped_by) is not None:
        raise CombatError(
            f"{a.name} cannot act while {stopped} (the GM can remove the condition first)."
        )
    if not t.can_defend:
        raise CombatError(
            f"{t.name} cannot defend ({t.get_state_display()}): no roll is made against a "
            "helpless target; the GM applies the blow by hand."
        )


def declare_defense(*, declaration: Declaration | int, defense: str, actor: User) -> CombatLogEntry:
    """Step 2: dodge, parry or block, by the target's player or the GM. ``declaration`` is a
    row or its id (only its pk is used): one the actor cannot see raises
    Declaration.DoesNotExist."""
    with transaction.atomic():
        rows = lock_declaration(declaration, actor=actor, sheets=False)
        return defend(rows, rows.declarations[pk_of(declaration)], defense=defense, actor=actor)


def defend(rows: Rows, decl: Declaration, *, defense: str, actor: User) -> CombatLogEntry:
    """:func:`declare_defense` on rows already locked, ``decl`` read under the lock."""
    defense = (defense or "").strip().lower()
    t = rows.participant(decl.target_id)
    rows.require_control(t, actor)
    if decl.status not in (Declaration.Status.PENDING, Declaration.Status.DEFENDED):
        raise CombatConflict("This attack is no longer open.")
    if not decl.needs_defense:
        raise CombatError("A feint is met with Focus, not a defense mode.")
    if not t.can_defend:
        raise CombatError(
            f"{t.name} cannot defend ({t.get_state_display()}): call the attack off; "
            "the GM applies a blow on a helpless target by hand."
        )
    if defense not in omg.DefenseMode:
        raise CombatError("Choose dodge, parry or block.")
    ch = Changes()
    ch.set(decl, "defense", defense)
    ch.set(decl, "status", Declaration.Status.DEFENDED.value)
    if not ch:
        raise CombatConflict(f"{t.name} already declared {defense}.")
    a = rows.participant(decl.attacker_id)
    return log(
        rows,
        Kind.DEFEND,
        actor=actor,
        changes=ch,
        participant=t,
        declaration=decl,
        involves=(a, t),
        text=f"{t.name} will {defense}.",
    )


def cancel_declaration(*, declaration: Declaration | int, actor: User) -> CombatLogEntry:
    """Call an open attack off (its attacker's player, or the GM); a row or an id as for
    :func:`declare_defense`."""
    with transaction.atomic():
        rows = lock_declaration(declaration, actor=actor, sheets=False)
        decl = rows.declarations[pk_of(declaration)]
        a = rows.participant(decl.attacker_id)
        rows.require_control(a, actor)
        if not decl.is_open:
            raise CombatConflict("This attack is no longer open.")
        ch = Changes()
        ch.set(decl, "status", Declaration.Status.CANCELLED.value)
        if decl.counterattack:
            ch.set(a, "counterattacks", a.counterattacks + 1)
        return log(
            rows,
            Kind.CANCEL,
            actor=actor,
            changes=ch,
            participant=a,
            declaration=decl,
            involves=(a,),
            text=f"{a.name}'s attack was called off.",
        )


# --- The PvD and its odds ------------------------------------------------------------------


@dataclass(frozen=True)
class Setup:
    """Engine inputs of a declaration, as the sheets stand now."""

    pro: int
    dif: int
    attacker: omg.Attacker | None  # strikes only
    defender: omg.Defender | None
    feinted: bool


def weight(c: Character) -> int:
    return c.weight or c.bzf * 14


def is_feinted(decl: Declaration, a: Participant, t: Participant, round_: int) -> bool:
    """The attacker's feint on this target in this round strips its Melee Combat from the
    attacker's next attack on it, a strike or a maneuver; another feint meets FOC + Melee in
    full and leaves the first waiting (docs/rules.md, "Maneuvers")."""
    if decl.action == omg.Maneuver.FEINT:
        return False
    info = t.conditions.get(omg.Condition.FEINTED.value)
    return bool(info) and info.get("by") == a.pk and info.get("round") == round_


def setup(
    decl: Declaration,
    *,
    attacker: Character,
    target: Character,
    weapon: Weapon | None,
    zone: BodyZone | None,
    levels: dict[tuple[int, str], int],
    defense: str | None,
    feinted: bool,
) -> Setup:
    """``levels`` maps (character pk, discipline name) to its level."""
    weapon_dsc = levels.get((attacker.pk, weapon_discipline(weapon.category)), 0) if weapon else 0
    melee_t = 0 if feinted else levels.get((target.pk, MELEE_COMBAT), 0)
    arm = zone.arm if zone else 0
    arm_bonus = zone.arm_bonus if zone else 0
    if decl.action in omg.StrikeMode:
        mode = omg.StrikeMode(decl.action)
        a = omg.Attacker(
            mode,
            getattr(attacker, omg.STRIKE_APTITUDE[mode].lower()),
            weapon_dsc,
            weapon.dmg if weapon else 0,
            weapon.bonus if weapon else 0,
        )
        d = None
        dif = 0
        if defense:
            dm = omg.DefenseMode(defense)
            d = omg.Defender(
                dm, getattr(target, omg.DEFENSE_APTITUDE[dm].lower()), melee_t, arm, arm_bonus
            )
            dif = d.dif
        return Setup(a.pro, dif, a, d, feinted)
    kind = omg.Maneuver(decl.action)
    melee_a = levels.get((attacker.pk, MELEE_COMBAT), 0)
    p = omg.maneuver_pro(kind, getattr(attacker, omg.MANEUVER_APTITUDE[kind].lower()), melee_a)
    if kind is omg.Maneuver.FEINT:
        dif = omg.dif(omg.score(target.foc, melee_t))
    elif defense:
        dm = omg.DefenseMode(defense)
        dif = omg.defense_dif(dm, getattr(target, omg.DEFENSE_APTITUDE[dm].lower()), melee_t)
    else:
        dif = 0
    return Setup(p, dif, None, None, feinted)


def _levels_of(*characters: Character) -> dict[tuple[int, str], int]:
    return {(c.pk, d.name): d.level for c in characters for d in c.disciplines.all()}


def declaration_odds(decl: Declaration) -> dict[str, Any]:
    """PvD and exact odds per defense mode (the declared one only, once declared). Expects
    the declaration's attacker and target characters with disciplines prefetched."""
    a_p, t_p = decl.attacker, decl.target
    a, t = a_p.character, t_p.character
    # A declaration just written carries the levels it was checked with (declare).
    levels = getattr(decl, "_levels", None) or _levels_of(a, t)
    feinted = is_feinted(decl, a_p, t_p, decl.encounter.round)
    modes = [decl.defense] if decl.defense else [m.value for m in omg.DefenseMode]
    if not decl.needs_defense:
        modes = [""]
    out: dict[str, Any] = {}
    for mode in modes:
        s = setup(
            decl,
            attacker=a,
            target=t,
            weapon=in_hand(a_p, decl.weapon),
            zone=decl.zone,
            levels=levels,
            defense=mode or None,
            feinted=feinted,
        )
        if s.attacker is not None and s.defender is not None:
            so = odds.strike_odds(s.attacker, s.defender)
            co = so.check
            hit = co.hits
            out[mode or "focus"] = {
                "pvd": f"{s.pro}v{s.dif}",
                "pro": s.pro,
                "dif": s.dif,
                "hit": hit,
                "second_hit": co.second_hit if s.attacker.fast else 0,
                "epic_success": co.counts[omg.Degree.EPIC_SUCCESS],
                "epic_failure": co.counts[omg.Degree.EPIC_FAILURE],
                "mean_damage": round(float(so.mean_damage), 2),
            }
        else:
            co = odds.check_odds(s.pro, s.dif)
            out[mode or "focus"] = {
                "pvd": f"{s.pro}v{s.dif}",
                "pro": s.pro,
                "dif": s.dif,
                "hit": co.hits,
                "second_hit": 0,
                "epic_success": co.counts[omg.Degree.EPIC_SUCCESS],
                "epic_failure": co.counts[omg.Degree.EPIC_FAILURE],
                "mean_damage": None,
            }
    return out


def odds_for_viewer(decl: Declaration, hidden: set[int]) -> dict[str, Any] | None:
    """:func:`declaration_odds` as a viewer may see them when ``hidden`` participants' numbers
    are kept from them: their own side's number stays (a player facing a hidden NPC still
    sees their PRO, or their DIF per defense mode), the hidden side's becomes None ("?" in
    the PvD), and so does everything computed from both (hit chances, epics, damage), which
    would give the hidden number away. None when both sides are hidden."""
    show_pro = decl.attacker_id not in hidden
    show_dif = decl.target_id not in hidden
    if not (show_pro or show_dif):
        return None
    full = declaration_odds(decl)
    if show_pro and show_dif:
        return full
    masked: dict[str, Any] = {}
    for mode, o in full.items():
        pro = o["pro"] if show_pro else None
        dif = o["dif"] if show_dif else None
        masked[mode] = {
            "pvd": f"{'?' if pro is None else pro}v{'?' if dif is None else dif}",
            "pro": pro,
            "dif": dif,
            **dict.fromkeys(("hit", "second_hit", "epic_success", "epic_failure")),
            "mean_damage": None,
        }
    return masked
