"""Signals for the layers above (integrations' webhooks listen)."""

from __future__ import annotations

from django.dispatch import Signal

#: Sent inside the transaction of a character's daily rest: ``character``.
rested = Signal()

#: Sent inside the transaction of an edit to a sheet's rows (a discipline, weapon or zone
#: added, changed or deleted) that steps the sheet's version without saving the Character row
#: itself (a save sends post_save): ``character``.
rows_changed = Signal()

#: Sent first in the transaction of a deletion, before it locks anything of its own:
#: ``campaigns`` (pks) about to be deleted with all that is in them, and ``characters`` (pks)
#: about to be deleted, handed over, or to lose a zone or a weapon. A layer above whose rows
#: go with them, or whose actions may be writing them right now, locks those rows here:
#: combat locks the fights (the encounters come first in the lock order,
#: docs/architecture.md), so the deletion waits for an action in progress, and an action
#: after it finds nothing.
deleting = Signal()
