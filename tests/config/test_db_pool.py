"""The database connection pool: a burst of requests holds at most the pool's connections, and
a request that finds none free within the pool's timeout is a 503 with Retry-After, never a 500
(config/db_pool.py). The pool's settings are tested in test_health.py."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from django.conf import settings
from django.db import InterfaceError, OperationalError, connection
from django.http import HttpRequest, HttpResponse
from django.test import Client
from django.urls import path
from psycopg_pool import PoolTimeout
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from combat import services
from config import urls as site_urls
from sheets.models import ApiToken
from tests.factories import make_thug, make_ysolde
from tests.polling import wait_for
from tests.servers import AsgiServer, SseClient, start_asgi_server
from tests.workers import worker_index


def no_connection() -> OperationalError:
    """What Django raises when the pool has no connection for a request in time: its own
    OperationalError over psycopg_pool's PoolTimeout (django.db.utils.DatabaseErrorWrapper)."""
    cause = PoolTimeout("couldn't get a connection after 0.50 sec")
    error = OperationalError(*cause.args)
    error.__cause__ = cause
    return error


def busy_page(request: HttpRequest) -> HttpResponse:
    raise no_connection()


class BusyApiView(APIView):
    permission_classes = [AllowAny]

    def get(self, request: Request) -> Response:
        raise PoolTimeout("couldn't get a connection after 0.50 sec")


def wrapped(error: Exception, django_class: type[Exception] = OperationalError) -> Exception:
    """A psycopg error as Django raises it (django.db.utils.DatabaseErrorWrapper)."""
    outer = django_class(*error.args)
    outer.__cause__ = error
    return outer


def broken_page(request: HttpRequest) -> HttpResponse:
    raise wrapped(psycopg.errors.DeadlockDetected("deadlock detected"))


def server_gone_page(request: HttpRequest) -> HttpResponse:
    raise wrapped(
        psycopg.errors.AdminShutdown("terminating connection due to administrator command")
    )


def socket_closed_page(request: HttpRequest) -> HttpResponse:
    raise wrapped(psycopg.OperationalError("consuming input failed: server closed the connection"))


class ClosedApiView(APIView):
    permission_classes = [AllowAny]

    def get(self, request: Request) -> Response:
        raise wrapped(psycopg.InterfaceError("connection already closed"), InterfaceError)


class BusyMiddleware:
    """Finds no connection before the view runs (as IdempotencyMiddleware would)."""

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path == "/api/busy-before-the-view/":
            raise no_connection()
        response: HttpResponse = self.get_response(request)
        return response


urlpatterns = [
    path("busy/", busy_page),
    path("api/busy/", BusyApiView.as_view()),
    path("broken/", broken_page),
    path("server-gone/", server_gone_page),
    path("socket-closed/", socket_closed_page),
    path("api/closed/", ClosedApiView.as_view()),
    *site_urls.urlpatterns,
]
handler500 = getattr(site_urls, "handler500", "django.views.defaults.server_error")


@pytest.mark.urls(__name__)
def test_it_answers_503_with_retry_after_when_a_page_finds_no_connection(db):
    response = Client().get("/busy/")
    assert response.status_code == 503
    assert 1 <= int(response["Retry-After"]) <= 30
    assert response["Content-Type"].startswith("text/html")
    assert "busy" in response.content.decode()
    assert "Content-Security-Policy" in response


@pytest.mark.urls(__name__)
def test_it_answers_503_in_json_when_an_api_view_finds_no_connection(db):
    response = Client().get("/api/busy/")
    assert response.status_code == 503
    assert 1 <= int(response["Retry-After"]) <= 30
    assert "busy" in response.json()["detail"]


@pytest.mark.urls(__name__)
def test_it_answers_503_when_a_middleware_finds_no_connection(db, settings):
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, f"{__name__}.BusyMiddleware"]
    response = Client(raise_request_exception=False).get("/api/busy-before-the-view/")
    assert response.status_code == 503
    assert 1 <= int(response["Retry-After"]) <= 30
    assert "busy" in response.json()["detail"]


@pytest.mark.urls(__name__)
@pytest.mark.parametrize("url", ["/server-gone/", "/socket-closed/", "/api/closed/"])
def test_it_answers_503_when_the_connection_is_lost_mid_request(db, url):
    response = Client(raise_request_exception=False).get(url)
    assert response.status_code == 503
    assert 1 <= int(response["Retry-After"]) <= 30


@pytest.mark.urls(__name__)
def test_it_leaves_other_database_errors_as_500(db):
    response = Client(raise_request_exception=False).get("/broken/")
    assert response.status_code == 500
    assert "Retry-After" not in response


# --- A real pool: uvicorn on PostgreSQL ------------------------------------------------------

# One name per pytest-xdist worker: the two workers' servers share the PostgreSQL cluster, and
# a count or a pg_terminate_backend by name must see only this worker's server.
APP_NAME = f"omg-pool-test-{worker_index()}"
POOL_ENV = {
    "DB_POOL_MIN": "1",
    "DB_POOL_MAX": "2",
    "DB_POOL_TIMEOUT": "0.5",
    # libpq names the server's connections, so that pg_stat_activity tells them apart.
    "PGAPPNAME": APP_NAME,
    "DEBUG": "0",
    "ALLOWED_HOSTS": "127.0.0.1",
    "SECURE_SSL_REDIRECT": "0",
}


def pool_server(log: Path | None = None) -> AsgiServer:
    # The test's SECRET_KEY: the sessions it logs in are the server's too.
    return start_asgi_server({**POOL_ENV, "SECRET_KEY": settings.SECRET_KEY}, log=log)


def server_connections() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", [APP_NAME]
        )
        return int(cursor.fetchone()[0])


def running_fight(table: Any) -> Any:
    ysolde = make_ysolde(table.campaign, table.player)
    thug = make_thug(table.campaign, table.gm)
    encounter, _ = services.create_encounter(campaign=table.campaign, name="Ambush", actor=table.gm)
    services.add_participants(encounter=encounter, characters=[ysolde, thug], actor=table.gm)
    services.start_encounter(encounter=encounter, actor=table.gm)
    return encounter


def lock_row(encounter_id: int) -> psycopg.Connection[Any]:
    """Another session holds the encounter's row lock, as a slow action would."""
    db = connection.settings_dict
    locker = psycopg.connect(
        dbname=db["NAME"], user=db["USER"], password=db["PASSWORD"] or None,
        host=db["HOST"], port=db["PORT"],
    )  # fmt: skip
    locker.execute("SELECT 1 FROM combat_encounter WHERE id = %s FOR UPDATE", [encounter_id])
    return locker


@pytest.mark.postgres
@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_it_holds_at_most_the_pool_and_answers_503_beyond_it(table):
    assert connection.vendor == "postgresql"
    encounter = running_fight(table)
    _, key = ApiToken.objects.create_token(user=table.gm, name="probe")
    server = pool_server()
    locker = lock_row(encounter.pk)
    answers: list[httpx.Response] = []
    most = 0
    try:

        def press() -> None:
            answer = httpx.post(
                f"{server.url}/api/encounters/{encounter.pk}/next-turn/",
                headers={"Authorization": f"Token {key}"},
                json={},
                timeout=30,
            )
            answers.append(answer)

        threads = [threading.Thread(target=press) for _ in range(8)]
        for t in threads:
            t.start()

        # The pool holds 2 and both wait for the lock: the other 6 are answered after 0.5 s.
        def six_answered() -> bool:
            nonlocal most
            most = max(most, server_connections())
            return len(answers) >= 6

        wait_for(six_answered, 4, every=0.02)
        most = max(most, server_connections())
        locker.rollback()
        for t in threads:
            t.join(30)
        assert httpx.get(f"{server.url}/healthz", timeout=10).status_code == 200
    finally:
        locker.close()
        server.stop()
    statuses = sorted(a.status_code for a in answers)
    assert len(statuses) == 8
    assert set(statuses) <= {200, 503}, [a.text for a in answers]
    assert statuses.count(503) >= 1
    assert statuses.count(200) >= 1
    for answer in answers:
        if answer.status_code == 503:
            assert int(answer.headers["Retry-After"]) >= 1
            assert answer.json()["detail"]
    assert 1 <= most <= 2


@pytest.mark.postgres
@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_it_gives_a_stream_connection_back_between_events(table):
    """Open pages do not use the pool up: more streams than the pool holds all follow the
    fight, and other requests still get a connection."""
    assert connection.vendor == "postgresql"
    encounter = running_fight(table)
    _, key = ApiToken.objects.create_token(user=table.gm, name="probe")
    client = Client()
    client.force_login(table.gm)
    cookie = client.cookies["sessionid"].value
    server = pool_server()
    try:
        url = f"{server.url}/encounters/{encounter.pk}/events/"
        streams = [SseClient(url, cookie).start() for _ in range(4)]
        api = f"{server.url}/api/encounters/{encounter.pk}/"
        auth = {"Authorization": f"Token {key}"}
        assert [httpx.get(api, headers=auth, timeout=10).status_code for _ in range(3)] == [200] * 3
        entry = httpx.post(f"{api}next-turn/", headers=auth, json={}, timeout=10)
        assert entry.status_code == 200, entry.text
        for s in streams:
            assert wait_for(lambda s=s: s.entries == [entry.json()["id"]]), s.entries  # type: ignore[misc]  # s bound
        assert server_connections() <= 2
        assert httpx.get(api, headers=auth, timeout=10).status_code == 200
    finally:
        server.stop()


def terminate_waiting_backends(count: int, seconds: float = 10) -> list[int]:
    """pg_terminate_backend on the server's connections waiting for a lock, once ``count`` of
    them wait (PostgreSQL restarting, seen from a request in flight)."""
    query = (
        "SELECT pid FROM pg_stat_activity WHERE application_name = %s AND wait_event_type = 'Lock'"
    )
    pids: list[int] = []

    def waiting() -> bool:
        with connection.cursor() as cursor:
            cursor.execute(query, [APP_NAME])
            pids[:] = [row[0] for row in cursor.fetchall()]
        return len(pids) >= count

    assert wait_for(waiting, seconds), pids
    with connection.cursor() as cursor:
        for pid in pids:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    return pids


@pytest.mark.postgres
@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_a_request_whose_connection_is_terminated_in_flight_gets_503(table):
    """The page and the API request in flight when PostgreSQL drops their connection (a
    restart's "terminating connection due to administrator command") answer 503 with
    Retry-After, as the requests that then find no connection do; and the next ones are
    served."""
    assert connection.vendor == "postgresql"
    encounter = running_fight(table)
    _, key = ApiToken.objects.create_token(user=table.gm, name="probe")
    client = Client()
    client.force_login(table.gm)
    cookie = client.cookies["sessionid"].value
    server = pool_server()
    page = f"{server.url}/encounters/{encounter.pk}/"
    api = f"{server.url}/api/encounters/{encounter.pk}/"
    auth = {"Authorization": f"Token {key}"}
    answers: dict[str, httpx.Response] = {}

    def get(name: str, url: str, **kwargs: Any) -> None:
        answers[name] = httpx.get(url, timeout=30, **kwargs)

    locker = lock_row(encounter.pk)
    try:
        # Both requests read the encounter's table: they wait for the lock, in flight.
        locker.execute("LOCK TABLE combat_encounter IN ACCESS EXCLUSIVE MODE")
        threads = [
            threading.Thread(
                target=get, args=("page", page), kwargs={"cookies": {"sessionid": cookie}}
            ),
            threading.Thread(target=get, args=("api", api), kwargs={"headers": auth}),
        ]
        for t in threads:
            t.start()
        terminate_waiting_backends(2)
        for t in threads:
            t.join(30)
        locker.rollback()
        for name, answer in answers.items():
            assert answer.status_code == 503, (name, answer.status_code, answer.text[:300])
            assert int(answer.headers["Retry-After"]) >= 1
        assert "busy" in answers["api"].json()["detail"]
        assert answers["page"].headers["Content-Type"].startswith("text/html")
        # The pool dropped the dead connections: the next requests are served.
        assert httpx.get(api, headers=auth, timeout=10).status_code == 200
        assert httpx.get(page, cookies={"sessionid": cookie}, timeout=10).status_code == 200
    finally:
        locker.close()
        server.stop()


@pytest.mark.postgres
@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_connections_terminated_between_requests_are_replaced(table, tmp_path):
    """PostgreSQL drops the pool's idle connections (a restart between two requests): the
    pool checks a connection before handing it out (CONN_HEALTH_CHECKS), so the next requests
    get fresh ones, never a dead one and its 500."""
    assert connection.vendor == "postgresql"
    encounter = running_fight(table)
    _, key = ApiToken.objects.create_token(user=table.gm, name="probe")
    server = pool_server(tmp_path / "server.log")
    api = f"{server.url}/api/encounters/{encounter.pk}/"
    auth = {"Authorization": f"Token {key}"}
    try:
        assert httpx.get(api, headers=auth, timeout=10).status_code == 200
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE application_name = %s AND state = 'idle'",
                [APP_NAME],
            )
            assert cursor.fetchone()[0] >= 1
        answers = [httpx.get(api, headers=auth, timeout=10) for _ in range(4)]
    finally:
        server.stop()
    # The first may wait longer than DB_POOL_TIMEOUT (0.5 s here) while the pool reconnects:
    # a 503 with Retry-After then, never a 500.
    assert {a.status_code for a in answers[:1]} <= {200, 503}, answers[0].text[:200]
    assert all(int(a.headers["Retry-After"]) >= 1 for a in answers if a.status_code == 503)
    assert [a.status_code for a in answers[1:]] == [200] * 3, [a.text[:200] for a in answers]
