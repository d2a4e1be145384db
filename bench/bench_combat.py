"""Speed of the combat tracker's services on a throwaway SQLite database. Run by hand:
``.venv/bin/python bench/bench_combat.py``.

Measures one full attack (declare, defend, roll and apply), a GM undo, and the encounter page's
context for 2 and 20 participants, as milliseconds per operation (median of the runs). Then the
strike through the API: the three requests of one strike (POST
/api/encounters/{id}/attacks/, /api/attacks/{id}/defense/, /api/attacks/{id}/roll/) and the
same strike in one request (/api/encounters/{id}/strike/), their queries, and their
requests per second as a ratio to a bare locked-write view (one row locked
and written in a transaction, behind the same middleware and authentication) measured in the
same run. Rates count the CPU seconds of this process (SQLite runs in it, and commits wait on
no disk in WAL mode), so that other work on a shared machine does not skew the ratio (the
three are measured in turns, in slices); the wall-clock ratio is printed next to it. The
strikes' seconds hold their live pushes but not the reset between two strikes (the bench's
bookkeeping, reset()), and their queries are captured only for the strike that counts them.
The strike's ratio is held to a bar of 0.25x the bare view, and the output says PASS or
SHORT against it (the strike's queries are pinned by tests; its speed only here, since
timings vary from machine to machine).
``--queries`` lists the SQL of one strike; ``--api`` stops after the API's figures.
``--profile`` prints a cProfile of the three requests instead (sorted by cumulative time, or
by ``BENCH_SORT``: ``BENCH_SORT=tottime``).
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
from django.db import connection, transaction  # noqa: E402
from django.test import Client, RequestFactory  # noqa: E402
from django.test.utils import CaptureQueriesContext, override_settings  # noqa: E402
from django.urls import include, path  # noqa: E402
from rest_framework.decorators import api_view  # noqa: E402
from rest_framework.request import Request  # noqa: E402
from rest_framework.response import Response  # noqa: E402

from combat import services  # noqa: E402
from combat.models import Encounter, Participant  # noqa: E402
from combat.views import encounter_context  # noqa: E402
from live.pusher import flush_pushes  # noqa: E402
from sheets.models import BodyZone, Character  # noqa: E402
from tests.factories import make_campaign, make_thug, make_user, make_ysolde  # noqa: E402  # noqa: E402

RUNS = 200
#: The strike's requests per second must be at least this share of the bare view's (CPU
#: seconds): printed as PASS or SHORT, by hand, never asserted by a test (timings vary).
BAR = 0.25
API_SECONDS = 3.0
SLICES = 6


@api_view(["POST"])
def locked_write(request: Request, pk: int) -> Response:
    """The floor of a write request: authenticate, lock one row, write it, answer JSON."""
    with transaction.atomic():
        enc = Encounter.objects.select_for_update().get(pk=pk)
        Encounter.objects.filter(pk=enc.pk).update(round=enc.round)
    return Response({"id": enc.pk})


urlpatterns = [
    path("bench/locked-write/<int:pk>/", locked_write),
    path("", include("config.urls")),
]


def ms(samples: list[float]) -> str:
    p95 = sorted(samples)[int(len(samples) * 0.95)]
    return f"{statistics.median(samples) * 1000:.2f} ms (p95 {p95 * 1000:.2f})"


def strike(
    client: Client,
    enc: int,
    y: int,
    t: int,
    zone: int,
    weapon: int,
    i: int,
    counts: list[int] | None = None,
) -> None:
    """One strike through the API: declare, defend, roll. With ``counts``, the queries of
    each of the three requests are appended to it."""
    steps = [
        (
            f"/api/encounters/{enc}/attacks/",
            {"attacker": y, "target": t, "action": "fast", "zone": zone, "weapon": weapon},
            201,
        ),
        ("/api/attacks/{attack}/defense/", {"defense": "parry"}, 200),
        ("/api/attacks/{attack}/roll/", {"roll": 1 + i % 100}, 200),
    ]
    attack = None
    for url, body, status in steps:
        if counts is None:
            # Not captured when not counted: capturing logs every statement, a cost of the
            # bench's own that the bare view does not pay.
            r = client.post(url.format(attack=attack), body, content_type="application/json")
        else:
            with CaptureQueriesContext(connection) as queries:
                r = client.post(url.format(attack=attack), body, content_type="application/json")
            counts.append(len(queries))
        assert r.status_code == status, r.content[:300]
        attack = attack or r.json()["id"]


def one_call(client: Client, enc: int, y: int, t: int, zone: int, weapon: int, i: int) -> None:
    """The same strike in one request (POST /api/encounters/{id}/strike/)."""
    body = {"attacker": y, "target": t, "action": "fast", "zone": zone, "weapon": weapon}
    r = client.post(
        f"/api/encounters/{enc}/strike/",
        {**body, "defense": "parry", "roll": 1 + i % 100},
        content_type="application/json",
    )
    assert r.status_code == 201, r.content[:300]


def reset(encounter: Encounter) -> None:
    """A successful parry gives the target a counterattack, at most 100 (a check
    constraint), and hits wear the target down until it cannot defend: between strikes,
    outside the requests, hand the counterattacks back and heal everyone."""
    Participant.objects.filter(encounter=encounter).update(
        counterattacks=0, state=Participant.State.ACTIVE
    )
    for pk, vitality in START_VITALITY.items():
        Character.objects.filter(pk=pk).update(vitality=vitality)
    BodyZone.objects.filter(character__in=START_VITALITY).update(wounds=0)


#: Each fighter's Vitality before the first strike (reset() gives it back).
START_VITALITY: dict[int, int] = {}


def api_strikes(
    gm: object,
    encounter: Encounter,
    y: Participant,
    t: Participant,
    zone: int,
    weapon: int,
    profile: bool,
) -> None:
    client = Client()
    client.force_login(gm)  # type: ignore[arg-type]  # a User
    args = (encounter.pk, y.pk, t.pk, zone, weapon)
    with override_settings(ROOT_URLCONF=__name__, ALLOWED_HOSTS=["testserver"], DEBUG=False):
        strike(client, *args, 0)  # warm up
        counts: list[int] = []
        with CaptureQueriesContext(connection) as queries:
            strike(client, *args, 1, counts)
        declare, defend, roll = counts
        print(
            f"queries per strike (3 requests):  {len(queries)}"
            f" (declare {declare}, defend {defend}, roll {roll})"
        )
        reset(encounter)
        with CaptureQueriesContext(connection) as single:
            one_call(client, *args, 2)
        reset(encounter)
        print(f"queries per one-call strike:      {len(single)}")
        if "--queries" in sys.argv:
            for q in queries.captured_queries:
                print("   ", q["sql"][:160])
        if profile:
            import cProfile
            import pstats

            prof = cProfile.Profile()
            for i in range(100):
                prof.enable()
                strike(client, *args, i)
                flush_pushes()
                prof.disable()
                reset(encounter)
            order = os.environ.get("BENCH_SORT", "cumulative")
            pstats.Stats(prof).sort_stats(order).print_stats(45)
            return

        totals: dict[object, list[float]] = {}
        #: The CPU and wall-clock seconds of the resets in the current slice (left out).
        aside = [0.0, 0.0]

        def rate(step: object) -> None:
            """One slice of API_SECONDS / SLICES of this process's CPU time on ``step``,
            added to its totals (requests, CPU seconds, wall-clock seconds), the resets
            between strikes left out."""
            aside[:] = [0.0, 0.0]
            n, cpu, wall = 0, time.process_time(), time.perf_counter()
            while time.process_time() - cpu - aside[0] < API_SECONDS / SLICES:
                n += step(n)  # type: ignore[operator]  # each step is a callable
            done = totals.setdefault(step, [0, 0.0, 0.0])
            done[0] += n
            done[1] += time.process_time() - cpu - aside[0]
            done[2] += time.perf_counter() - wall - aside[1]

        def between() -> None:
            """reset() after a strike, outside its measure: the bench's bookkeeping, not the
            strike's work. The strike's live pushes go out first (flush_pushes), so that
            their CPU time counts with the strike that sent them."""
            flush_pushes()
            cpu, wall = time.process_time(), time.perf_counter()
            reset(encounter)
            aside[0] += time.process_time() - cpu
            aside[1] += time.perf_counter() - wall

        def bare(_: int) -> int:
            r = client.post(f"/bench/locked-write/{encounter.pk}/")
            assert r.status_code == 200, r.content[:300]
            return 1

        def three(n: int) -> int:
            strike(client, *args, n)
            between()
            return 3

        def one(n: int) -> int:
            one_call(client, *args, n)
            between()
            return 1

        # The three are measured in turns, slice after slice, so that a change in the load
        # of a shared machine weighs on each alike.
        for _ in range(SLICES):
            for step in (bare, three, one):
                rate(step)
        (floor, floor_wall), (api, api_wall), (once, once_wall) = (
            (n / cpu, n / wall) for n, cpu, wall in (totals[s] for s in (bare, three, one))
        )
        print(f"bare locked-write view:           {floor:.0f} requests/s")
        print(
            f"strike requests:                  {api:.0f} requests/s"
            f" = {api / floor:.2f}x the bare view (wall clock {api_wall / floor_wall:.2f}x)"
        )
        verdict = "PASS" if api / floor >= BAR else "SHORT"
        print(f"the bar, {BAR:.2f}x the bare view:     {verdict} at {api / floor:.3f}x")
        print(
            f"one-call strikes:                 {once:.0f} requests/s"
            f" = {once / floor:.2f}x the bare view,"
            f" {once / (api / 3):.1f}x the strikes/s of three requests"
            f" (wall clock {once_wall / floor_wall:.2f}x)"
        )


def main() -> None:
    profile = "--profile" in sys.argv
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
    START_VITALITY.update((p.character_id, p.character.vitality) for p in (y, t))

    api_strikes(gm, encounter, y, t, zone.pk, weapon.pk, profile)
    if profile or "--api" in sys.argv:
        return

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
            encounter_context(request, encounter)  # type: ignore[arg-type]  # a signed-in request built by hand
            samples.append(time.perf_counter() - start)
        print(f"page context, {size:2d} participants:    {ms(samples)}")


if __name__ == "__main__":
    main()
