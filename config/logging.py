"""Log lines: one JSON object per line in production, plain text on a laptop.

``LOG_FORMAT`` chooses (``json`` or ``text``; by default text with ``DEBUG=1`` and JSON with
``DEBUG=0``), ``LOG_LEVEL`` sets the level. Every line written while a request is served
carries that request's id (:data:`REQUEST_ID`, set by :mod:`config.request_log`), so the lines
of one request can be found together, across processes, and matched with the proxy's log
through the ``X-Request-ID`` header.

Secrets never reach a log line: values of fields whose name says credential (authorization,
cookie, password, token, secret, session, csrf, api key) are replaced by ``[redacted]``, as are
credentials written inside a message (``Token abc...``, ``password=...``). Objects that are not
plain data are left out rather than turned into text: Django attaches the request to its
``django.request`` lines, and its text holds the query string.
"""

from __future__ import annotations

import json
import logging
import logging.config
import os
import re
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

#: The id of the request being served in this context (None outside a request).
REQUEST_ID: ContextVar[str | None] = ContextVar("request_id", default=None)

REDACTED = "[redacted]"
FORMATS = ("json", "text")
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")

_SECRET_NAME = re.compile(
    r"authorization|cookie|passw|secret|token|api[-_]?key|session|csrf|signature", re.IGNORECASE
)
# An Authorization header's credentials: "Token 5Gm...", "Bearer ey...", "Basic dXNl...".
_CREDENTIALS = re.compile(r"\b(Token|Bearer|Basic)(\s+)[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE)
# name=value and name: value pairs (query strings, forms, reprs), redacted when the name says
# secret. Read in one pass with no pattern free to backtrack: the name is a whole word found
# once, and the value is read from where it starts. The pattern before,
# [\w-]*(?:token|...)[\w-]*, tried every word from each of its letters, and a path of 5,000
# letters (a 404 logs it) took 6 s to scrub, 20,000 a minute.
_NAME_AND_SEPARATOR = re.compile(r"""(?<![\w-])([\w-]+)(["']?\s*[=:]\s*)""")
_SECRET_PAIR_NAME = re.compile(r"passw|secret|token|api[-_]?key|sessionid|csrf", re.IGNORECASE)
_BARE_VALUE = re.compile(r"""[^\s&,;'"]+""")


def _value_end(text: str, start: int) -> int:
    """Where the value starting at ``start`` ends: a quoted one at its closing quote (the
    rest of the text if it has none), a bare one at a blank or a separator."""
    if text[start : start + 1] in ('"', "'"):
        close = text.find(text[start], start + 1)
        return len(text) if close == -1 else close + 1
    bare = _BARE_VALUE.match(text, start)
    return bare.end() if bare else start


def _scrub_pairs(text: str) -> str:
    out: list[str] = []
    done = 0
    for pair in _NAME_AND_SEPARATOR.finditer(text):
        if pair.start() < done or not _SECRET_PAIR_NAME.search(pair[1]):
            continue
        end = _value_end(text, pair.end())
        if end > pair.end():
            out += [text[done : pair.end()], REDACTED]
            done = end
    out.append(text[done:])
    return "".join(out)


# Attributes every LogRecord has: anything else on a record came from ``extra=``. uvicorn
# adds ``color_message``, the message again with terminal colour codes.
_RECORD_FIELDS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {
    "message",
    "asctime",
    "color_message",
}


def scrub(text: str) -> str:
    """``text`` with the credentials it names replaced.

    >>> scrub("Authorization: Token 5GmXkq0vJ7 sent; password=hunter2&next=/")
    'Authorization: Token [redacted] sent; password=[redacted]&next=/'
    """
    return _scrub_pairs(_CREDENTIALS.sub(r"\1\2" + REDACTED, text))


class _Skip:
    pass


_SKIP = _Skip()


def _plain(name: str, value: Any) -> Any:
    """``value`` as JSON-ready data, redacted by its name; _SKIP for other objects."""
    if _SECRET_NAME.search(name):
        return REDACTED
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        out = {str(k): _plain(str(k), v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v is not _SKIP}
    if isinstance(value, list | tuple):
        return [v for v in (_plain(name, item) for item in value) if v is not _SKIP]
    return _SKIP


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line: time (UTC), level, logger, message, the
    process id, the fields given with ``extra=`` and the traceback, if any."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": scrub(record.getMessage()),
            "pid": record.process,
        }
        for name, value in vars(record).items():
            if name in _RECORD_FIELDS or name.startswith("_") or name in out:
                continue
            plain = _plain(name, value)
            if plain is not _SKIP:
                out[name] = plain
        if record.exc_info:
            out["exc"] = scrub(self.formatException(record.exc_info))
        if record.stack_info:
            out["stack"] = scrub(self.formatStack(record.stack_info))
        return json.dumps(out, default=str)


class TextFormatter(logging.Formatter):
    """Django's usual one-line text, with the same redaction as the JSON lines."""

    def format(self, record: logging.LogRecord) -> str:
        return scrub(super().format(record))


class RequestContextFilter(logging.Filter):
    """Stamps each record with the id of the request being served, when there is one."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "request_id", None) is None:
            # django.request logs a 4xx after the middleware is done, with the request.
            request_id = REQUEST_ID.get() or getattr(
                getattr(record, "request", None), "request_id", None
            )
            if request_id is not None:
                record.request_id = request_id
        return True


def logging_config(*, fmt: str, level: str) -> dict[str, Any]:
    """The ``LOGGING`` setting: every line to stderr in ``fmt`` (json or text) from ``level``
    up. Django's and uvicorn's own loggers write through the same handler, so that a process
    writes one format only."""
    from django.core.exceptions import ImproperlyConfigured

    if fmt not in FORMATS:
        raise ImproperlyConfigured(f"LOG_FORMAT must be json or text, not {fmt!r}")
    level = level.upper()
    if level not in LEVELS:
        raise ImproperlyConfigured(f"LOG_LEVEL must be one of {', '.join(LEVELS)}, not {level!r}")
    formatter: dict[str, Any] = (
        {"()": JsonFormatter}
        if fmt == "json"
        else {"()": TextFormatter, "format": "%(asctime)s %(levelname)s %(name)s %(message)s"}
    )
    own = {"handlers": ["console"], "level": level, "propagate": False}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"request": {"()": RequestContextFilter}},
        "formatters": {"main": formatter},
        "handlers": {
            "console": {
                "class": "logging.StreamHandler",
                "formatter": "main",
                "filters": ["request"],
            }
        },
        "root": {"handlers": ["console"], "level": level},
        "loggers": {
            # Django's default handlers print the same lines again, in another format.
            "django": own,
            "django.db.backends": {"level": "WARNING"},
            "uvicorn": own,
            # config.request_log writes one line per request with more in it (request id,
            # user, duration) and without the query string uvicorn's access line shows.
            "uvicorn.access": {"level": "WARNING"},
            # Python's warnings too (see configure), rather than bare text on stderr.
            "py.warnings": own,
        },
    }


def configure(config: dict[str, Any]) -> None:
    """``LOGGING_CONFIG``: Django's dictConfig, and warnings logged when the configuration
    routes ``py.warnings`` (Django no longer captures them itself)."""
    logging.config.dictConfig(config)
    if "py.warnings" in config.get("loggers", {}):
        logging.captureWarnings(True)


def from_environment(*, debug: bool) -> dict[str, Any]:
    """``logging_config`` from ``LOG_FORMAT`` and ``LOG_LEVEL``."""
    fmt = os.environ.get("LOG_FORMAT", "").strip().lower() or ("text" if debug else "json")
    return logging_config(fmt=fmt, level=os.environ.get("LOG_LEVEL", "").strip() or "INFO")
