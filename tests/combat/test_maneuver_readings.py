"""What a feint sets up, and each defense's effect against a maneuver (docs/rules.md,
"Maneuvers"), through the tracker's services: Ysolde (SPD 3, SKL 4, VGR 5, FOC 2, Melee 2,
long sword DMG 4) against the thug (FOC 1, SPD 2, SKL 3, VGR 4, Melee 1, leather ARM 2)."""

from __future__ import annotations

from typing import Any

import pytest

from combat import services
from combat.models import CombatLogEntry, Participant
from rules.engine.omg_data import MELEE_COMBAT
from sheets.models import Discipline, Weapon
from tests.combat.helpers import snapshot
from tests.fight_steps import declare_and_defend

pytestmark = pytest.mark.django_db

MANEUVERS = ["disarm", "throw", "stun", "grapple", "shove"]
# The thug's DIF per defense, with Melee Combat 1 and on the aptitude alone.
DIF = {"dodge": (15, 10), "parry": (20, 15), "block": (25, 20)}


def act(fight: Any, action: str, *, defense: str | None, roll: int, weapon: bool = True) -> Any:
    """Ysolde's whole attack on the thug, played by the GM (who controls both sides)."""
    decl, entries = services.strike(
        encounter=fight.encounter,
        attacker=fight.ysolde,
        target=fight.thug,
        action=action,
        zone=fight.zone(fight.thug, "chest") if action != "feint" else None,
        weapon=fight.weapon(fight.ysolde) if weapon else None,
        defense=defense,
        roll=roll,
        actor=fight.table.gm,
    )
    fight.refresh()
    return entries[-1].payload["result"], entries[-1]


def feint(fight: Any, roll: int = 50) -> dict[str, Any]:
    result, _ = act(fight, "feint", defense=None, roll=roll)
    return result


def without_melee(fight: Any) -> None:
    Discipline.objects.filter(character=fight.thug.character, name=MELEE_COMBAT).delete()


def sword(fight: Any) -> int:
    return Weapon.objects.get(character=fight.ysolde.character).dmg


# --- What a feint sets up -----------------------------------------------------------------


def test_it_helps_the_next_strike_after_a_feint_and_uses_the_feint_up(fight):
    first = feint(fight)
    assert (first["pro"], first["dif"], first["success"]) == (75, 10, True)  # FOC 1 + Melee 1
    assert fight.thug.conditions["feinted"]["by"] == fight.ysolde.pk
    result, entry = act(fight, "precise", defense="parry", roll=50)
    assert result["dif"] == 15  # SKL 3 alone
    assert not result["counterattack"]  # a parry without Melee earns none
    assert "The feint left no Melee defense." in entry.text
    assert "feinted" not in fight.thug.conditions
    again, _ = act(fight, "precise", defense="parry", roll=50)
    assert again["dif"] == 20 and again["counterattack"]


@pytest.mark.parametrize("maneuver", MANEUVERS)
@pytest.mark.parametrize("defense", ["dodge", "parry", "block"])
def test_it_helps_the_next_maneuver_after_a_feint_and_uses_the_feint_up(fight, maneuver, defense):
    feint(fight)
    result, entry = act(fight, maneuver, defense=defense, roll=50)
    assert result["dif"] == DIF[defense][1]
    assert "The feint left no Melee defense." in entry.text
    assert not result["counterattack"]
    assert "feinted" not in fight.thug.conditions
    assert fight.thug.counterattacks == 0


def test_it_meets_a_second_feint_with_focus_and_melee_in_full(fight):
    feint(fight)
    decl, _ = services.declare_attack(
        encounter=fight.encounter,
        attacker=fight.ysolde,
        target=fight.thug,
        action="feint",
        actor=fight.table.player,
    )
    assert services.declaration_odds(decl)["focus"]["pvd"] == "75v10"  # FOC 1 + Melee 1
    entry = services.resolve(declaration=decl, roll=50, actor=fight.table.player)
    assert entry.payload["result"]["dif"] == 10
    assert "feint left" not in entry.text
    fight.refresh()
    assert fight.thug.conditions["feinted"]["by"] == fight.ysolde.pk


def test_it_leaves_the_first_feint_waiting_when_a_second_one_fails(fight):
    feint(fight)
    second = feint(fight, roll=95)  # 75v10: a failure
    assert (second["dif"], second["success"]) == (10, False)
    assert fight.thug.conditions["feinted"]["by"] == fight.ysolde.pk
    result, _ = act(fight, "fast", defense="dodge", roll=43)
    assert result["dif"] == 10  # SPD 2 alone: the first feint still helped
    assert "feinted" not in fight.thug.conditions


# --- The defenses' effects against maneuvers ----------------------------------------------


@pytest.mark.parametrize("maneuver", MANEUVERS)
@pytest.mark.parametrize("melee", [True, False])
@pytest.mark.parametrize("roll", [50, 90])  # hit or miss: the parry earns it either way
def test_it_queues_a_counterattack_for_a_disciplined_parry_of_a_maneuver(
    fight, maneuver, melee, roll
):
    if not melee:
        without_melee(fight)
    result, entry = act(fight, maneuver, defense="parry", roll=roll)
    assert result["dif"] == DIF["parry"][0 if melee else 1]
    assert result["counterattack"] is melee
    assert fight.thug.counterattacks == (1 if melee else 0)
    assert ("gains a counterattack" in entry.text) is melee


@pytest.mark.parametrize("maneuver", MANEUVERS)
@pytest.mark.parametrize("melee", [True, False])
def test_it_wears_the_weapon_of_a_maneuver_a_disciplined_block_meets_on_a_dramatic_failure(
    fight, maneuver, melee
):
    if not melee:
        without_melee(fight)
    result, entry = act(fight, maneuver, defense="block", roll=11)  # below 25 and 20
    assert (result["dif"], result["degree"]) == (
        DIF["block"][0 if melee else 1],
        "dramatic_failure",
    )
    assert sword(fight) == (3 if melee else 4)
    assert result["weapon_wear"] == (1 if melee else 0)
    assert ("Long Sword loses 1 DMG." in entry.text) is melee
    assert fight.thug.counterattacks == 0


@pytest.mark.parametrize("maneuver", MANEUVERS)
def test_it_wears_nothing_when_a_blocked_maneuver_was_made_without_a_weapon(fight, maneuver):
    result, _ = act(fight, maneuver, defense="block", roll=11, weapon=False)
    assert result["degree"] == "dramatic_failure"
    assert (result["weapon_wear"], result["weapon_dmg_after"]) == (0, None)
    assert sword(fight) == 4


def test_it_wears_no_weapon_a_disarmed_attacker_no_longer_holds(fight):
    """Declared with the sword, disarmed before the roll: the block has nothing to wear."""
    gm = fight.table.gm
    decl = declare_and_defend(
        fight.encounter,
        fight.ysolde,
        fight.thug,
        action="stun",
        actor=gm,
        defender=gm,
        defense="block",
    )
    services.strike(
        encounter=fight.encounter,
        attacker=fight.thug,
        target=fight.ysolde,
        action="disarm",
        defense="dodge",
        roll=50,
        counterattack=False,
        actor=gm,
    )
    entry = services.resolve(declaration=decl, roll=11, actor=gm)
    assert entry.payload["result"]["degree"] == "dramatic_failure"
    assert entry.payload["result"]["weapon_wear"] == 0
    assert sword(fight) == 4


@pytest.mark.parametrize("maneuver", MANEUVERS)
@pytest.mark.parametrize("melee", [True, False])
def test_it_changes_nothing_but_a_stuns_damage_for_a_dodge(fight, maneuver, melee):
    if not melee:
        without_melee(fight)
    result, _ = act(fight, maneuver, defense="dodge", roll=43)
    assert (result["counterattack"], result["weapon_wear"]) == (False, 0)
    assert fight.thug.counterattacks == 0 and sword(fight) == 4
    if maneuver == "stun":
        # SUM 7 + DMG 4 = 11, minus leather 2 = 9; a disciplined dodge halves it to 4.
        assert [h["damage"] for h in result["hits"]] == [4 if melee else 9]


# --- Undo and Fate restore the new effects exactly ----------------------------------------


@pytest.mark.parametrize(
    ("maneuver", "defense", "roll"),
    [("disarm", "parry", 50), ("grapple", "parry", 90), ("stun", "block", 11)],
)
def test_it_undoes_a_maneuvers_counterattack_or_wear_exactly(fight, maneuver, defense, roll):
    before = snapshot(fight.encounter)
    act(fight, maneuver, defense=defense, roll=roll)
    assert (fight.thug.counterattacks, sword(fight)) != (0, 4)
    while (target := services.undo_target(fight.encounter)) is not None and (
        target.kind != CombatLogEntry.Kind.START
    ):
        services.undo_last(encounter=fight.encounter, actor=fight.table.gm)
    assert snapshot(fight.encounter) == before
    assert Participant.objects.get(pk=fight.thug.pk).counterattacks == 0 and sword(fight) == 4


@pytest.mark.parametrize(("defense", "roll"), [("parry", 50), ("block", 11)])
def test_it_takes_a_revoked_maneuvers_counterattack_or_wear_back(fight, defense, roll):
    _, entry = act(fight, "disarm", defense=defense, roll=roll)
    assert (fight.thug.counterattacks, sword(fight)) == ((1, 4) if defense == "parry" else (0, 3))
    services.spend_fate(
        entry=entry, spender=fight.ysolde, action="revoke", actor=fight.table.player
    )
    fight.refresh()
    assert (fight.thug.counterattacks, sword(fight)) == (0, 4)
    assert "disarmed" not in fight.thug.conditions
