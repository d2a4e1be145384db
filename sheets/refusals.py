"""The few ways a service says no, shared by every app: the API and the pages answer them the
same way wherever they come from.

* :class:`Refused`: not possible now (the rules, the state of the fight, an input the user can
  fix); the message says why. The API answers 400, an htmx action 422.
* :class:`Conflict`: someone else acted first (already resolved, changed since); nothing was
  done. 409 for both.
* :class:`NotFound`: no such thing, or not one the user may see. 404 for both.

Each app's own errors subclass them (``combat.services.CombatError(Refused)``,
``CombatConflict(CombatError, Conflict)``, ``prep.services.PrepError(Refused)``), so a caller
catching the app's error keeps working, and ``config.api_errors.exception_handler`` (the API)
and ``combat.views.respond`` (htmx actions) answer all of them. They live here, in the lowest
layer with Django, so that every app above can raise them.
"""

from __future__ import annotations

from typing import Any


class Refused(Exception):
    """Not possible now: the message says why. ``fields`` names the inputs at fault, when the
    refusal is about one (or more) of them: the API then answers ``{name: [reason]}`` for
    each, as it does for any invalid input, instead of ``{"detail": reason}``."""

    #: The API's status for it, and an htmx action's (which swaps in the reason).
    api_status = 400
    page_status = 422

    def __init__(self, message: str = "", *, fields: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.fields = fields

    @property
    def reason(self) -> str:
        return str(self)

    def body(self) -> dict[str, Any]:
        """The API's answer: the reason, under the fields at fault if named."""
        if self.fields:
            return {name: [self.reason] for name in self.fields}
        return {"detail": self.reason}


class Conflict(Refused):
    """Someone else acted first (already resolved, changed since): nothing was done."""

    api_status = 409
    page_status = 409


class NotFound(Refused):
    """No such object, or not one this user may see: the same answer for both, so that an
    outsider learns nothing of what exists."""

    api_status = 404
    page_status = 404

    def __init__(self, message: str = "Not found.") -> None:
        super().__init__(message)
