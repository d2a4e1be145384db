from __future__ import annotations

from django.apps import AppConfig


class ChecksConfig(AppConfig):
    name = "checks"
    verbose_name = "Checks outside combat"

    def ready(self) -> None:
        from checks import live

        # The GM's calls for checks reach the asked players' pages, and the answers the GM's.
        live.connect_news()
