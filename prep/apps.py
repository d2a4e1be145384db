from __future__ import annotations

from django.apps import AppConfig


class PrepConfig(AppConfig):
    name = "prep"
    verbose_name = "The GM's preparation: NPC library, prepared encounters, matchups"

    def ready(self) -> None:
        from prep import signals

        signals.connect()
