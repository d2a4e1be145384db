"""A real webhook receiver on 127.0.0.1: checks each request's Standard Webhooks signature,
records it, answers the statuses it is told to (then 200), and drops ids it has seen."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from standardwebhooks.webhooks import Webhook, WebhookVerificationError


@dataclass
class Received:
    webhook_id: str
    headers: dict[str, str]
    body: bytes
    verified: bool

    @property
    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Receiver:
    secret: str = ""
    answers: list[int] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    events: list[Any] = field(default_factory=list)  # de-duplicated by webhook-id
    url: str = ""
    #: Seconds between two bytes of the answer: a slow receiver that trickles it out.
    trickle: float | None = None

    def handle(self, headers: dict[str, str], body: bytes) -> int:
        try:
            Webhook(self.secret).verify(body, headers)
            verified = True
        except WebhookVerificationError:
            verified = False
        self.received.append(Received(headers.get("webhook-id", ""), headers, body, verified))
        status = self.answers.pop(0) if self.answers else 200
        if verified and 200 <= status < 300 and headers["webhook-id"] not in self.seen:
            self.seen.add(headers["webhook-id"])
            self.events.append(json.loads(body))
        return status


def start() -> tuple[Receiver, ThreadingHTTPServer]:
    receiver = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            headers = {k.lower(): v for k, v in self.headers.items()}
            status = receiver.handle(headers, body)
            if receiver.trickle is not None:
                self.send_trickled(status, receiver.trickle)
                return
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def send_trickled(self, status: int, every: float) -> None:
            """The whole answer, status line first, one byte every ``every`` seconds."""
            answer = f"HTTP/1.1 {status} OK\r\ncontent-length: 20\r\n\r\n{'.' * 20}"
            try:
                for byte in answer.encode():
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(every)
            except OSError:  # the sender hung up
                pass
            self.close_connection = True

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return receiver, server
