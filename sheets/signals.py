"""Signals for the layers above (integrations' webhooks listen)."""

from __future__ import annotations

from django.dispatch import Signal

#: Sent inside the transaction of a character's daily rest: ``character``.
rested = Signal()

#: Sent inside the transaction of an edit to a sheet's rows (a discipline, weapon or zone
#: added, changed or deleted) that steps the sheet's version without saving the Character row
#: itself (a save sends post_save): ``character``.
rows_changed = Signal()
