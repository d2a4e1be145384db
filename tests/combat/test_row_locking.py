"""Row locking on PostgreSQL: many threads resolving attacks and editing sheets on the same
characters at once lose no update, never deadlock, and the combat log accounts for every
change it made.

Four encounters share the same four characters, so resolutions in different encounters lock
the same character rows (in opposite attack directions: A hits B in one fight, B hits A in
another), while sheet threads add wounds and compare-and-set wounds and Fate on the same rows.
Locks are taken in one order (combat/services/rows.py: encounter, its declaration and
participants, then characters by pk, then their zones, weapons and disciplines;
sheets/services.py: the character, then its row), so PostgreSQL must never report a deadlock.
Afterwards every zone's wounds, every character's Fate and sheet version equal their start plus
the effects logged by the combat log and counted by the sheet threads.

A race test finds a wrong lock order only when the timing is unlucky, so the last two tests
check the order itself: the rows a new declaration or participant points at are locked before
commit (PostgreSQL's foreign-key checks would otherwise lock them at commit, in an order of
their own, which deadlocked with resolutions before the combat services took them first).
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.db import connection, transaction
from rest_framework.test import APIClient

from combat import services
from combat.models import CombatLogEntry, Declaration, Encounter, Participant
from rules.engine.omg_data import MELEE_COMBAT
from sheets import services as sheet_services
from sheets.models import BodyZone, Character, Discipline, Weapon
from tests.factories import make_thug, make_ysolde
from tests.locking import locked, waiting_for_a_lock

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

ATTACKS = 12  # per combat thread
EDITS = 30  # per sheet thread
ZONES = ("chest", "abdomen")  # few, so that threads meet on the same rows
ACTIONS = ("fast", "precise", "mighty")
DEFENSES = ("dodge", "parry", "block")


@dataclass
class Ledger:
    """What the sheet threads changed (the combat log records the rest), and what went
    wrong anywhere."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    wounds: Counter[int] = field(default_factory=Counter)  # zone pk -> wounds added
    fate: Counter[int] = field(default_factory=Counter)  # character pk -> Fate added
    versions: Counter[int] = field(default_factory=Counter)  # character pk -> sheet edits
    attacks: Counter[int] = field(default_factory=Counter)  # encounter pk -> attacks rolled
    cas_conflicts: int = 0
    errors: list[str] = field(default_factory=list)


def _run_all(workers: list[Any], ledger: Ledger) -> None:
    barrier = threading.Barrier(len(workers))

    def run(work: Any) -> None:
        try:
            barrier.wait()
            work()
        except Exception as exc:  # every failure, deadlocks included, fails the test below
            with ledger.lock:
                ledger.errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a thread is stuck (waiting on a lock?)"


def _attacks_by_services(
    encounter: Encounter, attacker: Participant, target: Participant, gm: Any, seed: int
) -> Any:
    def work(ledger: Ledger) -> None:
        rng = random.Random(seed)
        zones = list(BodyZone.objects.filter(character_id=target.character_id, name__in=ZONES))
        weapon = attacker.character.weapons.first()
        for _ in range(ATTACKS):
            decl, _ = services.declare_attack(
                encounter=encounter,
                attacker=attacker,
                target=target,
                action=rng.choice(ACTIONS),
                zone=rng.choice(zones),
                weapon=weapon,
                actor=gm,
            )
            services.declare_defense(declaration=decl, defense=rng.choice(DEFENSES), actor=gm)
            services.resolve(declaration=decl, roll=rng.randint(1, 100), actor=gm)
            with ledger.lock:
                ledger.attacks[encounter.pk] += 1

    return work


def _attacks_by_api(
    encounter: Encounter, attacker: Participant, target: Participant, gm: Any, seed: int
) -> Any:
    def work(ledger: Ledger) -> None:
        rng = random.Random(seed)
        api = APIClient()
        api.force_authenticate(gm)
        zones = list(BodyZone.objects.filter(character_id=target.character_id, name__in=ZONES))
        weapon = attacker.character.weapons.first()
        for _ in range(ATTACKS):
            declared = api.post(
                f"/api/encounters/{encounter.pk}/attacks/",
                {
                    "attacker": attacker.pk,
                    "target": target.pk,
                    "zone": rng.choice(zones).pk,
                    "weapon": weapon.pk,
                    "action": rng.choice(ACTIONS),
                },
                format="json",
            )
            assert declared.status_code == 201, declared.content
            # The answer's id is not used: with another attack open in the encounter, the
            # endpoint answers with the first open attack, not necessarily this one.
            attack = Declaration.objects.get(
                attacker=attacker, status__in=[Declaration.Status.PENDING]
            ).pk
            defended = api.post(
                f"/api/attacks/{attack}/defense/", {"defense": rng.choice(DEFENSES)}, format="json"
            )
            assert defended.status_code == 200, defended.content
            rolled = api.post(
                f"/api/attacks/{attack}/roll/", {"roll": rng.randint(1, 100)}, format="json"
            )
            assert rolled.status_code == 200, rolled.content
            with ledger.lock:
                ledger.attacks[encounter.pk] += 1

    return work


def _sheet_edits(characters: list[Character], seed: int) -> Any:
    """Hand-added wounds (adjust_wounds) and compare-and-set edits of wounds and Fate
    (edit_field, as the sheet page sends them), retried when someone else got there first."""

    def work(ledger: Ledger) -> None:
        rng = random.Random(seed)
        for _ in range(EDITS):
            character = rng.choice(characters)
            zone = rng.choice(list(BodyZone.objects.filter(character=character, name__in=ZONES)))
            what = rng.choice(("adjust", "wounds", "fate"))
            if what == "adjust":
                delta = rng.randint(1, 3)
                sheet_services.adjust_wounds(
                    user=character.owner, character=character, zone_id=zone.pk, delta=delta
                )
                added: tuple[Counter[int], int, int] = (ledger.wounds, zone.pk, delta)
            else:
                while True:
                    if what == "wounds":
                        current = BodyZone.objects.get(pk=zone.pk).wounds
                        kind, row = "zone", zone.pk
                    else:
                        current = Character.objects.get(pk=character.pk).fate
                        kind, row = "character", None
                    try:
                        sheet_services.edit_field(
                            user=character.owner,
                            character=character,
                            kind=kind,
                            row_id=row,
                            field=what,
                            value=str(current + 1),
                            original=str(current),
                        )
                        break
                    except sheet_services.EditConflict:
                        with ledger.lock:
                            ledger.cas_conflicts += 1
                added = (
                    (ledger.wounds, zone.pk, 1)
                    if what == "wounds"
                    else (ledger.fate, character.pk, 1)
                )
            with ledger.lock:
                counter, key, amount = added
                counter[key] += amount
                ledger.versions[character.pk] += 1

    return work


def _new_encounters(campaign: Any, characters: list[Character], gm: Any) -> Any:
    """The GM sets up more fights with the same characters meanwhile: each new participant
    points at its character, which PostgreSQL checks with a row lock at commit."""

    def work(ledger: Ledger) -> None:
        for i in range(ATTACKS):
            encounter, _ = services.create_encounter(campaign=campaign, name=f"Next {i}", actor=gm)
            order = characters[::-1] if i % 2 else characters
            services.add_participants(encounter=encounter, characters=order, actor=gm)

    return work


def _logged(field_of: tuple[str, str]) -> Counter[int]:
    """The net change the combat log records for one (model, field), per row pk."""
    model, name = field_of
    out: Counter[int] = Counter()
    for payload in CombatLogEntry.objects.values_list("payload", flat=True):
        for c in payload.get("changes", []):
            if c["model"] == model and c["field"] == name:
                out[c["pk"]] += c["after"] - c["before"]
    return out


def _logged_versions() -> Counter[int]:
    """Sheets the combat log changed: one version per entry per character it touched."""
    out: Counter[int] = Counter()
    for payload in CombatLogEntry.objects.values_list("payload", flat=True):
        touched = {c["pk"] for c in payload.get("changes", []) if c["model"] == "character"}
        touched |= {c["char"] for c in payload.get("changes", []) if "char" in c}
        out.update(touched)
    return out


def test_it_loses_no_update_and_never_deadlocks_under_concurrent_attacks_and_edits(table):
    assert connection.vendor == "postgresql"
    gm = table.gm
    a = make_ysolde(table.campaign, table.player, name="Ysolde A")
    b = make_ysolde(table.campaign, table.player, name="Ysolde B")
    c = make_thug(table.campaign, gm, name="Thug C")
    d = make_thug(table.campaign, gm, name="Thug D")
    characters = [a, b, c, d]
    # Everyone stays on their feet for the whole run (wounds never pass a BZF this large, so
    # no Vitality is lost): someone down cannot defend, which the tracker refuses
    # (docs/rules.md, "Conditions"), and this test is about the locks.
    Character.objects.filter(pk__in=[ch.pk for ch in characters]).update(bzf=7_000, bzf_rolled=True)
    encounters = []
    for name in ("North", "South", "East", "West"):
        encounter, _ = services.create_encounter(campaign=table.campaign, name=name, actor=gm)
        services.add_participants(encounter=encounter, characters=characters, actor=gm)
        services.start_encounter(encounter=encounter, actor=gm, rng=random.Random(1))
        encounters.append(encounter)
    starting_log = CombatLogEntry.objects.count()
    wounds0 = dict(BodyZone.objects.filter(character__in=characters).values_list("pk", "wounds"))
    fate0 = {ch.pk: ch.fate for ch in Character.objects.filter(pk__in=[a.pk, b.pk, c.pk, d.pk])}
    versions0 = {
        ch.pk: ch.version for ch in Character.objects.filter(pk__in=[a.pk, b.pk, c.pk, d.pk])
    }

    def p(encounter: Encounter, character: Character) -> Participant:
        return Participant.objects.select_related("character").get(
            encounter=encounter, character=character
        )

    # Opposite directions across encounters; one attacker per thread within an encounter (an
    # attacker has one open attack at a time). One thread per encounter goes through the API.
    pairs = {0: [(a, b), (c, d)], 1: [(b, a), (d, c)], 2: [(a, d), (c, b)], 3: [(d, a), (b, c)]}
    ledger = Ledger()
    workers = []
    for i, encounter in enumerate(encounters):
        (x1, y1), (x2, y2) = pairs[i]
        workers.append(_attacks_by_services(encounter, p(encounter, x1), p(encounter, y1), gm, i))
        workers.append(_attacks_by_api(encounter, p(encounter, x2), p(encounter, y2), gm, 10 + i))
    workers += [_sheet_edits(characters, 100 + i) for i in range(6)]
    workers.append(_new_encounters(table.campaign, characters, gm))

    _run_all([lambda w=w: w(ledger) for w in workers], ledger)

    assert ledger.errors == []
    assert sum(ledger.attacks.values()) == len(encounters) * 2 * ATTACKS
    # Log rows equal effects: one declare, defend and roll entry per attack, sequence unbroken.
    fights = CombatLogEntry.objects.filter(encounter__in=encounters)
    assert fights.count() == starting_log + len(encounters) * 3 * 2 * ATTACKS
    for encounter in encounters:
        entries = CombatLogEntry.objects.filter(encounter=encounter)
        per_kind = Counter(entries.values_list("kind", flat=True))
        for kind in ("declare", "defend", "roll"):
            assert per_kind[kind] == 2 * ATTACKS, (encounter.name, per_kind)
        seqs = list(entries.order_by("seq").values_list("seq", flat=True))
        assert seqs == list(range(1, len(seqs) + 1))
    # No lost update: every row ends where its start plus every logged and counted change says.
    logged_wounds = _logged(("zone", "wounds"))
    for zone, wounds in BodyZone.objects.filter(pk__in=wounds0).values_list("pk", "wounds"):
        assert wounds == wounds0[zone] + logged_wounds[zone] + ledger.wounds[zone], zone
    logged_fate = _logged(("character", "fate"))
    logged_versions = _logged_versions()
    for ch in Character.objects.filter(pk__in=fate0):
        assert ch.fate == fate0[ch.pk] + logged_fate[ch.pk] + ledger.fate[ch.pk], ch.name
        assert ch.version == (versions0[ch.pk] + logged_versions[ch.pk] + ledger.versions[ch.pk]), (
            ch.name
        )
    # The fight really overlapped the edits: wounds came from both sides.
    assert sum(logged_wounds.values()) > 0
    assert sum(ledger.wounds.values()) > 0


def _holding(action: Any) -> Any:
    """Runs ``action`` in a transaction on another connection and keeps it open until the
    returned function is called."""
    held, release = threading.Event(), threading.Event()

    def run() -> None:
        try:
            with transaction.atomic():
                action()
                held.set()
                release.wait(30)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    assert held.wait(30)

    def done() -> None:
        release.set()
        thread.join(30)

    return done


def test_it_locks_the_sheet_rows_a_declaration_points_at_before_commit(fight):
    # Otherwise PostgreSQL's foreign-key checks lock them at commit, in an order of their own.
    # A declaration changes neither sheet: the characters themselves stay free for edits.
    zone = fight.zone(fight.thug, "chest")
    weapon = fight.weapon(fight.ysolde)
    done = _holding(
        lambda: services.declare_attack(
            encounter=fight.encounter,
            attacker=fight.ysolde,
            target=fight.thug,
            action="mighty",
            zone=zone,
            weapon=weapon,
            actor=fight.table.gm,
        )
    )
    try:
        assert locked(BodyZone, zone.pk)
        assert locked(Weapon, weapon.pk)
        assert not locked(Character, fight.ysolde.character_id)
        assert not locked(Character, fight.thug.character_id)
        assert not locked(BodyZone, fight.zone(fight.thug, "head").pk)
    finally:
        done()
    assert not locked(Weapon, weapon.pk)


def test_it_locks_the_characters_it_adds_to_an_encounter_before_commit(fight):
    gm = fight.table.gm
    encounter, _ = services.create_encounter(campaign=fight.table.campaign, name="Next", actor=gm)
    characters = [fight.ysolde.character, fight.thug.character]
    done = _holding(
        lambda: services.add_participants(encounter=encounter, characters=characters, actor=gm)
    )
    try:
        assert all(locked(Character, c.pk) for c in characters)
    finally:
        done()


def _declare(fight: Any) -> Any:
    return services.declare_attack(
        encounter=fight.encounter.pk,
        attacker=fight.ysolde.pk,
        target=fight.thug.pk,
        action="fast",
        zone=fight.zone(fight.thug, "chest").pk,
        weapon=fight.weapon(fight.ysolde).pk,
        actor=fight.table.gm,
    )


def test_it_locks_what_a_roll_reads_and_changes_in_its_transaction(fight):
    # combat/services/rows.py: the encounter, the declaration and its participants, both
    # characters, the zone and the weapon of the attack; not the sheets' other rows.
    decl, _ = _declare(fight)
    services.declare_defense(declaration=decl.pk, defense="parry", actor=fight.table.gm)
    done = _holding(lambda: services.resolve(declaration=decl.pk, roll=43, actor=fight.table.gm))
    try:
        assert locked(Encounter, fight.encounter.pk)
        assert locked(Declaration, decl.pk)
        for p in (fight.ysolde, fight.thug):
            assert locked(Participant, p.pk)
            assert locked(Character, p.character_id)
        assert locked(BodyZone, decl.zone_id)
        assert locked(Weapon, decl.weapon_id)
        assert not locked(BodyZone, fight.zone(fight.thug, "head").pk)
        assert not locked(Weapon, fight.weapon(fight.thug).pk)
    finally:
        done()


def test_a_fate_reroll_of_a_miss_locks_the_targets_sheet_as_the_roll_does(fight):
    # Issue 39: the re-roll locked only what the first roll changed, and a miss changes nothing
    # of the target's, so the new roll was resolved without the target's sheet, zones and
    # disciplines (its defense). A feint has no zone: the re-roll went through, against a
    # DIF without the target's Melee Combat. It locks both sheets now, in the fixed order.
    feint, _ = services.declare_attack(
        encounter=fight.encounter,
        attacker=fight.ysolde,
        target=fight.thug,
        action="feint",
        actor=fight.table.player,
    )
    missed = services.resolve(declaration=feint.pk, roll=3, actor=fight.table.player)
    assert not missed.payload["result"]["success"] and len(missed.payload["changes"]) == 1
    thug = fight.thug.character_id
    done = _holding(
        lambda: services.spend_fate(
            entry=missed,
            spender=fight.ysolde,
            action="reroll",
            roll=50,
            actor=fight.table.player,
        )
    )
    try:
        assert locked(Encounter, fight.encounter.pk)
        assert locked(Declaration, feint.pk)
        for character in (fight.ysolde.character_id, thug):
            assert locked(Character, character)
        assert locked(Discipline, Discipline.objects.get(character_id=thug, name=MELEE_COMBAT).pk)
        assert locked(BodyZone, fight.zone(fight.thug, "chest").pk)
    finally:
        done()
    reroll = CombatLogEntry.objects.get(payload__reroll_of=missed.pk)
    assert reroll.payload["result"]["dif"] == missed.payload["result"]["dif"]


def test_a_declaration_that_waited_for_the_lock_sees_the_attack_declared_meanwhile(fight):
    """A double submit: the second declaration waits for the first's lock on the encounter,
    then reads the participants in a statement of its own, so it finds the attack the first
    one left open and is refused (not an IntegrityError from the one-open-attack index)."""
    done = _holding(lambda: _declare(fight))
    outcome: list[str] = []

    def second() -> None:
        try:
            _declare(fight)
            outcome.append("declared")
        except Exception as exc:  # the outcome is the assertion below
            outcome.append(type(exc).__name__)
        finally:
            connection.close()

    thread = threading.Thread(target=second)
    thread.start()
    try:
        for _ in range(300):  # until the second one waits on the first one's lock
            if waiting_for_a_lock():
                break
            threading.Event().wait(0.01)
        else:
            pytest.fail("the second declaration never waited for the lock")
    finally:
        done()
        thread.join(30)
    assert outcome == ["CombatConflict"]
    assert Declaration.objects.filter(attacker=fight.ysolde).count() == 1
