"""Profile of the live feed's work for one event and many open pages (issue 15).

Run by hand: ``.venv/bin/python bench/profile_fanout.py [viewers]`` (default 100). On a
throwaway SQLite database with the demo table, ``viewers`` pages (the GM's and both players'
in turn) follow a running encounter; the GM passes the turn, and the work every page's share
of that event costs is profiled with cProfile: wall time, queries, and the functions that
take the most time. ``live.fan_out`` (the broadcaster's one pass per event) is profiled when
it exists, else ``live.messages_after`` once per viewer (the stream of each page on its own).
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    viewers = int(sys.argv[1]) if len(sys.argv) > 1 else 100
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
    from combat import live, services
    from combat.models import Encounter

    users = get_user_model().objects
    people = [users.get(username=u) for u in ("gm", "alice", "bob")]
    encounter = Encounter.objects.get(pk=new_fight("Profile")["encounter"])
    gm = people[0]
    pages = [people[i % 3] for i in range(viewers)]
    fan_out = getattr(live, "fan_out", None)

    marks: dict[str, float] = {}
    sizes: dict[str, int] = {}

    def early(ready: dict[live.Subscriber, list[str]]) -> None:
        marks["early"] = time.perf_counter()

    def one_event() -> None:
        if fan_out is not None:
            subscribers = [live.Subscriber(u, after, None, greeted=True) for u in pages]
            out = fan_out(encounter, subscribers, early=early)
            for s in subscribers[:3]:
                sizes[s.user.get_username()] = sum(len(c.encode()) for c in out[s])
        else:
            for user in pages:
                live.messages_after(encounter, user, after)

    for _ in range(3):  # warm up: templates compiled, caches filled
        after = live.latest_entry_id(encounter)
        services.next_turn(encounter=encounter, actor=gm)
        one_event()
    after = live.latest_entry_id(encounter)
    services.next_turn(encounter=encounter, actor=gm)
    profiler = cProfile.Profile()
    with CaptureQueriesContext(connection) as queries:
        started = time.perf_counter()
        profiler.enable()
        one_event()
        profiler.disable()
        elapsed = time.perf_counter() - started
    how = "live.fan_out" if fan_out is not None else "live.messages_after per viewer"
    print(f"{how}, one event, {viewers} pages: {elapsed * 1000:.0f} ms, {len(queries)} queries")
    if "early" in marks:
        print(f"  the entries ready after {(marks['early'] - started) * 1000:.0f} ms")
        print(f"  bytes after the entries, per stream: {sizes}")
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(18)
    subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
