"""Fight forecast for the OMG System: play one fight many times with the engine's own rules
and count how it goes, or, for a duel, walk every branch exactly.

Both sides follow one policy (docs/rules.md, "The fight forecast"): initiative by the rules,
each attacker picks the target, weapon, strike mode and zone with the best expected damage
against the defense that answers it best, the defender answers with that defense, a
disciplined parry earns a counterattack made before the round ends, and hits wear armor,
wound zones, cost Vitality and call for Stamina tests exactly as :mod:`rules.engine.omg` says.
Maneuvers are left out.

Speed comes from reading each strike from a table of its 100 faces, built once per pair of
engine inputs with :func:`rules.engine.omg.strike` itself, so the simulation rolls one d100
per strike and never re-implements the damage rules.

>>> knight = Combatant("k", "Knight", "party", spd=3, skl=4, vgr=4, melee=2, stm=7, bzf=12,
...                    vitality=11, zones=(ZoneIn("chest", arm=3),),
...                    weapons=(WeaponIn("long sword", dmg=4, dsc=2),), itv=12)
>>> thug = Combatant("t", "Thug", "foes", spd=2, skl=2, vgr=3, melee=0, stm=5, bzf=10,
...                  vitality=8, zones=(ZoneIn("chest"),),
...                  weapons=(WeaponIn("club", dmg=2),), itv=8)
>>> f = simulate([knight, thug], fights=400, seed=1)
>>> f.fights, f.party_standing > 0.9
(400, True)
>>> d = exact_duel(knight, thug)
>>> abs(d.party_standing - f.party_standing) < 0.05
True
"""

from __future__ import annotations

from rules.engine.forecast.duel import MAX_DUEL_STATES, DuelAbandoned, exact_duel
from rules.engine.forecast.fight import (
    DEFAULT_ROUND_LIMIT,
    MAX_COMBATANTS,
    MAX_FIGHTS,
    STAMINA_DIFFICULTY,
    UNARMED,
    Choice,
    Combatant,
    CombatantOdds,
    Forecast,
    GroupOdds,
    WeaponIn,
    ZoneIn,
    choose,
    face_table,
    verdict,
    wilson,
    wound,
)
from rules.engine.forecast.simulation import simulate

__all__ = [
    "DEFAULT_ROUND_LIMIT",
    "MAX_COMBATANTS",
    "MAX_DUEL_STATES",
    "MAX_FIGHTS",
    "STAMINA_DIFFICULTY",
    "UNARMED",
    "Choice",
    "Combatant",
    "CombatantOdds",
    "DuelAbandoned",
    "Forecast",
    "GroupOdds",
    "WeaponIn",
    "ZoneIn",
    "choose",
    "exact_duel",
    "face_table",
    "simulate",
    "verdict",
    "wilson",
    "wound",
]
