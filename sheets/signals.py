"""Signals for the layers above (integrations' webhooks listen)."""

from __future__ import annotations

from django.dispatch import Signal

#: Sent inside the transaction of a character's daily rest: ``character``.
rested = Signal()
