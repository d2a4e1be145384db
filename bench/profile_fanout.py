"""Profile of the live feed's work for one event and many open pages.

Run by hand: ``.venv/bin/python bench/profile_fanout.py [viewers]`` (default 100). On a
throwaway SQLite database with the demo table, ``viewers`` pages (the GM's and both players'
in turn) follow a running encounter; the GM passes the turn, and the work every page's share
of that event costs is profiled with cProfile: wall time, queries, and the functions that
take the most time: ``broadcast.fan_out``, the broadcaster's one pass per event.

``bench/profile_fanout.py [viewers] display`` compares instead the pass for ``viewers`` pages,
the same with one table display open (combat/display.py), with one more page of an audience
already drawn, and with one more page drawn on its own: the best of several passes over the
same event each, printed as ratios to the first (the machine's speed cancels out), with the
queries of each. A display should cost no more than one more player's page does.
"""

from __future__ import annotations

import cProfile
import os
import pstats
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from combat.models import Encounter

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    viewers = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    with_display = "display" in sys.argv[2:]
    tmp = tempfile.mkdtemp(prefix="omg-profile-")
    os.environ.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DATABASE_URL=f"sqlite:///{tmp}/db.sqlite3",
        REDIS_URL="",
        DEBUG="1",  # static files from the app folders, no collectstatic
        SECRET_KEY=secrets.token_urlsafe(50),
    )
    for command in (["migrate", "--noinput"], ["demo"]):
        subprocess.run(
            [sys.executable, "manage.py", *command], cwd=ROOT, check=True, capture_output=True
        )
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from bench.bench_load import new_fight
    from combat import services
    from combat.live import broadcast
    from combat.models import Encounter

    users = get_user_model().objects
    people = [users.get(username=u) for u in ("gm", "alice", "bob")]
    encounter = Encounter.objects.get(pk=new_fight("Profile")["encounter"])
    gm = people[0]
    pages = [people[i % 3] for i in range(viewers)]

    marks: dict[str, float] = {}
    sizes: dict[str, int] = {}

    def early(ready: dict[broadcast.Subscriber, list[str]]) -> None:
        marks["early"] = time.perf_counter()

    def one_event() -> None:
        subscribers = [broadcast.Subscriber(u, after, None, greeted=True) for u in pages]  # type: ignore[arg-type]  # no queue: the pass only writes it
        out = broadcast.fan_out(encounter, subscribers, early=early)
        for s in subscribers[:3]:
            sizes[s.user.get_username()] = sum(len(c.encode()) for c in out[s])

    if with_display:
        compare_display(encounter, gm, pages)
        subprocess.run(["rm", "-rf", tmp])
        return

    for _ in range(3):  # warm up: templates compiled, caches filled
        after = broadcast.latest_entry_id(encounter)
        services.next_turn(encounter=encounter, actor=gm)
        one_event()
    after = broadcast.latest_entry_id(encounter)
    services.next_turn(encounter=encounter, actor=gm)
    profiler = cProfile.Profile()
    with CaptureQueriesContext(connection) as queries:
        started = time.perf_counter()
        profiler.enable()
        one_event()
        profiler.disable()
        elapsed = time.perf_counter() - started
    took = f"{elapsed * 1000:.0f} ms, {len(queries)} queries"
    print(f"broadcast.fan_out, one event, {viewers} pages: {took}")
    if "early" in marks:
        print(f"  the entries ready after {(marks['early'] - started) * 1000:.0f} ms")
        print(f"  bytes after the entries, per stream: {sizes}")
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(18)
    subprocess.run(["rm", "-rf", tmp])


def compare_display(encounter: Encounter, gm: User, pages: list[Any]) -> None:
    """One event's pass for the pages; the pages and one display; the pages and one more
    page of an audience they already hold (a player who owns no hidden fighter: the shared
    render); the pages and one more page drawn on its own (a player whose fighter is hidden,
    who sees its numbers): a display should cost no more than the last."""
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from combat import display, services
    from combat.live import broadcast
    from sheets.models import Membership
    from sheets.services import create_character

    campaign = encounter.campaign
    # A player of their own: their fighter is hidden, so their page is drawn for them alone.
    carol = get_user_model().objects.create_user("carol-profile")
    Membership.objects.create(campaign=campaign, user=carol)
    scout = create_character(
        campaign=campaign, owner=carol, name="Carol's Scout", weight=150, itv=8, spd=3, vgr=3
    )
    services.add_participants(encounter=encounter, characters=[scout], actor=gm)
    joined = encounter.participants.get(character=scout)
    services.update_participant(participant=joined, actor=gm, hidden=True)
    link = display.make_link(campaign=campaign, actor=gm)
    screen = display.DisplayViewer(link)
    n = len(pages)
    variants = {
        f"{n} pages": pages,
        f"{n} pages + 1 display": [*pages, screen],
        f"{n} pages + 1 shared page": [*pages, pages[n % 3]],
        f"{n} pages + 1 own page": [*pages, carol],
    }
    after = broadcast.latest_entry_id(encounter)
    services.next_turn(encounter=encounter, actor=gm)

    def one_pass(viewers: list[Any]) -> tuple[float, int]:
        subscribers = [broadcast.Subscriber(u, after, None, greeted=True) for u in viewers]  # type: ignore[arg-type]  # no queue: the pass only writes it
        with CaptureQueriesContext(connection) as queries:
            started = time.perf_counter()
            broadcast.fan_out(encounter, subscribers)
            elapsed = time.perf_counter() - started
        return elapsed, len(queries)

    # Each variant in turn, many times over, the best of each: other work on the machine
    # only ever adds time.
    best = {name: (float("inf"), 0) for name in variants}
    for _ in range(3):
        for viewers in variants.values():
            one_pass(viewers)  # warm up
    for _ in range(15):
        for name, viewers in variants.items():
            elapsed, count = one_pass(viewers)
            best[name] = (min(best[name][0], elapsed), count)
    base = best[f"{n} pages"][0]
    print("broadcast.fan_out, one event, best of 15 passes each (ratios to the first):")
    for name, (elapsed, count) in best.items():
        print(f"  {name:>26}: {elapsed * 1000:7.1f} ms  x{elapsed / base:.3f}  {count} queries")
    extra = {name: best[name][0] - base for name in variants}
    own = extra[f"{n} pages + 1 own page"]
    if own > 0:
        print(f"  a display costs x{extra[f'{n} pages + 1 display'] / own:.2f} of one own page")


if __name__ == "__main__":
    main()
