"""Does the password reset page tell, by its timing, whether an account has an address? Run by
hand: ``.venv/bin/python bench/bench_reset.py [iterations]`` (default 2000).

POSTs to /accounts/password/reset/ for an address an account has and for one nobody has, in
turns (so drift on a shared machine hits both alike), through the test client against a
throwaway SQLite database with the production task backend (the database queue: enqueuing is an
insert; the mail is sent later by the worker). Prints each path's median and mean in
milliseconds, their difference and their ratio, in wall-clock time and in this process's CPU
time (SQLite runs in it; other work on a shared machine skews it less). The throttle is lifted
for the run.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import cast

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")
os.environ["DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp()}/bench.sqlite3"

import django  # noqa: E402 - settings must be chosen first

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import override_settings  # noqa: E402
from django.urls import reverse  # noqa: E402


def main(iterations: int) -> None:
    call_command("migrate", verbosity=0)
    get_user_model().objects.create_user("ann", email="ann@example.org")
    configured = cast("dict[str, str | None]", settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"])
    rates = {**configured, "password_reset": None}
    with override_settings(
        ALLOWED_HOSTS=["testserver"],
        DEBUG=False,
        TASKS={"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}},
        REST_FRAMEWORK={**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates},
        MAILERS={"default": {"BACKEND": "django.core.mail.backends.locmem.EmailBackend"}},
    ):
        client = Client()
        url = reverse("password_reset")
        times: dict[str, list[float]] = {"known": [], "unknown": []}
        cpu: dict[str, list[float]] = {"known": [], "unknown": []}
        for i in range(iterations + 50):
            for name, email in (("known", "ann@example.org"), ("unknown", "nobody@example.org")):
                start, start_cpu = time.perf_counter(), time.process_time()
                response = client.post(url, {"email": email})
                elapsed = time.perf_counter() - start
                elapsed_cpu = time.process_time() - start_cpu
                assert response.status_code == 302, (response.status_code, response.content[:300])
                if i >= 50:  # the first runs warm caches and imports
                    times[name].append(elapsed * 1000)
                    cpu[name].append(elapsed_cpu * 1000)
    for label, series in (("wall clock", times), ("CPU time", cpu)):
        for name, values in series.items():
            print(
                f"{label:10} {name:8} median {statistics.median(values):.3f} ms  "
                f"mean {statistics.fmean(values):.3f} ms  (n={len(values)})"
            )
        known, unknown = (statistics.median(series[n]) for n in ("known", "unknown"))
        print(
            f"{label:10} difference {known - unknown:+.3f} ms  "
            f"ratio known/unknown {known / unknown:.3f}"
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
