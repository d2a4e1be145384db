"""A pytest plugin that records the distinct SQL statements a run sends, with the test files
that send each one; docs/testing.md uses it to choose the tests marked both_databases.

    .venv/bin/python -m pytest -p tests.sql_shapes ... (SQL_SHAPES_OUT=/tmp/shapes/full)

Each process writes ``<SQL_SHAPES_OUT>.<pid>.txt``: a statement (its numbers, IN lists, VALUES
lists and savepoint names folded) and, after a tab, the files that sent it. Transaction control
(BEGIN, SAVEPOINT, ...) is left out."""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import pytest

_SHAPES: defaultdict[str, set[str]] = defaultdict(set)
_CURRENT = ["?"]
_SPACE = re.compile(r"\s+")
_IN_LIST = re.compile(r"IN \((?:%s, )*%s\)")
_VALUES = re.compile(r"VALUES (\([^()]*\))(?:, \([^()]*\))*")
_SAVEPOINT = re.compile(r'"s\d+_x\d+"')
_NUMBER = re.compile(r"\b\d+\b")
_CONTROL = frozenset({"SAVEPOINT", "RELEASE", "ROLLBACK", "BEGIN", "COMMIT", "SET", "SHOW"})


def shape(sql: str) -> str | None:
    text = _SPACE.sub(" ", sql.strip())
    if text.split(" ", 1)[0].upper() in _CONTROL:
        return None
    text = _IN_LIST.sub("IN (...)", text)
    text = _VALUES.sub(r"VALUES \1 ...", text)
    text = _SAVEPOINT.sub('"sp"', text)
    return _NUMBER.sub("N", text)


def _recording(method: Callable[..., Any]) -> Callable[..., Any]:
    def record(self: Any, sql: Any, *args: Any) -> Any:
        if isinstance(sql, str) and (found := shape(sql)):
            _SHAPES[found].add(_CURRENT[0])
        return method(self, sql, *args)

    return record


def pytest_configure(config: pytest.Config) -> None:
    from django.db.backends import utils

    wrapper: Any = utils.CursorWrapper
    wrapper._execute = _recording(wrapper._execute)
    wrapper._executemany = _recording(wrapper._executemany)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _CURRENT[0] = item.nodeid.split("::")[0]


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = os.environ.get("SQL_SHAPES_OUT", "sql-shapes")
    with open(f"{out}.{os.getpid()}.txt", "w", encoding="utf-8") as file:
        for found, files in sorted(_SHAPES.items()):
            file.write(f"{found}\t{' '.join(sorted(files))}\n")
