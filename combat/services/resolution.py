"""Resolving a declaration (the roll, wounds, maneuvers, Epic checks), Stamina tests, and the
GM's manual damage and healing. Each roll's outcome is built once here (combat/outcome.py) and
told in words by combat/perspective.py."""

from __future__ import annotations

import dataclasses
import random
from typing import TYPE_CHECKING, Any

from django.db import transaction

from combat import conditions as condition_rules
from combat import perspective
from combat.models import CombatLogEntry, Declaration, Encounter, Participant
from combat.outcome import AttackOutcome, ManeuverOutcome, StaminaOutcome, StrikeOutcome, Wounds
from combat.services.attacks import in_hand, is_feinted, setup, weight
from combat.services.rows import (
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
from rules.engine import RulesError, omg
from rules.engine.omg_data import MELEE_COMBAT, weapon_discipline
from sheets.models import BodyZone, Character
from sheets.numbers import aptitudes_of
from sheets.randomness import server_rng
from sheets.services import GRIEVOUS_NOTE

if TYPE_CHECKING:
    # Whoever acts, signed in or not (the services refuse the latter themselves).
    from sheets.users import AnyUser as User

STAMINA_DIF = 20  # Moderate, unless the GM says otherwise (docs/rules.md, "Wounds and healing")

#: The most parry counterattacks a participant can have queued (Participant's constraint).
MAX_COUNTERATTACKS = 100


def roll_value(roll: int | None, rng: random.Random | None) -> tuple[int, bool]:
    if roll is not None:
        if isinstance(roll, bool) or not isinstance(roll, int) or not 1 <= roll <= 100:
            raise CombatError("A d100 roll is a whole number from 1 to 100 (00 is 100).")
        return roll, True
    return (rng or server_rng()).randint(1, 100), False


def _wound(
    rows: Rows, ch: Changes, t: Participant, zone: BodyZone, damages: list[int], wear: int
) -> Wounds:
    """Hits on a zone in order, then the armor wear; Vitality, grievous wound, Stamina test
    prompt and "down" follow the rules (rules.engine.omg.take_damage)."""
    c = t.character
    v0 = max(0, min(c.vitality, 1000))
    rz = omg.Zone(zone.name, wounds=zone.wounds, grievous=bool(zone.grievous))
    vit = v0
    grievous = False
    for dmg in damages:
        w = omg.take_damage(rz, dmg, bzf=c.bzf, vitality=vit)
        rz, vit = w.zone, w.vitality
        grievous = grievous or w.grievous
    ch.set(zone, "wounds", rz.wounds)
    if wear:
        ch.set(zone, "arm", max(0, zone.arm - wear))
    if grievous:
        ch.set(zone, "grievous", GRIEVOUS_NOTE)
        ch.set(t, "stamina_due", True)
    lost = v0 - vit
    if lost:
        ch.set(c, "vitality", c.vitality - lost)
    if lost and vit == 0 and t.state == Participant.State.ACTIVE:
        ch.set(t, "state", Participant.State.DOWN.value)
    return Wounds(vit_loss=lost, vitality=c.vitality, grievous=grievous, down=vit == 0)


def _epic(rows: Rows, ch: Changes, c: Character, discipline: str | None, check: Any) -> None:
    """EXP on the discipline used and Fate on an epic roll (docs/rules.md, "Advancement"). Without
    the discipline on the sheet the mark goes to the sheet's general EXP marks."""
    if check.exp:
        row = rows.discipline_row(c, discipline) if discipline else None
        if row is not None:
            ch.set(row, "exp_marks", row.exp_marks + check.exp)
        else:
            ch.set(c, "exp_marks", c.exp_marks + check.exp)
    if check.fate:
        ch.set(c, "fate", min(1000, max(0, c.fate + check.fate)))


def apply_resolution(
    rows: Rows, decl: Declaration, value: int, ch: Changes
) -> tuple[AttackOutcome, str, str]:
    """The declaration ``decl`` rolled ``value``, its effects into ``ch``: returns its outcome,
    the log's text and the public text."""
    enc = rows.encounter
    a_p = rows.participants[decl.attacker_id]
    t_p = rows.participants[decl.target_id]
    a, t = a_p.character, t_p.character
    zone = rows.zones.get(decl.zone_id) if decl.zone_id else None
    declared = rows.weapons.get(decl.weapon_id) if decl.weapon_id else None
    weapon = in_hand(a_p, declared)
    if decl.zone_id and zone is None:
        raise CombatConflict("The targeted zone no longer exists.")
    levels = {(d.character_id, d.name): d.level for d in rows.disciplines.values()}
    feinted = is_feinted(decl, a_p, t_p, enc.round)
    s = setup(
        decl,
        attacker=a,
        target=t,
        weapon=weapon,
        zone=zone,
        levels=levels,
        defense=decl.defense or None,
        feinted=feinted,
    )
    if feinted:
        conditions = dict(t_p.conditions)
        conditions.pop(omg.Condition.FEINTED.value, None)
        ch.set(t_p, "conditions", conditions)
    ch.set(decl, "status", Declaration.Status.RESOLVED.value)
    scene = perspective.Scene(
        attacker=a.name,
        target=t.name,
        action=decl.action,
        defense=decl.defense,
        zone=zone.name if zone else None,
        weapon=weapon.name if weapon else None,
        # Disarmed since the declaration: made without it (docs/rules.md, "Disarm").
        disarmed_of=declared.name if declared and weapon is None else None,
        feinted=feinted,
    )
    outcome: AttackOutcome
    if s.attacker is not None and s.defender is not None:
        r = omg.strike(s.attacker, s.defender, value)
        wounds = None
        if zone is not None and r.hits:
            wounds = _wound(rows, ch, t_p, zone, [h.damage for h in r.hits], r.armor_wear)
        elif zone is not None and r.armor_wear:
            ch.set(zone, "arm", r.arm_after)
        if weapon is not None and r.weapon_wear:
            ch.set(weapon, "dmg", r.weapon_dmg_after)
        if r.counterattack:
            # More than a round can use: the queue stops at the table's bound (a GM clicking
            # through a hundred parries got a 500 from the database's check).
            ch.set(t_p, "counterattacks", min(t_p.counterattacks + 1, MAX_COUNTERATTACKS))
        _epic(rows, ch, a, weapon_discipline(weapon.category) if weapon else None, r.check)
        outcome = StrikeOutcome.of(r, wounds)
        return outcome, *perspective.log_texts(outcome, scene)
    kind = omg.Maneuver(decl.action)
    m = omg.maneuver(
        kind,
        apt=getattr(a, omg.MANEUVER_APTITUDE[kind].lower()),
        melee=levels.get((a.pk, MELEE_COMBAT), 0),
        defense_apt=t.foc
        if kind is omg.Maneuver.FEINT
        else getattr(t, omg.DEFENSE_APTITUDE[omg.DefenseMode(decl.defense)].lower()),
        defense_melee=0 if feinted else levels.get((t.pk, MELEE_COMBAT), 0),
        defense=decl.defense or None,
        roll=value,
        attacker_weight=weight(a),
        target_weight=weight(t),
        attacker_mov=omg.derived(
            aptitudes_of(a), bzf=a.bzf, yards_per_height=a.yards_per_height
        ).mov,
        weapon_dmg=weapon.dmg if weapon else 0,
        weapon_bonus=weapon.bonus if weapon else 0,
        arm=zone.arm if zone else 0,
        arm_bonus=zone.arm_bonus if zone else 0,
    )
    if m.condition is not None:
        # Each maneuver's condition lasts as docs/rules.md ("Conditions") reads the seed.
        key, info = condition_rules.entry(m.condition.value, round_=enc.round, by=a_p.pk)
        ch.set(t_p, "conditions", {**t_p.conditions, key: info})
    wounds = None
    if m.hit is not None and zone is not None:
        wounds = _wound(rows, ch, t_p, zone, [m.hit.damage], m.hit.armor_wear)
    if m.stamina_test:
        ch.set(t_p, "stamina_due", True)
    # The declared defense's own effect, as against a strike (docs/rules.md, "Maneuvers").
    if weapon is not None and m.weapon_wear:
        ch.set(weapon, "dmg", m.weapon_dmg_after)
    if m.counterattack:
        ch.set(t_p, "counterattacks", min(t_p.counterattacks + 1, MAX_COUNTERATTACKS))
    _epic(rows, ch, a, MELEE_COMBAT, m.check)
    outcome = ManeuverOutcome.of(
        m, wounds=wounds, on_zone=zone is not None, with_weapon=weapon is not None
    )
    if m.condition is omg.Condition.DISARMED:
        scene = dataclasses.replace(scene, target_declared_with=_declared_with(t_p))
    return outcome, *perspective.log_texts(outcome, scene)


def _declared_with(p: Participant) -> str | None:
    """The weapon of ``p``'s attack already declared, which a disarm leaves to be made
    without it (None without one)."""
    waiting = (
        Declaration.objects.filter(
            attacker_id=p.pk,
            status__in=[Declaration.Status.PENDING, Declaration.Status.DEFENDED],
            weapon__isnull=False,
        )
        .select_related("weapon")
        .first()
    )
    if waiting is None or waiting.weapon is None:
        return None
    return waiting.weapon.name


def resolve(
    *,
    declaration: Declaration | int,
    actor: User,
    roll: int | None = None,
    rng: random.Random | None = None,
) -> CombatLogEntry:
    """Steps 4-5: the attacker's d100 (server dice from ``rng``, or the typed ``roll`` of
    physical dice) resolved by the engine and applied in one transaction. A declaration
    resolves once: a second press finds it resolved and raises CombatConflict. An id as for
    :func:`~combat.services.declare_defense`."""
    value, physical = roll_value(roll, rng)
    with transaction.atomic():
        rows = lock_declaration(declaration, actor=actor, sheets=True)
        decl = rows.declarations[pk_of(declaration)]
        return apply_roll(rows, decl, value=value, physical=physical, actor=actor)


def apply_roll(
    rows: Rows, decl: Declaration, *, value: int, physical: bool, actor: User
) -> CombatLogEntry:
    """:func:`resolve` on rows already locked (both characters; the declaration's zone, weapon and
    disciplines), ``decl`` read under the lock."""
    a_p = rows.participants[decl.attacker_id]
    rows.require_control(a_p, actor)
    if decl.status == Declaration.Status.RESOLVED:
        raise CombatConflict("This attack has already been rolled.")
    if decl.status == Declaration.Status.CANCELLED:
        raise CombatConflict("This attack was called off.")
    if decl.status == Declaration.Status.PENDING:
        raise CombatError("Wait for the defense before rolling.")
    ch = Changes()
    try:
        outcome, text, public = apply_resolution(rows, decl, value, ch)
    except RulesError as exc:
        raise CombatError(str(exc)) from exc
    return log(
        rows,
        Kind.ROLL,
        actor=actor,
        changes=ch,
        participant=a_p,
        declaration=decl,
        involves=(a_p, rows.participants[decl.target_id]),
        roll=value,
        physical=physical,
        text=text,
        public_text=public,
        result=outcome.as_payload(),
    )


def stamina_check(
    *,
    participant: Participant,
    actor: User,
    roll: int | None = None,
    rng: random.Random | None = None,
    difficulty: int | None = None,
) -> CombatLogEntry:
    """The Stamina test a grievous wound or a stun calls for; failure knocks out. Only
    when one is due: a second press (or a test nothing called for) is refused with
    CombatConflict, so one wound never gets two rolls. ``difficulty`` is the GM's DIF
    (5..50; docs/rules.md, "Wounds and healing"), Moderate 20 when not given; only the GM may
    give one (CombatError naming ``difficulty`` otherwise); once the fight is over, CombatError."""
    value, physical = roll_value(roll, rng)
    dif = _stamina_dif(difficulty)
    with transaction.atomic():
        rows = lock(participant.encounter_id, actor=actor)
        p = rows.participant(participant.pk)
        rows.lock_sheets({p.character_id})
        rows.require_control(p, actor)
        if difficulty is not None and not rows.is_gm(actor):
            raise CombatError(
                "Only the GM sets the Stamina test's difficulty: leave it out for Moderate 20, "
                "or let the GM roll the test.",
                fields=("difficulty",),
                explains=True,
            )
        require_not_over(rows.encounter)
        if not p.stamina_due:
            raise CombatConflict(
                f"No Stamina test is due for {p.name}: nothing calls for one, or it was "
                "already rolled."
            )
        ch = Changes()
        outcome, text, public = apply_stamina(p, dif, value, ch)
        return log(
            rows,
            Kind.STAMINA,
            actor=actor,
            changes=ch,
            participant=p,
            involves=(p,),
            roll=value,
            physical=physical,
            text=text,
            public_text=public,
            result=outcome.as_payload(),
        )


def apply_stamina(
    p: Participant, dif: int, value: int, ch: Changes
) -> tuple[StaminaOutcome, str, str]:
    """The Stamina test of ``p`` (its sheet locked) rolled ``value`` against ``dif``, into
    ``ch``: no longer due, and knocked out on a failure. Returns the outcome, the text and the
    public text (also a Fate re-roll's, against the same DIF)."""
    c = p.character
    outcome = StaminaOutcome(check=omg.stamina_test(c.nrv + c.vgr, dif, value))
    ch.set(p, "stamina_due", False)
    if not outcome.success and p.state == Participant.State.ACTIVE:
        ch.set(p, "state", Participant.State.UNCONSCIOUS.value)
    return outcome, *perspective.stamina_texts(p.name, outcome)


def _stamina_dif(difficulty: object) -> int:
    if difficulty is None:
        return STAMINA_DIF
    if (
        isinstance(difficulty, bool)
        or not isinstance(difficulty, int)
        or not omg.DIF_MIN <= difficulty <= omg.DIF_MAX
    ):
        raise CombatError(
            f"The difficulty is a whole number from {omg.DIF_MIN} to {omg.DIF_MAX} "
            "(Casual 10, Moderate 20, Ambitious 30, Formidable 40, Supreme 50).",
            fields=("difficulty",),
            explains=True,
        )
    return difficulty


def require_not_over(encounter: Encounter) -> None:
    """An ended fight takes no more rolls (a Stamina test, Fate): its record stays as it
    ended. The GM undoes the end first to go on."""
    if encounter.status == Encounter.Status.FINISHED:
        raise CombatError("The fight is over: no more rolls in it (the GM can undo its end).")


def adjust_zone(
    *, encounter: Encounter, zone: BodyZone, amount: int, actor: User
) -> CombatLogEntry:
    """The GM's damage (``amount`` > 0) or healing (< 0) on a participant's zone, with
    Vitality, grievous wound and "down" as for a hit (rules.engine.omg.take_damage / heal)."""
    if isinstance(amount, bool) or not isinstance(amount, int) or amount == 0:
        raise CombatError("Give a number of wounds to add (or, negative, to heal).")
    if abs(amount) > 1000:
        raise CombatError("At most 1000 wounds at once.")
    with transaction.atomic():
        rows = lock(encounter, actor=actor)
        rows.require_gm(actor)
        p = next(
            (p for p in rows.participants.values() if p.character_id == zone.character_id), None
        )
        if p is None:
            raise CombatError("That zone belongs to nobody in this encounter.")
        rows.lock_sheets({p.character_id})
        z = rows.zones.get(zone.pk)
        if z is None:
            raise CombatConflict("That zone no longer exists.")
        ch = Changes()
        c = p.character
        if amount > 0:
            wounds = _wound(rows, ch, p, z, [amount], 0)
            text, public = perspective.damage_texts(c.name, z.name, amount, wounds)
            kind = Kind.DAMAGE
        else:
            max_vit = omg.derived(aptitudes_of(c), bzf=c.bzf).vit
            vit = max(0, min(c.vitality, max_vit))
            h = omg.heal(
                omg.Zone(z.name, wounds=z.wounds),
                -amount,
                bzf=c.bzf,
                vitality=vit,
                max_vitality=max_vit,
            )
            ch.set(z, "wounds", h.zone.wounds)
            if h.vit_gain:
                ch.set(c, "vitality", c.vitality + h.vit_gain)
            text, public = perspective.healing_texts(c.name, z.name, h.healed, h.vit_gain)
            kind = Kind.HEAL
        if not ch:
            raise CombatError("That changes nothing.")
        return log(
            rows,
            kind,
            actor=actor,
            changes=ch,
            participant=p,
            involves=(p,),
            text=text,
            public_text=public,
        )
