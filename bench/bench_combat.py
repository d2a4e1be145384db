"""Speed of the combat tracker's services on a throwaway SQLite database. Run by hand:
``.venv/bin/python bench/bench_combat.py``.

Measures one full attack (declare, defend, roll and apply), a GM undo, and the encounter page's
context for 2 and 20 participants, as milliseconds per operation (median of the runs).
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
from django.test import RequestFactory  # noqa: E402

from combat import services  # noqa: E402
from combat.models import Participant  # noqa: E402
from combat.views import encounter_context  # noqa: E402
from tests.combat.conftest import make_thug, make_ysolde  # noqa: E402
from tests.factories import make_campaign, make_user  # noqa: E402

RUNS = 200


def ms(samples: list[float]) -> str:
    p95 = sorted(samples)[int(len(samples) * 0.95)]
    return f"{statistics.median(samples) * 1000:.2f} ms (p95 {p95 * 1000:.2f})"


def main() -> None:
    call_command("migrate", verbosity=0)
    gm, player = make_user("bench-gm"), make_user("bench-player")
    campaign = make_campaign(gm, players=(player,))
    ysolde = make_ysolde(campaign, player)
    npc = make_thug(campaign, gm)
    encounter, _ = services.create_encounter(campaign=campaign, name="Bench", actor=gm)
    services.add_participants(encounter=encounter, characters=[ysolde], actor=gm)
    services.add_npc_copies(encounter=encounter, npc=npc, count=1, actor=gm)
    services.start_encounter(encounter=encounter, actor=gm)
    y = Participant.objects.get(encounter=encounter, character=ysolde)
    t = Participant.objects.exclude(pk=y.pk).get(encounter=encounter)
    zone = t.character.zones.get(name="chest")
    weapon = ysolde.weapons.get()

    attack, undo = [], []
    for i in range(RUNS):
        start = time.perf_counter()
        decl, _ = services.declare_attack(
            encounter=encounter,
            attacker=y,
            target=t,
            action="fast",
            zone=zone,
            weapon=weapon,
            actor=gm,
        )
        services.declare_defense(declaration=decl, defense="parry", actor=gm)
        services.resolve(declaration=decl, roll=1 + i % 100, actor=gm)
        attack.append(time.perf_counter() - start)
        start = time.perf_counter()
        services.undo_last(encounter=encounter, actor=gm)
        undo.append(time.perf_counter() - start)
        services.cancel_declaration(declaration=decl, actor=gm)
    print(f"attack (declare + defend + roll): {ms(attack)}")
    print(f"undo:                             {ms(undo)}   (log of {encounter.log.count()})")

    request = RequestFactory().get("/")
    for size in (2, 20):
        missing = size - encounter.participants.count()
        if missing > 0:
            services.add_npc_copies(encounter=encounter, npc=npc, count=missing, actor=gm)
        request.user = gm
        samples = []
        for _ in range(50):
            start = time.perf_counter()
            encounter_context(request, encounter)
            samples.append(time.perf_counter() - start)
        print(f"page context, {size:2d} participants:    {ms(samples)}")


if __name__ == "__main__":
    main()
