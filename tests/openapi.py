"""The OpenAPI schema as /api/schema/ serves it, built once per test process.

Building it walks every view and serializer (about half a second); the tests that read it only
read, so they share one copy. Callers must not change what they get."""

from __future__ import annotations

import functools
import json
from typing import Any

from drf_spectacular.generators import SchemaGenerator


@functools.cache
def openapi_schema() -> dict[str, Any]:
    raw = SchemaGenerator().get_schema(request=None, public=True)
    return dict(json.loads(json.dumps(raw, default=str)))
