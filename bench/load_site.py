"""Settings of the server that bench/bench_load.py and bench/bench_fanout.py start: the
production settings unchanged, except for the URLconf (bench/load_urls.py: the app's own, plus
one bare view to measure Django itself against, kept out of config/urls.py) and where
collectstatic writes (a temporary folder, not the project)."""

from __future__ import annotations

import os
from pathlib import Path

from config.settings import *  # noqa: F403

ROOT_URLCONF = "bench.load_urls"
STATIC_ROOT = Path(os.environ["OMG_BENCH_STATIC_ROOT"])
