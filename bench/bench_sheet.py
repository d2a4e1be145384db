"""Speed of the character sheet on a throwaway SQLite database. Run by hand:
``.venv/bin/python bench/bench_sheet.py`` (``--profile`` adds a cProfile of the page).

Measures the sheet page through the whole middleware stack as a ratio to a bare JSON view timed
in the same run, the two requests interleaved so that a load that comes and goes weighs on both
(higher is faster; the issue's goal is at least 0.05x). The page is timed twice: as the table
sees it (its body drawn once per state of the sheet and rights of the viewer, then reused:
sheets/fragments.py) and drawn afresh every time (the stored bodies forgotten before each
request: the first view after an edit). Then it counts the queries of one API edit (GET + PATCH
of one field), of one htmx field edit (``services.edit_field``) and of the whole htmx request.
"""

from __future__ import annotations

import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
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
from sheets import fragments, services  # noqa: E402
from tests.factories import (  # noqa: E402
    make_campaign,
    make_user,
    make_ysolde,  # noqa: E402
)

RUNS = 100


def bare_json(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"ok": True})


def timed(client: Client, url: str, before: Callable[[], None] = lambda: None) -> float:
    before()
    start = time.perf_counter()
    response = client.get(url)
    elapsed = time.perf_counter() - start
    assert response.status_code == 200, response.status_code
    return elapsed


def interleaved(
    client: Client, cases: dict[str, tuple[str, Callable[[], None]]]
) -> dict[str, float]:
    """The median time of each case, the cases taking turns request by request."""
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(RUNS):
        for name, (url, before) in cases.items():
            samples[name].append(timed(client, url, before))
    return {name: statistics.median(values) for name, values in samples.items()}


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
    for _ in range(10):  # warm the template and URL caches
        timed(client, sheet_url, fragments.clear)
    medians = interleaved(
        client,
        {
            "bare JSON view": ("/bench-json", lambda: None),
            "sheet page": (sheet_url, lambda: None),
            "sheet page, drawn afresh": (sheet_url, fragments.clear),
        },
    )
    bare = medians.pop("bare JSON view")
    print(f"bare JSON view:             {bare * 1000:6.2f} ms")
    for name, median in medians.items():
        print(f"{name + ':':27} {median * 1000:6.2f} ms   ratio {bare / median:.3f}x")

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
                user=player,
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
            user=player,
            character=ysolde,
            kind="weapon",
            row_id=weapon.pk,
            field="dmg",
            value=str(weapon.dmg_max),
            original=str(weapon.dmg),
        )
    print(f"htmx edit weapon dmg: {len(edit)} queries")
    ysolde.refresh_from_db()
    edit_url = reverse("sheets:character_edit_field", args=[ysolde.pk])
    form = {"kind": "character", "field": "notes", "value": "htmx", "original": ysolde.notes}
    with CaptureQueriesContext(connection) as request:
        response = client.post(edit_url, form, headers={"HX-Request": "true"})
        assert response.status_code == 200, response.status_code
    print(f"htmx edit request (notes, session and user included): {len(request)} queries")

    if "--profile" in sys.argv:
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(20):
            client.get(sheet_url)
        profile.disable()
        pstats.Stats(profile).sort_stats("cumulative").print_stats(30)


if __name__ == "__main__":
    main()
