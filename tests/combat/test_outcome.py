"""A roll's outcome (combat/outcome.py): built once from the engine's result, stored in the log
entry's payload as the same JSON as before, read back as attributes, and read by key nowhere
else."""

from __future__ import annotations

import ast
import json
import random
from pathlib import Path
from typing import Any

import pytest

from combat import outcome as outcomes
from combat import services
from combat.models import CombatLogEntry
from combat.outcome import (
    Hit,
    ManeuverOutcome,
    StaminaOutcome,
    StrikeOutcome,
    Wounds,
)
from rules.engine import omg

ROOT = Path(__file__).resolve().parents[2]


def _stored(kind: str, result: dict[str, Any]) -> outcomes.Outcome | None:
    """What a row read from the database gives: the result through JSON and back."""
    return outcomes.read(kind, json.loads(json.dumps({"text": "", "result": result})))


# --- Built from the engine, stored as before ----------------------------------------------


@pytest.mark.parametrize("seed", range(40))
def test_it_stores_a_strike_as_the_engine_writes_it_and_reads_it_back(seed):
    rng = random.Random(seed)
    mode = rng.choice(list(omg.StrikeMode))
    r = omg.strike(
        omg.Attacker(mode, rng.randint(1, 5), rng.randint(0, 5), weapon_dmg=rng.randint(0, 5)),
        omg.Defender(
            rng.choice(list(omg.DefenseMode)),
            rng.randint(1, 5),
            rng.randint(0, 5),
            arm=rng.randint(0, 5),
        ),
        rng.randint(1, 100),
    )
    wounds = Wounds(vit_loss=2, vitality=7, grievous=True, down=False) if r.hits else None
    outcome = StrikeOutcome.of(r, wounds)
    # The JSON a strike was always stored as: the engine's, with the wounds dealt.
    before = r.as_dict() | ({"wounds": wounds.as_payload()} if wounds else {})
    assert outcome.as_payload() == before
    assert list(outcome.as_payload()) == list(before)
    assert _stored("roll", before) == outcome
    assert outcome.landed == bool(r.hits) and outcome.damage == r.damage


@pytest.mark.parametrize("kind", list(omg.Maneuver))
@pytest.mark.parametrize("roll", [1, 7, 35, 50, 96, 100])
def test_it_stores_a_maneuver_as_before_and_reads_it_back(kind, roll):
    m = omg.maneuver(
        kind,
        apt=4,
        melee=2,
        defense_apt=3,
        defense_melee=1,
        defense="parry",
        roll=roll,
        attacker_weight=80,
        target_weight=70,
        attacker_mov=6,
        weapon_dmg=4,
        arm=2,
    )
    wounds = Wounds(vit_loss=0, vitality=9, grievous=False, down=False) if m.hit else None
    outcome = ManeuverOutcome.of(m, wounds=wounds, on_zone=True, with_weapon=True)
    # The JSON combat/services/resolution.py built for a maneuver before this type existed.
    before: dict[str, Any] = {
        **m.check.as_dict(),
        "maneuver": kind.value,
        "condition": m.condition.value if m.condition else None,
        "too_heavy": m.too_heavy,
        "stamina_test": m.stamina_test,
        "shove_yards": m.shove_yards,
        "hits": [],
    }
    if m.hit is not None:
        before["hits"] = [{"roll": m.hit.roll, "damage": m.hit.damage, "raw": m.hit.raw}]
        before["wounds"] = wounds.as_payload() if wounds else None
    before.update(
        counterattack=m.counterattack,
        weapon_wear=m.weapon_wear,
        weapon_dmg_after=m.weapon_dmg_after,
        weapon_destroyed=m.weapon_destroyed,
    )
    assert outcome.as_payload() == before
    assert list(outcome.as_payload()) == list(before)
    assert _stored("roll", before) == outcome
    assert outcome.landed == (m.condition is not None and not m.too_heavy)


@pytest.mark.parametrize("roll", [1, 20, 55, 99])
def test_it_stores_a_stamina_test_as_the_engine_writes_it(roll):
    check = omg.stamina_test(7, 30, roll)
    outcome = StaminaOutcome(check=check)
    assert outcome.as_payload() == check.as_dict()
    assert _stored("stamina", check.as_dict()) == outcome
    assert (outcome.dif, outcome.success) == (30, check.success)


# --- Rows already in a database -----------------------------------------------------------

#: A maneuver stored before maneuvers carried their defense's effects: no counterattack,
#: weapon wear, weapon DMG after or weapon destroyed.
OLD_STUN = {
    "roll": 12,
    "pro": 70,
    "dif": 15,
    "degree": "success",
    "abbr": None,
    "success": True,
    "exp": 0,
    "fate": 0,
    "sum": 3,
    "maneuver": "stun",
    "condition": "stunned",
    "too_heavy": False,
    "stamina_test": True,
    "shove_yards": 0,
    "hits": [{"roll": 12, "damage": 3, "raw": 5}],
    "wounds": {"vit_loss": 0, "vitality": 9, "grievous": False, "down": False},
}

#: A fast strike's two hits, the second of them putting the target down, as stored.
STORED_STRIKE = {
    "pro": 70,
    "dif": 20,
    "roll": 43,
    "degree": "success",
    "abbr": None,
    "success": True,
    "sum": 7,
    "exp": 0,
    "fate": 0,
    "hits": [
        {"roll": 43, "damage": 5, "raw": 7, "protection": 2, "armor_wear": 0, "second": False},
        {"roll": 34, "damage": 5, "raw": 7, "protection": 2, "armor_wear": 1, "second": True},
    ],
    "damage": 10,
    "armor_wear": 1,
    "arm_after": 1,
    "armor_destroyed": False,
    "weapon_wear": 0,
    "weapon_dmg_after": 4,
    "weapon_destroyed": False,
    "counterattack": False,
    "wounds": {"vit_loss": 4, "vitality": 0, "grievous": True, "down": True},
}


def test_it_reads_a_maneuver_stored_before_it_carried_its_defense_s_effects():
    stun = _stored("roll", OLD_STUN)
    assert isinstance(stun, ManeuverOutcome)
    assert (stun.condition, stun.landed, stun.stamina_test) == ("stunned", True, True)
    assert stun.hits == (Hit(roll=12, damage=3, raw=5),)
    assert (stun.counterattack, stun.weapon_wear, stun.weapon_dmg_after) == (False, 0, None)
    assert not stun.weapon_destroyed and not stun.down
    # Written again, it gains those keys with their "none" values, and nothing else changes.
    assert stun.as_payload() == {
        **OLD_STUN,
        "counterattack": False,
        "weapon_wear": 0,
        "weapon_dmg_after": None,
        "weapon_destroyed": False,
    }


def test_it_reads_a_stored_strike_as_attributes():
    strike = _stored("roll", STORED_STRIKE)
    assert isinstance(strike, StrikeOutcome)
    assert (strike.pvd, strike.degree, strike.damage) == ("70v20", omg.Degree.SUCCESS, 10)
    assert [h.second for h in strike.hits] == [False, True]
    assert strike.down and strike.wounds == Wounds(vit_loss=4, vitality=0, grievous=True, down=True)
    assert strike.as_payload() == STORED_STRIKE


def test_it_reads_no_outcome_from_an_entry_of_another_kind():
    assert outcomes.read("turn", {"text": "Round 2.", "result": STORED_STRIKE}) is None
    assert outcomes.read("roll", {"text": "An entry without its result."}) is None


@pytest.mark.django_db
def test_it_keeps_the_outcome_of_a_roll_made_in_a_fight_as_the_row_reads_back(fight):
    _, entries = services.strike(
        encounter=fight.encounter,
        attacker=fight.ysolde,
        target=fight.thug,
        action="mighty",
        zone=fight.zone(fight.thug, "chest"),
        weapon=fight.weapon(fight.ysolde),
        defense="dodge",
        roll=5,
        actor=fight.table.gm,
    )
    row = CombatLogEntry.objects.get(pk=entries[-1].pk)
    assert isinstance(row.outcome, StrikeOutcome)
    assert row.outcome.roll == 5 and row.outcome.landed == bool(row.outcome.hits)
    assert row.outcome.as_payload() == row.payload["result"]


# --- The schema says what is stored -------------------------------------------------------


@pytest.mark.django_db
def test_it_describes_in_the_schema_the_keys_an_outcome_is_stored_with(client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    schemas = json.loads(response.content)["components"]["schemas"]

    def keys(name: str) -> set[str]:
        return set(schemas[name]["properties"])

    strike = _stored("roll", STORED_STRIKE)
    stun = _stored("roll", {**OLD_STUN, "counterattack": False})
    assert strike is not None and stun is not None
    assert set(strike.as_payload()) == keys("StrikeRollResult")
    # A check's reversed reading ("second") is a fast strike's: never a maneuver's.
    assert set(stun.as_payload()) == keys("ManeuverRollResult") - {"second"}
    assert set(STORED_STRIKE["hits"][0]) == keys("OmgHit")  # type: ignore[index]
    assert set(Hit(roll=1, damage=1, raw=1).as_payload()) == keys("ManeuverHit")
    assert set(Wounds(vit_loss=0, vitality=0, grievous=False, down=False).as_payload()) == keys(
        "RollWounds"
    )
    stamina = StaminaOutcome(check=omg.stamina_test(7, 20, 50))
    assert set(stamina.as_payload()) <= keys("OmgCheck")


# --- Read by key in one module only -------------------------------------------------------

#: Where the stored dicts may be read by key: the outcome's own module, and the log entry's
#: model (its text, public text, changes, involved participants).
DEFINING = {"combat/outcome.py", "combat/models.py"}
#: The payload is looked up anywhere in the apps; a variable called ``result`` or ``outcome``
#: only where a roll's outcome lives (prep's forecasts have results of their own).
PAYLOAD_SCOPE = ("combat", "integrations", "prep", "checks")
RESULT_SCOPE = ("combat", "integrations")


def _named(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def lookups(source: str, names: set[str]) -> list[tuple[int, str]]:
    """Where ``source`` reads a value by key from something called one of ``names``:
    ``payload["result"]``, ``entry.payload.get("involves")``, ``result["hits"]``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        target: ast.expr | None = None
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            target = node.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("get", "pop", "setdefault")
        ):
            target = node.func.value
        name = _named(target) if target is not None else None
        if name in names:
            found.append((getattr(node, "lineno", 0), ast.unparse(node)))
    return found


def stray_lookups(root: Path) -> list[str]:
    out = []
    for scope, names in (
        (PAYLOAD_SCOPE, {"payload"}),
        (RESULT_SCOPE, {"result", "outcome"}),
    ):
        for top in scope:
            for path in sorted((root / top).rglob("*.py")):
                where = path.relative_to(root).as_posix()
                if where in DEFINING or "/migrations/" in where:
                    continue
                for line, code in lookups(path.read_text(), names):
                    out.append(f"{where}:{line}: {code}")
    return out


def test_it_reads_the_stored_outcome_by_key_only_in_the_module_that_defines_it():
    assert stray_lookups(ROOT) == []


def test_it_finds_the_lookups_it_forbids():
    # The check above sees lookups: the defining modules have them, and the readers' old ways
    # of reading a roll are caught.
    assert lookups((ROOT / "combat/outcome.py").read_text(), {"payload"})
    assert lookups((ROOT / "combat/models.py").read_text(), {"payload"})
    old_reader = (
        "result = entry.payload.get('result') or {}\n"
        "landed = bool(result.get('hits'))\n"
        "dif = int(entry.payload['result']['dif'])\n"
        "wounds = result['wounds']\n"
    )
    assert sorted(line for line, _ in lookups(old_reader, {"payload", "result"})) == [1, 2, 3, 4]
