"""Requests per second of the rules API's check endpoint against a bare Django JSON view.

Run by hand: ``.venv/bin/python bench/bench_rules_api.py [seconds per case]``.

Both go through the whole middleware stack in-process (Django's test Client, no network), in the
same run, so the ratio shows what DRF parsing, validation, throttling and the engine cost on top
of Django itself. Throttling stays on, with a rate too high to trip. The request log is kept
to warnings (``LOG_LEVEL=WARNING``): a line per request on a terminal would be most of the time.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DEBUG", "1")
os.environ.setdefault("LOG_LEVEL", "WARNING")

import django  # noqa: E402 - the path and settings above come first

django.setup()

from django.http import HttpRequest, JsonResponse  # noqa: E402
from django.test import Client, override_settings  # noqa: E402
from django.urls import include, path  # noqa: E402
from django.views.decorators.csrf import csrf_exempt  # noqa: E402


@csrf_exempt
def bare(request: HttpRequest) -> JsonResponse:
    """The floor: read the JSON body, answer JSON, nothing else."""
    body = json.loads(request.body)
    return JsonResponse({"pro": body["pro"], "dif": body["dif"], "roll": body["roll"]})


# The app's own URLconf plus the bare view: the middleware (the login throttle reverses
# ``login`` on every POST) sees the URLs it expects.
urlpatterns = [path("bare/", bare), path("", include("config.urls"))]

BODY = json.dumps({"pro": 70, "dif": 20, "roll": 43, "fast": True})


def per_second(client: Client, url: str, seconds: float) -> float:
    call: Callable[[], object] = lambda: client.post(url, BODY, content_type="application/json")  # noqa: E731
    for _ in range(200):  # warm up caches and imports
        call()
    done, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        for _ in range(100):
            call()
        done += 100
    return done / elapsed


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    from django.conf import settings

    rates: dict[str, Any] = {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]}  # type: ignore[dict-item]  # a dict
    rates.update(rules_anon="100000000/min", rules_user="100000000/min")
    with override_settings(
        ROOT_URLCONF=__name__,
        ALLOWED_HOSTS=["testserver"],
        REST_FRAMEWORK={**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates},
    ):
        client = Client()
        assert client.post("/api/rules/omg/check/", BODY, content_type="application/json").json()[
            "second"
        ] == {"roll": 34, "hit": True}
        bare_rps = per_second(client, "/bare/", seconds)
        api_rps = per_second(client, "/api/rules/omg/check/", seconds)
    print(f"bare Django JsonResponse view : {bare_rps:8.0f} requests/s")
    print(f"POST /api/rules/omg/check/    : {api_rps:8.0f} requests/s")
    print(f"ratio (check endpoint / bare) : {api_rps / bare_rps:8.2f}")


if __name__ == "__main__":
    main()
