"""The matchup table against the rules engine: every number recomputed here from the engine's
own Attacker, Defender and strike_odds, with the expected hits to pass BZF summed over the
distribution of wounds after k hits (a different method from the table's recursion)."""

from __future__ import annotations

import time
from fractions import Fraction

import pytest
from django.urls import reverse

from prep import matchups
from rules.engine import odds, omg

pytestmark = pytest.mark.django_db


def expected_hits_by_convolution(per_hit: dict[int, Fraction], bzf: int) -> float:
    """E[N] = sum over k >= 0 of P(the first k hits leave the zone at BZF or under)."""
    total, dist = 0.0, {0: Fraction(1)}
    for _ in range(10_000):
        still = sum(p for w, p in dist.items() if w <= bzf)
        if still < Fraction(1, 10**12):
            break
        total += float(still)
        nxt: dict[int, Fraction] = {}
        for w, p in dist.items():
            if w > bzf:
                continue
            for d, q in per_hit.items():
                nxt[w + d] = nxt.get(w + d, Fraction(0)) + p * q
        dist = nxt
    return total


def engine_cell(strike, apt, dsc, dmg, bonus, defense, d_apt, melee, arm, arm_bonus, bzf):
    """hit, second hit, damage per hit and hits to pass BZF straight from the engine."""
    so = odds.strike_odds(
        omg.Attacker(strike, apt, dsc, dmg, bonus),
        omg.Defender(defense, d_apt, melee, arm, arm_bonus),
    )
    hits = 100 - so.first_miss
    per_hit = {d: Fraction(n - (so.first_miss if d == 0 else 0), hits) for d, n in so.first.items()}
    per_hit = {d: p for d, p in per_hit.items() if p}
    mean = sum(d * p for d, p in per_hit.items())
    second = so.check.second_hit if (strike == "fast" and dsc) else 0
    return so.check.hits, second, mean, expected_hits_by_convolution(per_hit, bzf)


def find(rows, attacker, weapon, defender):
    [row] = [
        r
        for r in rows
        if (r["attacker"], r["weapon"], r["defender"]) == (attacker, weapon, defender)
    ]
    return row


def check_row(row, *, a, weapon, d, zones):
    """``a``: attacker aptitudes by strike and weapon discipline level; ``d``: defender
    aptitudes by defense, Melee Combat level and BZF; ``zones``: (name, ARM, bonus)."""
    for strike in ("fast", "precise", "mighty"):
        for defense in ("dodge", "parry", "block"):
            cell = row["cells"][strike][defense]
            assert [(z["zone"], z["protection"]) for z in cell["zones"]] == [
                (name, arm + bonus if arm else 0) for name, arm, bonus in zones
            ]
            for z, (_, arm, bonus) in zip(cell["zones"], zones, strict=True):
                hit, second, mean, hits = engine_cell(
                    strike,
                    a[strike],
                    a["dsc"],
                    weapon[0],
                    weapon[1],
                    defense,
                    d[defense],
                    d["melee"],
                    arm,
                    bonus,
                    d["bzf"],
                )
                assert cell["hit"] == hit, (strike, defense)
                assert cell["second_hit"] == second
                assert z["damage_per_hit"] == round(float(mean), 2)
                assert z["hits_to_bzf"] == pytest.approx(hits, abs=0.006)


def test_npcs_against_characters_and_back(prep):
    table = matchups.table_as_dict(matchups.matchup_table(prep.prepared))
    ysolde = {"dodge": 3, "parry": 4, "block": 5, "melee": 2, "bzf": 12}
    ysolde_zones = [("head", 0, 0), ("chest", 2, 0)]
    thug_att = {"fast": 2, "precise": 3, "mighty": 4, "dsc": 2}
    # The thug (Weapon Mastery IV 2, hatchet DMG 4) against Ysolde (Melee Combat 2; leather
    # everywhere but the head).
    row = find(table["npc_attacks"], "Thug", "Hatchet", "Ysolde Varr")
    assert row["attacker_hidden"] is True and row["defender_hidden"] is False
    check_row(row, a=thug_att, weapon=(4, 0), d=ysolde, zones=ysolde_zones)
    # The veteran's dagger (Weapon Mastery I: none) is an undisciplined strike.
    veteran_dagger = {"fast": 3, "precise": 4, "mighty": 3, "dsc": 0}
    row = find(table["npc_attacks"], "Veteran", "Dagger or Bowie", "Ysolde Varr")
    check_row(row, a=veteran_dagger, weapon=(2, 0), d=ysolde, zones=ysolde_zones)
    # The farmhand has no weapon, no discipline and no armor: unarmed against the veteran
    # (Melee Combat 2; Studded Leather on the arms, ARM 3, up to Ring mail on the head,
    # ARM 4), and the thug's hatchet against the farmhand's undisciplined defense.
    farmhand = {"dodge": 2, "parry": 1, "block": 3, "melee": 0, "bzf": 11}
    row = find(table["npc_attacks"], "Thug", "Hatchet", "Farmhand")
    check_row(row, a=thug_att, weapon=(4, 0), d=farmhand, zones=[("head", 0, 0)])
    row = find(table["character_attacks"], "Farmhand", "unarmed", "Veteran")
    check_row(
        row,
        a={"fast": 2, "precise": 1, "mighty": 3, "dsc": 0},
        weapon=(0, 0),
        d={"dodge": 3, "parry": 4, "block": 3, "melee": 2, "bzf": 14},
        zones=[("left arm", 3, 0), ("head", 4, 0)],
    )
    # Ysolde's long sword (Weapon Mastery III 3) against the thug, who has no Melee Combat.
    row = find(table["character_attacks"], "Ysolde Varr", "Long Sword", "Thug")
    assert row["defender_hidden"] is True
    check_row(
        row,
        a={"fast": 3, "precise": 4, "mighty": 5, "dsc": 3},
        weapon=(4, 0),
        d={"dodge": 2, "parry": 3, "block": 4, "melee": 0, "bzf": 13},
        zones=[("head", 0, 0), ("chest", 1, 0)],
    )
    assert {r["attacker"] for r in table["npc_attacks"]} == {"Thug", "Veteran"}
    assert {r["defender"] for r in table["character_attacks"]} == {"Thug", "Veteran"}


def test_armor_bonus_and_a_beast_with_its_own_zones(prep):
    prep.prepared.groups.all().delete()
    prep.prepared.groups.create(npc=prep.library["wolf"], count=3)
    prep.ysolde.zones.filter(name="chest").update(arm_bonus=2)
    table = matchups.table_as_dict(matchups.matchup_table(prep.prepared))
    row = find(table["npc_attacks"], "Wolf", "Bite", "Ysolde Varr")
    check_row(
        row,
        a={"fast": 4, "precise": 2, "mighty": 3, "dsc": 2},
        weapon=(2, 0),
        d={"dodge": 3, "parry": 4, "block": 5, "melee": 2, "bzf": 12},
        zones=[("head", 0, 0), ("chest", 2, 2)],
    )
    row = find(table["character_attacks"], "Ysolde Varr", "Long Sword", "Wolf")
    check_row(
        row,
        a={"fast": 3, "precise": 4, "mighty": 5, "dsc": 3},
        weapon=(4, 0),
        d={"dodge": 4, "parry": 2, "block": 3, "melee": 1, "bzf": 7},
        zones=[("head", 0, 0), ("body", 1, 0)],
    )


def test_hits_to_pass_is_exact_on_a_small_case():
    # Each hit deals 0 or 2 with even odds; BZF 3: wounds must reach 4, two damaging hits.
    per_hit = {0: Fraction(1, 2), 2: Fraction(1, 2)}
    assert matchups.hits_to_pass(per_hit, bzf=3) == 4
    assert matchups.hits_to_pass({0: Fraction(1)}, bzf=3) is None
    assert matchups.hits_to_pass({5: Fraction(1)}, bzf=3, wounds=0) == 1
    assert matchups.hits_to_pass({1: Fraction(1)}, bzf=3, wounds=2) == 2


def test_the_page_shows_the_same_numbers_to_the_gm(prep):
    table = matchups.table_as_dict(matchups.matchup_table(prep.prepared))
    page = prep.client("gm").get(reverse("prep:prepared_matchups", args=[prep.prepared.pk]))
    html = page.content.decode()
    cell = find(table["npc_attacks"], "Thug", "Hatchet", "Ysolde Varr")["cells"]["mighty"]["block"]
    assert f"{cell['hit']}%" in html and cell["pvd"] in html
    assert html.count('data-testid="npc-attacks"') == len(table["npc_attacks"])
    assert html.count('data-testid="character-attacks"') == len(table["character_attacks"])


def test_an_empty_side_shows_a_hint(prep):
    prep.prepared.expected.clear()
    page = prep.client("gm").get(reverse("prep:prepared_matchups", args=[prep.prepared.pk]))
    assert 'data-testid="matchups-empty"' in page.content.decode()


def test_the_glance_gives_each_pair_its_best_strike_against_the_best_answer(prep):
    """The overview's number for a pair is the strike mode whose worst case over the three
    defenses is highest (the defender answers a declared strike), taken from the full
    card's own cells; it links to that card."""
    table = matchups.matchup_table(prep.prepared)
    html = (
        prep.client("gm")
        .get(reverse("prep:prepared_matchups", args=[prep.prepared.pk]))
        .content.decode()
    )
    for testid, rows in (
        ("npc-attacks", table.npc_attacks),
        ("character-attacks", table.character_attacks),
    ):
        cards = matchups.table_as_dict(table)[testid.replace("-", "_")]
        glance = matchups.glance(rows)
        assert [d.label for d in glance.defenders] == list(
            dict.fromkeys(card["defender"] for card in cards)
        )
        seen = 0
        for attacker, weapon, cells in glance.lines:
            for defender, entry in zip(glance.defenders, cells, strict=True):
                row, index = entry
                card = cards[index - 1]
                assert (card["attacker"], card["weapon"], card["defender"]) == (
                    attacker.label,
                    weapon,
                    defender.label,
                )
                worst = {s: min(c["hit"] for c in by.values()) for s, by in card["cells"].items()}
                best = max(worst.values())
                strike = next(s for s, w in worst.items() if w == best)
                assert row.best == (strike, best)
                assert card["best"] == {"strike": strike, "hit": best}
                assert f'href="#{testid}-{index}"><strong>{best}%</strong>' in html
                assert f'id="{testid}-{index}"' in html
                seen += 1
        assert seen == len(cards)


def exact_hits_to_pass(per_hit: dict[int, Fraction], bzf: int) -> Fraction:
    """The table's exact recursion from the top down, at any headroom (slow at large BZF)."""
    p0 = per_hit.get(0, Fraction(0))
    f: dict[int, Fraction] = {}
    for w in range(bzf, -1, -1):
        f[w] = (1 + sum(p * f.get(w + d, Fraction(0)) for d, p in per_hit.items() if d)) / (1 - p0)
    return f[0]


def engine_per_hit(strike, apt, dsc, dmg, bonus, defense, d_apt, melee, arm):
    so = odds.strike_odds(
        omg.Attacker(strike, apt, dsc, dmg, bonus), omg.Defender(defense, d_apt, melee, arm, 0)
    )
    hits = 100 - so.first_miss
    per_hit = {d: Fraction(n - (so.first_miss if d == 0 else 0), hits) for d, n in so.first.items()}
    return {d: p for d, p in per_hit.items() if p}


@pytest.mark.parametrize(
    "per_hit",
    [
        engine_per_hit("mighty", 4, 2, 5, 1, "parry", 3, 2, 2),
        engine_per_hit("fast", 2, 0, 1, 0, "dodge", 4, 3, 0),
        engine_per_hit("precise", 3, 1, 2, 0, "block", 2, 1, 3),
        {0: Fraction(1, 2), 2: Fraction(1, 2)},  # every damage even: the limit on evens only
        {1: Fraction(1, 100), 2: Fraction(99, 100)},  # close to periodic: slow to settle
        {7: Fraction(1)},
    ],
)
def test_it_gives_the_exact_numbers_shown_past_the_exact_headroom(per_hit):
    """Past EXACT_HEADROOM wounds the sum is a float up to the renewal limit: the same numbers
    as the exact recursion to far more places than the page (one) or the API (two) shows."""
    for bzf in (matchups.EXACT_HEADROOM + 1, 150, 333, 600):
        new = matchups.hits_to_pass(per_hit, bzf=bzf)
        exact = exact_hits_to_pass(per_hit, bzf)
        assert isinstance(new, float)
        assert new == pytest.approx(float(exact), abs=1e-9)
        assert round(new, 2) == round(float(exact), 2)
    below = matchups.hits_to_pass(per_hit, bzf=matchups.EXACT_HEADROOM)
    assert below == exact_hits_to_pass(per_hit, matchups.EXACT_HEADROOM)  # still a Fraction


def test_it_answers_the_largest_allowed_bzf_within_a_second(prep):
    """The cost no longer grows with BZF: a table whose characters have the largest BZF a
    sheet allows takes about what a human's BZF takes (it took minutes when every wound up to
    BZF was summed in fractions). bench/bench_matchups.py times it against BZF 20. The bound
    is this process's CPU time, not the wall clock, which a loaded machine stretches."""
    largest = 7_000
    prep.campaign.characters.update(bzf=largest)
    start = time.process_time()
    table = matchups.table_as_dict(matchups.matchup_table(prep.prepared))
    assert time.process_time() - start < 1.0
    row = find(table["npc_attacks"], "Thug", "Hatchet", "Ysolde Varr")
    hits = row["cells"]["mighty"]["block"]["zones"][0]["hits_to_bzf"]
    assert 100 < hits < largest  # many hits, each dealing at least one wound
