"""ASGI server processes for tests: uvicorn serving config.asgi on the test database."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from tests.polling import wait_for
from tests.workers import worker_redis_url

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class AsgiServer:
    url: str
    process: subprocess.Popen[bytes]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_asgi_server(
    env: dict[str, str] | None = None,
    port: int | None = None,
    log: Path | None = None,
    graceful: int = 2,
) -> AsgiServer:
    """uvicorn serving config.asgi on a free loopback port, on the test database (the SQLite
    file named by OMG_TEST_DB, or the PostgreSQL test database); its stderr goes to ``log``
    when given (the test's own stderr otherwise). Stopping it waits at most ``graceful``
    seconds for open requests (a page's live stream stays open until then)."""
    from django.db import connection

    settings = connection.settings_dict
    if settings["ENGINE"].endswith("sqlite3"):
        if not os.environ.get("OMG_TEST_DB"):
            pytest.fail("ASGI browser tests need OMG_TEST_DB (scripts/test.sh sets it)")
        database_url = f"sqlite:///{settings['NAME']}"
    else:
        host = quote(settings["HOST"], safe="")  # a socket directory is a path
        database_url = (
            f"postgres://{settings['USER']}:{settings['PASSWORD'] or ''}@{host}:"
            f"{settings['PORT']}/{settings['NAME']}"
        )
    port = port or free_port()
    stderr = log.open("ab") if log is not None else None
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "config.asgi:application",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--timeout-graceful-shutdown",
            str(graceful),
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env={
            **os.environ,
            "DATABASE_URL": database_url,
            "DJANGO_SETTINGS_MODULE": "config.test_settings",
            **(env or {}),
        },
        stderr=stderr,
    )
    if stderr is not None:
        stderr.close()  # the server has its own copy
    server = AsgiServer(f"http://127.0.0.1:{port}", process)

    def healthy() -> bool:
        if process.poll() is not None:
            pytest.fail(f"the ASGI server exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"{server.url}/healthz", timeout=2) as response:  # noqa: S310
                return bool(response.status == 200)
        except OSError:
            return False

    if wait_for(healthy, 30, every=0.2):
        return server
    server.stop()
    pytest.fail("the ASGI server did not answer /healthz within 30 s")


@dataclass
class SseClient:
    """Reads one encounter stream in a thread and keeps the entry ids it receives."""

    url: str
    cookie: str
    last_id: str | None = None
    entries: list[int] = field(default_factory=list)
    hello: threading.Event = field(default_factory=threading.Event)
    closed: threading.Event = field(default_factory=threading.Event)

    def start(self) -> SseClient:
        threading.Thread(target=self._run, daemon=True).start()
        assert self.hello.wait(15), f"no hello from {self.url}"
        return self

    def _run(self) -> None:
        headers = {"Last-Event-ID": self.last_id} if self.last_id else {}
        try:
            with httpx.stream(
                "GET",
                self.url,
                headers=headers,
                cookies={"sessionid": self.cookie},
                timeout=httpx.Timeout(10.0, read=None),
            ) as response:
                event = ""
                for line in response.iter_lines():
                    if line.startswith("event: "):
                        event = line[7:]
                    elif line.startswith("id: "):
                        self.last_id = line[4:]
                        if event == "entry":
                            self.entries.append(int(line[4:]))
                    elif line == "" and event == "hello":
                        self.hello.set()
                    elif line.startswith(":"):
                        continue
                    if event == "entry" and line.startswith("id: "):
                        self.hello.set()
        except httpx.HTTPError:
            pass
        finally:
            self.closed.set()


def redis_url() -> str:
    """This xdist worker's own database on the shared Redis (skipped, or failed on CI, when
    there is none)."""
    url = worker_redis_url()
    if not url:
        if os.environ.get("CI") == "true":
            pytest.fail("CI must provide TEST_REDIS_URL (scripts/test.sh starts a Redis)")
        pytest.skip("no TEST_REDIS_URL: scripts/test.sh starts a Redis when redis-server exists")
    return url


@dataclass
class RedisServer:
    """A Redis of the test's own on a fixed port: stopped and started again, it comes back on
    the same address (and, like a Redis without persistence, empty)."""

    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        self.process = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
             "--appendonly", "no", "--loglevel", "warning"],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        if not wait_for(self.answers, 10):
            pytest.fail(f"redis-server did not start on port {self.port}")
        return self

    def answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
