"""Exact odds for the OMG System, counted over the 100 faces of a d100.

Plain enumeration of the hundred faces is exact and, cached, answers in about a microsecond;
counts are whole numbers out of 100 (a count is also a percentage).

>>> o = check_odds(70, 20)
>>> o.counts["success"], o.counts["dramatic_failure"], o.counts["success_with_sacrifice"]
(44, 1, 4)
>>> o.second_hit, o.hits
(25, 54)
>>> s = strike_odds(Attacker("precise", 4, 3, weapon_dmg=4), Defender("parry", 4, 2, arm=5))
>>> s.pro, s.dif, s.first[0], max(s.first)
(85, 30, 42, 24)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import cache, lru_cache
from types import MappingProxyType

from rules.engine import dice
from rules.engine.omg_check import (
    DIF_MAX,
    DIF_MIN,
    PRO_MAX,
    PRO_MIN,
    Degree,
    checked_degree,
    checked_second_hit,
)
from rules.engine.omg_combat import (
    Attacker,
    Defender,
    DefenseMode,
    StrikeMode,
    damage_chain,
    parse_defense_mode,
    parse_strike_mode,
)

__all__ = ["FACES", "CheckOdds", "StrikeOdds", "check_odds", "damage_odds", "strike_odds"]

#: Every count in this module is out of this many equally likely faces.
FACES = 100
_SUMS: dict[int, int] = {r: dice.digit_sum(r) for r in dice.D100_FACES}


@dataclass(frozen=True, slots=True)
class CheckOdds:
    """Faces (out of 100) giving each degree at ``pro`` v ``dif``. ``hits`` counts every kind
    of success; ``second_hit`` the faces on which a disciplined fast strike lands its second
    attack too."""

    pro: int
    dif: int
    counts: Mapping[Degree, int]
    hits: int
    second_hit: int

    def as_dict(self) -> dict[str, object]:
        """JSON-ready: ``{"pro": 70, "dif": 20, "counts": {"success": 44, ...}, ...}``."""
        return {
            "pro": self.pro,
            "dif": self.dif,
            "counts": {d.value: n for d, n in self.counts.items()},
            "hits": self.hits,
            "second_hit": self.second_hit,
        }


def check_odds(pro: int, dif: int) -> CheckOdds:
    """Exact degree counts for a PvD (PRO 55..100, DIF 5..50).

    >>> dict(check_odds(100, 5).counts) == {
    ...     "success": 85, "failure": 4, "dramatic_success": 9, "dramatic_failure": 0,
    ...     "epic_success": 1, "epic_failure": 1, "success_with_sacrifice": 0}
    True
    """
    return _check_odds(
        dice.require_int("PRO", pro, PRO_MIN, PRO_MAX),
        dice.require_int("DIF", dif, DIF_MIN, DIF_MAX),
    )


@cache
def _check_odds(p: int, d: int) -> CheckOdds:
    counts = dict.fromkeys(Degree, 0)
    second = 0
    for r in dice.D100_FACES:
        counts[checked_degree(r, p, d)] += 1
        second += checked_second_hit(r, p, d)[1]
    hits = sum(n for degree, n in counts.items() if degree.success)
    return CheckOdds(p, d, MappingProxyType(counts), hits, second)


@dataclass(frozen=True, slots=True)
class StrikeOdds:
    """Exact damage distributions of a strike, each a mapping ``damage -> faces`` summing to
    100 (faces where the attack misses count as 0 damage; ``first_miss`` / ``second_miss``
    say how many). ``second`` is ``None`` when the strike has no second attack (anything
    but a disciplined fast strike). ``total`` is the damage of both hits together, armor
    worn by the first counted against the second."""

    pro: int
    dif: int
    check: CheckOdds
    first: Mapping[int, int]
    first_miss: int
    second: Mapping[int, int] | None
    second_miss: int
    total: Mapping[int, int]

    @property
    def mean_damage(self) -> Fraction:
        """Exact expected total damage per strike."""
        return Fraction(sum(dmg * n for dmg, n in self.total.items()), FACES)

    def as_dict(self) -> dict[str, object]:
        """JSON-ready (damage keys stay integers; a JSON encoder turns them into strings)."""
        return {
            "pro": self.pro,
            "dif": self.dif,
            "first": dict(self.first),
            "first_miss": self.first_miss,
            "second": None if self.second is None else dict(self.second),
            "second_miss": self.second_miss,
            "total": dict(self.total),
            "mean_damage": float(self.mean_damage),
        }


# Bounded: strike inputs have millions of combinations and the API is public.
@lru_cache(maxsize=4096)
def strike_odds(attacker: Attacker, defender: Defender) -> StrikeOdds:
    """Exact damage distributions for ``attacker`` against ``defender`` (cached).

    A disciplined fast strike at 70v20 (SPD 3 + DSC 1) with a knife against an unarmored
    block:

    >>> s = strike_odds(Attacker("fast", 3, 1, weapon_dmg=1), Defender("block", 2, 2))
    >>> s.pro, s.dif, s.first_miss, s.second_miss
    (70, 20, 46, 75)
    >>> sum(s.first.values()), sum(s.second.values()), sum(s.total.values())
    (100, 100, 100)
    """
    p, d = attacker.pro, defender.dif
    has_second = attacker.fast
    # Damage depends on the face only through its SUM (2..20): price each SUM once.
    chains = {
        total: damage_chain(attacker, defender, total, 2 if has_second else 1)
        for total in range(2, 21)
    }
    first: Counter[int] = Counter()
    second: Counter[int] = Counter()
    total: Counter[int] = Counter()
    first_miss = second_miss = 0
    for r in dice.D100_FACES:
        chain = chains[_SUMS[r]]
        damage = 0
        if checked_degree(r, p, d).success:
            first[chain[0][2]] += 1
            damage = chain[0][2]
        else:
            first_miss += 1
            first[0] += 1
        if has_second and checked_second_hit(r, p, d)[1]:
            second[chain[1][2]] += 1
            damage += chain[1][2]
        else:
            second_miss += 1
            second[0] += 1
        total[damage] += 1
    return StrikeOdds(
        pro=p,
        dif=d,
        check=_check_odds(p, d),
        first=MappingProxyType(dict(sorted(first.items()))),
        first_miss=first_miss,
        second=MappingProxyType(dict(sorted(second.items()))) if has_second else None,
        second_miss=second_miss if has_second else FACES,
        total=MappingProxyType(dict(sorted(total.items()))),
    )


def damage_odds(
    *,
    strike: StrikeMode | str,
    attack_apt: int,
    attack_dsc: int = 0,
    weapon_dmg: int = 0,
    weapon_bonus: int = 0,
    defense: DefenseMode | str,
    defense_apt: int,
    defense_dsc: int = 0,
    arm: int = 0,
    arm_bonus: int = 0,
) -> StrikeOdds:
    """:func:`strike_odds` from flat fields, named like the strike endpoint's body.

    >>> damage_odds(strike="mighty", attack_apt=5, attack_dsc=3, weapon_dmg=4,
    ...             defense="block", defense_apt=5, defense_dsc=2).first_miss
    43
    """
    attacker = Attacker(parse_strike_mode(strike), attack_apt, attack_dsc, weapon_dmg, weapon_bonus)
    defender = Defender(parse_defense_mode(defense), defense_apt, defense_dsc, arm, arm_bonus)
    return strike_odds(attacker, defender)
