"""Schema fuzzing: schemathesis generates requests for every operation of the OpenAPI schema,
sends them in-process (WSGI) as a GM with an API token, and runs its full default set of checks
on each answer: no server error; status code, content type, headers and body as documented;
schema-valid requests accepted and schema-violating ones refused; a required header left out
refused; an undocumented method answered 405; credentials required where the schema says so.
(Three more checks of the default set, use_after_free, ensure_resource_availability and
object_level_authorization, follow a resource across requests: they need schemathesis' stateful
runner and find nothing to compare in these one-request cases.)

The cases come from the schema's examples, from its coverage phase (each boundary, each missing
or mistyped parameter, each undocumented method) and from fuzzing in both directions: valid
requests and ones that break the schema. A fixed seed makes every run send the same requests;
``EXAMPLES_PER_OPERATION`` keeps the run at two to three minutes on CI's two cores
(docs/security.md, "The API answers as documented").
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.core.cache import cache
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections, transaction
from hypothesis import HealthCheck, seed, settings
from schemathesis.config import PositiveDataAcceptanceConfig

from config.idempotency import HEADER as IDEMPOTENCY_KEY
from sheets.models import ApiToken
from tests.openapi import openapi_schema
from tests.security.pages import demo_table

# Deep and slow: scripts/test.sh runs it once, on PostgreSQL, where an OPTIONS request once
# answered 500 while SQLite passed (see the "once" marker).
pytestmark = pytest.mark.once

EXAMPLES_PER_OPERATION = 40
SEED = 18_2026
# A schema-valid request may still break a rule no schema can state: an id that does not exist,
# DMG above the weapon's max DMG, a join code no campaign has, an expert die and a master die in
# one pool. The API answers those with a 400 naming the field (or non_field_errors) and the
# reason, so the check that valid requests are accepted takes 400 too; every other refusal of a
# valid request (405, 406, 415, 422 ...) still fails it.
VALID_BUT_REFUSED = [*PositiveDataAcceptanceConfig().expected_statuses, "400"]


def load_schema() -> Any:
    """The schema exactly as /api/schema/ serves it, built in-process (no database needed), and
    sent to the WSGI application itself."""
    # A copy: the tests sharing openapi_schema() in this process must not see what
    # schemathesis does to its own.
    loaded = schemathesis.openapi.from_dict(copy.deepcopy(openapi_schema()))
    loaded.app = get_wsgi_application()
    loaded.config.checks.positive_data_acceptance = PositiveDataAcceptanceConfig(
        expected_statuses=VALID_BUT_REFUSED
    )
    return loaded


schema = load_schema()


@pytest.fixture(scope="module")
def fuzz_table(django_db_setup: None, django_db_blocker: Any) -> Iterator[str]:
    """The demo table and the GM's API token, built once per module (per xdist worker) instead
    of once per operation: on PostgreSQL building it took about as long as fuzzing a GET. It
    lives in a transaction rolled back at the end; each operation runs in a savepoint inside
    it (the ``db`` fixture), so every one still starts from the same table."""
    with django_db_blocker.unblock(), transaction.atomic():
        demo = demo_table()
        _, key = ApiToken.objects.create_token(user=demo.gm, name="fuzz")
        yield key
        transaction.set_rollback(True)


@pytest.fixture
def gm_token(db: None, settings: Any, fuzz_table: str) -> Iterator[str]:
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
    # The WSGI handler closes "old" connections when a request starts and finishes; inside the
    # test's transaction that would close PostgreSQL's connection under it. Django's own test
    # client switches this off in the same way.
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    try:
        yield fuzz_table
    finally:
        for signal in (request_started, request_finished):
            signal.connect(close_old_connections)


def _one_key_per_request(case: Any) -> None:
    """The generator draws the same few Idempotency-Keys ("0", "A") again and again, for
    requests that differ: the API rightly answers 422 to a key reused for another request
    (config/idempotency.py), which says nothing about the request itself. A key of the right
    shape is made unique; a malformed one is kept, for the 400 it must get."""
    key = (case.headers or {}).get(IDEMPOTENCY_KEY)
    if isinstance(key, str) and 0 < len(key) <= 255 and all(" " <= c <= "~" for c in key):
        case.headers[IDEMPOTENCY_KEY] = uuid.uuid4().hex


@schema.parametrize()
@seed(SEED)
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_it_answers_every_operation_as_documented(case: Any, gm_token: str) -> None:
    _one_key_per_request(case)
    case.call_and_validate(headers={"Authorization": f"Token {gm_token}"})
