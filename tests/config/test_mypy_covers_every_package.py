"""mypy checks every Python file of the repository: a new app, script folder or top-level module
is covered the day it is created, or this test names it. What mypy checks is read from mypy
itself (its source list for pyproject.toml's ``[tool.mypy]``), not from a second list here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mypy.main import process_options

ROOT = Path(__file__).resolve().parents[2]

#: Folders that hold Python which is not ours to check, at any depth.
NOT_OURS = {
    ".venv",  # the virtualenv: installed packages
    "venv",
    ".git",
    "__pycache__",
    ".mypy_cache",  # tool caches
    ".ruff_cache",
    ".pytest_cache",
    ".hypothesis",
    ".tmp",  # scratch space of the test runs
    "staticfiles",  # collectstatic output
    "test-results",
    "node_modules",  # front-end tooling, should it ever hold a .py
    "build",  # packaging output
    "dist",
}


def python_files() -> set[str]:
    """Every ``.py`` file under the repository, as a path relative to its root."""
    found = set()
    for folder, subfolders, files in os.walk(ROOT):
        subfolders[:] = [name for name in subfolders if name not in NOT_OURS]
        for name in files:
            if name.endswith(".py"):
                found.add(str((Path(folder) / name).relative_to(ROOT)))
    return found


def checked_by_mypy(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    # ``files`` in the config is relative to where mypy runs: the repository root, as in make lint.
    monkeypatch.chdir(ROOT)
    sources, _ = process_options(["--config-file", str(ROOT / "pyproject.toml")])
    return {os.path.relpath(source.path, ROOT) for source in sources if source.path}


def test_it_checks_every_python_file_of_the_repository(monkeypatch):
    missing = python_files() - checked_by_mypy(monkeypatch)

    by_top_level = sorted({path.split(os.sep)[0] for path in missing})
    assert not missing, f"mypy leaves out {by_top_level}: {sorted(missing)[:20]}"


def test_it_sees_every_top_level_package(monkeypatch):
    # A guard on the walk above: the apps are there, so an empty walk cannot pass.
    tops = {path.split(os.sep)[0] for path in checked_by_mypy(monkeypatch)}

    assert {"config", "sheets", "combat", "prep", "rules", "tests", "manage.py"} <= tops
