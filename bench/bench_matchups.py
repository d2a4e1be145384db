"""Cost of the matchup table (prep/matchups.py) as the defenders' BZF grows, on a throwaway
SQLite database. Run by hand: ``.venv/bin/python bench/bench_matchups.py``.

The prepared encounter of tests/prep (two thugs and a veteran against Ysolde and a farmhand);
both characters get the same BZF, up to the largest a sheet allows. Each size is timed as a
ratio to the BZF 20 table of the same run (a human's BZF is weight / 14, about 10 to 20), so a
slower or busier machine moves both. The page must answer within a second at any BZF.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")
os.environ["DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp()}/bench.sqlite3"

import django  # noqa: E402 - settings must be chosen first

django.setup()

from django.core.management import call_command  # noqa: E402

from prep import matchups, services  # noqa: E402
from prep.models import LibraryNpc, PreparedEncounter, PreparedGroup  # noqa: E402
from sheets.models import Character  # noqa: E402
from sheets.services import create_character  # noqa: E402
from tests.factories import (  # noqa: E402
    make_campaign,
    make_user,
    make_ysolde,  # noqa: E402
)

SIZES = (20, 500, 2000, 7000)
RUNS = 5


def prepared() -> PreparedEncounter:
    gm, player = make_user("gm"), make_user("player")
    campaign = make_campaign(gm, players=(player,), name="The Sunken Keep")
    ysolde = make_ysolde(campaign, player)
    farmhand = create_character(
        campaign=campaign, owner=player, name="Farmhand", weight=154,
        foc=1, spd=2, skl=1, vgr=3, nrv=1, chr=2, svy=1,
    )  # fmt: skip
    services.add_starter_set(owner=gm)
    library = {n.starter: n for n in LibraryNpc.objects.filter(owner=gm)}
    encounter = PreparedEncounter.objects.create(campaign=campaign, name="Ambush at the ford")
    encounter.expected.set([ysolde, farmhand])
    PreparedGroup.objects.create(prepared=encounter, npc=library["thug"], count=2)
    PreparedGroup.objects.create(prepared=encounter, npc=library["veteran"], count=1)
    return encounter


def timed(encounter: PreparedEncounter, bzf: int) -> float:
    Character.objects.filter(campaign=encounter.campaign).update(bzf=bzf)
    runs = []
    for _ in range(RUNS):
        start = time.perf_counter()
        matchups.matchup_table(encounter)
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def main() -> None:
    call_command("migrate", verbosity=0)
    encounter = prepared()
    timed(encounter, SIZES[0])  # warm up
    base = timed(encounter, SIZES[0])
    print(f"BZF {SIZES[0]:>5}: {base * 1000:7.1f} ms (baseline)")
    for bzf in SIZES[1:]:
        seconds = timed(encounter, bzf)
        print(f"BZF {bzf:>5}: {seconds * 1000:7.1f} ms  {seconds / base:5.1f}x the baseline")


if __name__ == "__main__":
    main()
