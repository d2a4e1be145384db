"""OpenAPI description of our token authentication (imported by SheetsConfig.ready)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiTokenScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]  # drf-spectacular is untyped
    target_class = "sheets.authentication.ApiTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        # HTTP bearer is what generated clients send by default; the older
        # `Token <key>` prefix takes the same keys (sheets/authentication.py).
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "`Bearer <key>` (or `Token <key>`); create keys on the API tokens "
            "page or with `POST /api/tokens/`.",
        }
