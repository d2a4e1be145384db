"""``--database-dependent-only`` (scripts/test.sh's PostgreSQL run) keeps exactly the tests that
commit, the ones marked postgres, once or both_databases, and none that only roll back."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CASES = """
import pytest
from django.test import SimpleTestCase, TestCase, TransactionTestCase


@pytest.fixture
def built(db):
    return 1


@pytest.fixture
def by_hand(django_db_blocker):
    with django_db_blocker.unblock():
        yield


@pytest.fixture
def settled(settings):
    return settings


def test_free():
    pass


def test_free_with_a_fixture(settled, tmp_path):
    pass


@pytest.mark.parametrize("n", [1, 2])
def test_free_parametrized(n):
    pass


@pytest.mark.django_db
def test_marked():
    pass


@pytest.mark.django_db(transaction=True)
def test_marked_transactional():
    pass


def test_db(db):
    pass


def test_transactional_db(transactional_db):
    pass


def test_through_a_fixture(built):
    pass


def test_unblocked_by_hand(by_hand):
    pass


def test_live_server(live_server):
    pass


@pytest.mark.postgres
def test_postgres_only():
    pass


@pytest.mark.once
def test_once():
    pass


@pytest.mark.both_databases
def test_both(db):
    pass


class TestMarkedClass:
    pytestmark = pytest.mark.django_db

    def test_in_a_marked_class(self):
        pass


class NoDatabase(SimpleTestCase):
    def test_simple(self):
        pass


class WithDatabase(TestCase):
    def test_django_testcase(self):
        pass


class Committing(TransactionTestCase):
    def test_django_transactiontestcase(self):
        pass
"""

KEPT = {
    "test_marked_transactional",
    "test_transactional_db",
    "test_unblocked_by_hand",
    "test_live_server",
    "test_postgres_only",
    "test_once",
    "test_both",
    "Committing::test_django_transactiontestcase",
}
#: the free tests (test_free, test_free_with_a_fixture, test_free_parametrized[1] and [2],
#: NoDatabase::test_simple) and the ones that roll back (test_marked, test_db,
#: test_through_a_fixture, TestMarkedClass::test_in_a_marked_class, WithDatabase)
LEFT_TO_SQLITE = 10


def test_it_keeps_exactly_the_tests_whose_outcome_can_depend_on_the_database(
    tmp_path: Path,
) -> None:
    # The hooks under test, in a conftest of their own: the cases run with no other test.
    (tmp_path / "conftest.py").write_text(
        "from tests.conftest import pytest_addoption, pytest_collection_modifyitems\n"
    )
    cases = tmp_path / "test_cases.py"
    cases.write_text(CASES)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-c",
            str(ROOT / "pyproject.toml"),
            "--rootdir",
            str(tmp_path),
            "-p",
            "no:cacheprovider",
            "--collect-only",
            "-q",
            "--database-dependent-only",
            str(cases),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    kept = {line.split("::", 1)[1] for line in done.stdout.splitlines() if "::" in line}
    assert kept == KEPT
    assert f"{LEFT_TO_SQLITE} deselected" in done.stdout
