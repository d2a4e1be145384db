"""``check_resolved``: sent once a check's transaction commits (never when it rolls back), for
the webhooks (integrations.hooks) and anything else that follows the table's rolls. A secret
check is sent too, and again when the GM reveals it: listeners redact what they must."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from django.db import transaction
from django.dispatch import Signal

if TYPE_CHECKING:
    from checks.models import Check

check_resolved = Signal()


def announce(check: Check) -> None:
    transaction.on_commit(
        partial(check_resolved.send_robust, sender=type(check), check=check), robust=True
    )
