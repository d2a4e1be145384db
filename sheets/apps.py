from __future__ import annotations

from django.apps import AppConfig


class SheetsConfig(AppConfig):
    name = "sheets"
    verbose_name = "Campaigns and character sheets"

    def ready(self) -> None:
        from sheets import (
            accounts,  # noqa: F401  remembers who logs in with which session
            schema,  # noqa: F401  registers the OpenAPI auth extension
        )
