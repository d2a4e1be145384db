"""The checks tests sit at tests/conftest.py's table with two sheets added to it
(tests/tables.py): Ysolde, her player ``owner``'s, and Bram, ``player``'s."""

from __future__ import annotations

import random

import pytest

from tests.tables import ChecksTable, Table, make_checks_table


@pytest.fixture
def table(table: Table) -> ChecksTable:
    return make_checks_table(table)


@pytest.fixture
def rng() -> random.Random:
    return random.Random(7)
