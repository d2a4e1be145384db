"""The in-process benchmarks still run: a crash (like the rules API bench's 500s when the
login throttle could not find its URL) is caught here, not when someone wants a figure.
Nothing is timed or compared."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_it_runs_the_rules_api_benchmark_to_its_ratio():
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    done = subprocess.run(
        [sys.executable, "bench/bench_rules_api.py", "0.05"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "ratio (check endpoint / bare)" in done.stdout


def test_it_refuses_an_unknown_benchmark_by_name():
    done = subprocess.run(
        [sys.executable, "-m", "bench", "nonesuch"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "Unknown benchmark nonesuch" in done.stdout
