from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connections, transaction
from django.db.models import Max
from django.test import Client, TestCase, TransactionTestCase, override_settings
from rest_framework.test import APIClient

from tests.tables import Table, make_table

# --- Which tests run on PostgreSQL too -------------------------------------------------------

# scripts/test.sh runs every test on SQLite, the embedded default. On PostgreSQL it runs again the
# tests whose outcome can depend on the database engine (--database-dependent-only):
#   - the schema fuzz and the authorization matrix ("once"): every API operation and every page
#     route, as every role, against the demo table, on PostgreSQL only;
#   - the PostgreSQL-only tests ("postgres");
#   - every test that commits (django_db(transaction=True), transactional_db, live_server, a
#     TransactionTestCase, a fixture of ours unblocking the database by hand): locks, isolation,
#     concurrent writers, live streams, where SQLite's one database lock hides what PostgreSQL's
#     row locks do;
#   - the tests marked "both_databases": the ones that send PostgreSQL statements none of the
#     above send (measured: docs/testing.md).
# Every other test rolls back inside one transaction and ran the very same ORM calls on SQLite.
_COMMITTING_FIXTURES = frozenset({"transactional_db", "live_server"})
_KEPT_MARKERS = ("postgres", "once", "both_databases")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--database-dependent-only",
        action="store_true",
        help="keep only the tests scripts/test.sh runs on PostgreSQL too (tests/conftest.py)",
    )


def depends_on_database(item: pytest.Item) -> bool:
    if any(item.get_closest_marker(name) for name in _KEPT_MARKERS):
        return True
    marker = item.get_closest_marker("django_db")
    if marker is not None and (
        marker.kwargs.get("transaction") or (marker.args and marker.args[0])
    ):
        return True
    info = getattr(item, "_fixtureinfo", None)
    if info is None:  # not a test function: keep it rather than guess
        return True
    if _COMMITTING_FIXTURES & set(info.names_closure):
        return True
    # Every test's closure holds django_db_blocker through pytest-django's own autouse
    # fixtures; a fixture of ours (or the test) asking for it opens the database by hand.
    if "django_db_blocker" in info.argnames:
        return True
    for defs in info.name2fixturedefs.values():
        for fixturedef in defs:
            module = getattr(fixturedef.func, "__module__", "") or ""
            # Our django_db_setup only reads what migrate wrote (below).
            if (
                "django_db_blocker" in fixturedef.argnames
                and not module.startswith("pytest_django")
                and fixturedef.argname != "django_db_setup"
            ):
                return True
    cls = getattr(item, "cls", None)
    return bool(
        cls is not None
        and issubclass(cls, TransactionTestCase)
        and not issubclass(cls, TestCase)
        and cls.databases
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("database_dependent_only"):
        return
    kept: list[pytest.Item] = []
    left: list[pytest.Item] = []
    for item in items:
        (kept if depends_on_database(item) else left).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept


# --- Emptying the database after a test that commits -------------------------------------------

# After each test that commits, Django's TransactionTestCase flushes the database: a TRUNCATE of
# all 37 tables (on PostgreSQL a new file for each table and index), then post_migrate writes
# every content type and permission back. On PostgreSQL, on this 2-core machine under load, the
# TRUNCATE took 0.37 to 1.16 s and post_migrate 0.43 to 1.73 s, against 0.03 to 0.08 s for a
# DELETE of every table's rows (measured in one process, turn by turn). Content types and
# permissions are what migrate wrote and post_migrate would write again: they are kept, apart
# from any row a test added, so nothing needs writing back. Foreign keys are checked at COMMIT
# (Django makes them DEFERRABLE INITIALLY DEFERRED), so the order of the DELETEs does not matter.
_KEPT_MODELS = (ContentType, Permission)
_tables: dict[str, list[str]] = {}
_migrated_up_to: dict[str, list[int]] = {}


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None, django_db_blocker: Any) -> None:
    """pytest-django's, then the last content type and permission migrate wrote."""
    with django_db_blocker.unblock():
        for alias in connections:
            _migrated_up_to[alias] = [
                model._default_manager.using(alias).aggregate(last=Max("pk"))["last"] or 0
                for model in _KEPT_MODELS
            ]


def _empty_tables(alias: str) -> None:
    connection = connections[alias]
    if alias not in _tables:
        names = connection.introspection.django_table_names(only_existing=True, include_views=False)
        kept = {model._meta.db_table for model in _KEPT_MODELS}
        _tables[alias] = sorted(set(names) - kept)
    with transaction.atomic(using=alias):
        with connection.cursor() as cursor:
            for table in _tables[alias]:
                # The names are the models' own tables, not input.
                cursor.execute(f"DELETE FROM {connection.ops.quote_name(table)}")  # noqa: S608
        for model, last in zip(_KEPT_MODELS, _migrated_up_to[alias], strict=True):
            model._default_manager.using(alias).filter(pk__gt=last).delete()


# Private to Django's test cases, so absent from django-stubs.
_flush = TransactionTestCase._fixture_teardown  # type: ignore[attr-defined]


def _fixture_teardown(self: TransactionTestCase) -> None:
    aliases = self._databases_names(include_mirrors=False)  # type: ignore[attr-defined]
    # A test case naming its apps or restoring serialized rows needs Django's own flush, and so
    # does a database set up without the fixture above.
    if (
        self.available_apps is not None
        or self.serialized_rollback
        or not set(aliases) <= _migrated_up_to.keys()
    ):
        _flush(self)
        return
    for alias in aliases:
        _empty_tables(alias)


@pytest.fixture(scope="session", autouse=True)
def _delete_rows_instead_of_flushing() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(TransactionTestCase, "_fixture_teardown", _fixture_teardown)
        yield


@pytest.fixture
def table(db: None) -> Table:
    """One campaign with every role around it (tests/tables.py): the one meaning of ``table``."""
    return make_table()


@pytest.fixture
def client_for():
    """client_for(user) -> a logged-in Django test client (None: anonymous)."""

    def make(user: Any) -> Client:
        client = Client()
        if user is not None:
            client.force_login(user)
        return client

    return make


@pytest.fixture
def api_for():
    """api_for(user) -> a DRF APIClient authenticated as user (None: anonymous)."""

    def make(user: Any) -> APIClient:
        client = APIClient()
        if user is not None:
            client.force_authenticate(user)
        return client

    return make


@pytest.fixture
def throttle_clock(monkeypatch: Any) -> float:
    """Holds the clock of config.throttling's fixed windows (a minute, an hour) still, in the
    middle of both: a test that ran across a window's end found its counts started again (a
    200 where its last attempt must get 429). Returns the held time; a test that needs the next
    window patches ``config.throttling.time.time`` again."""
    held = time.time() // 3600 * 3600 + 1830
    clock = SimpleNamespace(time=lambda: held, monotonic=time.monotonic)
    monkeypatch.setattr("config.throttling.time", clock)  # that module's clock, not everyone's
    return held


@pytest.fixture
def cache_down(monkeypatch: Any) -> Any:
    """A real Redis cache backend whose server is gone (nothing listens on the port)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # The warning is once per interval and process: start this test with none given yet.
    monkeypatch.setattr("config.throttling._warned_at", None, raising=False)
    redis = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": f"redis://127.0.0.1:{port}/0",
    }
    with override_settings(CACHES={"default": redis}):
        yield
