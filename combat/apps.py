from __future__ import annotations

from django.apps import AppConfig


class CombatConfig(AppConfig):
    name = "combat"
    verbose_name = "Encounters and combat"

    def ready(self) -> None:
        from combat import live, render

        # Every committed combat log entry is pushed to the encounter's open screens, each
        # with the tracker drawn once per audience; the GM's page also hears who is connected.
        live.connect_push()
        live.register_state_renderer(render.LiveTracker)
        live.register_presence_renderer(render.presence_panel)
