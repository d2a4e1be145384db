from __future__ import annotations

from django.apps import AppConfig


class IntegrationsConfig(AppConfig):
    name = "integrations"
    verbose_name = "Integrations (webhooks)"

    def ready(self) -> None:
        from integrations import hooks

        # Combat log entries (after commit), characters saved, daily rests: each becomes a
        # delivery per endpoint that asked for its event.
        hooks.connect()
