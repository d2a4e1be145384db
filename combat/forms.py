"""The encounter pages' forms that take free text."""

from __future__ import annotations

from django import forms

from combat.models import Encounter


class EncounterForm(forms.ModelForm):  # type: ignore[type-arg]  # Django's class takes no [] at runtime
    """A new encounter's name. A form, not request.POST: it strips the name, holds it to 120
    characters and refuses a NUL character (which PostgreSQL cannot store: a server error)."""

    class Meta:
        model = Encounter
        fields = ["name"]
        error_messages = {"name": {"required": "Give the encounter a name."}}

    def first_error(self) -> str:
        return next(f"{message}" for errors in self.errors.values() for message in errors)
