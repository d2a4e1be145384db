"""Schema fuzzing: schemathesis generates requests for every operation of the OpenAPI schema and
sends them in-process (WSGI) as a GM with an API token. No request may end in a server error,
and every answer must have a status and a body that the schema documents.

Fixed seed (``derandomize``) and a bounded number of examples per operation keep the run
repeatable and under a minute.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.core.cache import cache
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    response_schema_conformance,
    status_code_conformance,
)

from sheets.models import ApiToken
from tests.security.pages import demo_table

EXAMPLES_PER_OPERATION = 8
CHECKS = [not_a_server_error, status_code_conformance, response_schema_conformance]


def load_schema() -> Any:
    """The schema exactly as /api/schema/ serves it, built in-process (no database needed), and
    sent to the WSGI application itself."""
    generator = SchemaGenerator()
    raw = json.loads(json.dumps(generator.get_schema(request=None, public=True), default=str))
    loaded = schemathesis.openapi.from_dict(raw)
    loaded.app = get_wsgi_application()
    return loaded


schema = load_schema()


@pytest.fixture
def gm_token(db: None, settings: Any) -> Iterator[str]:
    # The rules API's throttles would answer 429 to the fuzzer long before it is done.
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            **settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],
            "rules_anon": "100000/min",
            "rules_user": "100000/min",
        },
    }
    cache.clear()
    demo = demo_table()
    _, key = ApiToken.objects.create_token(user=demo.gm, name="fuzz")
    # The WSGI handler closes "old" connections when a request starts and finishes; inside the
    # test's transaction that would close PostgreSQL's connection under it. Django's own test
    # client switches this off in the same way.
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    try:
        yield key
    finally:
        for signal in (request_started, request_finished):
            signal.connect(close_old_connections)


@schema.parametrize()
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_it_answers_every_operation_as_documented(case: Any, gm_token: str) -> None:
    case.call_and_validate(headers={"Authorization": f"Token {gm_token}"}, checks=CHECKS)
