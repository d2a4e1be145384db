from __future__ import annotations

from django.apps import AppConfig


class CombatConfig(AppConfig):
    name = "combat"
    verbose_name = "Encounters and combat"

    def ready(self) -> None:
        from combat.live import push, wakes
        from combat.services import rows
        from sheets import signals

        # Every committed combat log entry is pushed to the encounter's open screens, each
        # with the tracker drawn once per audience; the GM's page also hears who is connected.
        push.connect_push()
        # A campaign or a sheet deleted while its fight is played waits for the action in
        # progress: the fight's encounters are locked first (combat/services/rows.py).
        signals.deleting.connect(rows.on_deleting, dispatch_uid="combat_lock_fights")
        # A player removed, a campaign, an account or an encounter deleted: the streams that
        # lost access end at once, not at their next heartbeat.
        wakes.connect_wakes()
