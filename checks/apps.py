from __future__ import annotations

from django.apps import AppConfig


class ChecksConfig(AppConfig):
    name = "checks"
    verbose_name = "Checks outside combat"
