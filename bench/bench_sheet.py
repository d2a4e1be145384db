"""Speed of the character sheet (issue 15) on a throwaway SQLite database. Run by hand:
``.venv/bin/python bench/bench_sheet.py`` (``--profile`` adds a cProfile of the page).

Measures the sheet page through the whole middleware stack as a ratio to a bare JSON view timed
in the same run (higher is faster; the issue's goal is at least 0.05x), and counts the queries of
one API edit (GET + PATCH of one field) and of one htmx field edit (``services.edit_field``).
"""

from __future__ import annotations

import cProfile
import os
import pstats
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

from django.conf import settings  # noqa: E402

settings.ALLOWED_HOSTS = ["testserver"]

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.http import HttpRequest, JsonResponse  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from django.urls import clear_url_caches, path, reverse  # noqa: E402
from rest_framework.test import APIClient  # noqa: E402

from config import urls  # noqa: E402
from sheets import services  # noqa: E402
from tests.combat.conftest import make_ysolde  # noqa: E402
from tests.factories import make_campaign, make_user  # noqa: E402

RUNS = 100


def bare_json(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"ok": True})


def timed(client: Client, url: str) -> list[float]:
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        response = client.get(url)
        samples.append(time.perf_counter() - start)
        assert response.status_code == 200, response.status_code
    return samples


def main() -> None:
    call_command("migrate", verbosity=0)
    urls.urlpatterns.append(path("bench-json", bare_json))
    clear_url_caches()
    gm, player = make_user("bench-gm"), make_user("bench-player")
    campaign = make_campaign(gm, players=(player,))
    ysolde = make_ysolde(campaign, player)
    client = Client()
    client.force_login(player)
    sheet_url = reverse("sheets:character_detail", args=[ysolde.pk])
    timed(client, sheet_url)  # warm the template and URL caches
    bare = statistics.median(timed(client, "/bench-json"))
    page = statistics.median(timed(client, sheet_url))
    print(f"bare JSON view:   {bare * 1000:.2f} ms")
    print(f"sheet page:       {page * 1000:.2f} ms   ratio {bare / page:.3f}x")

    api = APIClient()
    api.force_authenticate(player)
    detail = reverse("api:character-detail", args=[ysolde.pk])
    with CaptureQueriesContext(connection) as get:
        assert api.get(detail).status_code == 200
    with CaptureQueriesContext(connection) as patch:
        assert api.patch(detail, {"notes": "bench"}, format="json").status_code == 200
    print(f"API GET + PATCH:  {len(get)} + {len(patch)} = {len(get) + len(patch)} queries")
    ysolde.refresh_from_db()
    for field, value in (("notes", "again"), ("spd", "4")):
        original = str(getattr(ysolde, field))
        with CaptureQueriesContext(connection) as edit:
            services.edit_field(
                character=ysolde,
                kind="character",
                row_id=None,
                field=field,
                value=value,
                original=original,
            )
        print(f"htmx edit {field + ':':6}   {len(edit)} queries")
    weapon = ysolde.weapons.get()
    with CaptureQueriesContext(connection) as edit:
        services.edit_field(
            character=ysolde,
            kind="weapon",
            row_id=weapon.pk,
            field="dmg",
            value=str(weapon.dmg_max),
            original=str(weapon.dmg),
        )
    print(f"htmx edit weapon dmg: {len(edit)} queries")

    if "--profile" in sys.argv:
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(20):
            client.get(sheet_url)
        profile.disable()
        pstats.Stats(profile).sort_stats("cumulative").print_stats(30)


if __name__ == "__main__":
    main()
