"""The checks pages' forms: what a player or the GM types, parsed and bounded before the
services see it. Django's fields do the parsing: an IntegerField refuses '²' (which
``str.isdigit()`` takes and ``int()`` refuses) and a number too long to read, each with a
form error rather than a server error; a CharField refuses a NUL character (which PostgreSQL
cannot store, and SQLite would). The rules (which kind, which aptitude, which DIF) are judged
by the services, as for the API."""

from __future__ import annotations

from django import forms

ROLL_ERROR = "A d100 roll is a whole number from 1 to 100 (00 is 100)."


class RollField(forms.IntegerField):
    """A d100 typed at the table, or nothing (the server's dice)."""

    default_error_messages = {
        "invalid": ROLL_ERROR,
        "min_value": ROLL_ERROR,
        "max_value": ROLL_ERROR,
    }

    def __init__(self) -> None:
        super().__init__(required=False, min_value=1, max_value=100)


class _Form(forms.Form):
    def messages(self) -> list[str]:
        """Each error as ``field: message``, the way the pages list a service's errors."""
        return [
            f"{field}: {' '.join(str(e) for e in errors)}" for field, errors in self.errors.items()
        ]


class TargetForm(_Form):
    """What to roll, as far as it is typed rather than chosen: the discipline's name, and the
    number it is against (DIF 5..50 for a test, the opposing PRO 55..100 for a save; the
    rules say which). The chosen names (kind, aptitude, composite, a category) are checked by
    ``services.parse_target``."""

    discipline = forms.CharField(required=False, max_length=120)
    number = forms.IntegerField(
        required=False,
        min_value=5,
        max_value=100,
        error_messages={"invalid": "A DIF from 5 to 50, or a PRO from 55 to 100."},
    )


class RollForm(TargetForm):
    """A check rolled from the sheet."""

    roll = RollField()
    note = forms.CharField(required=False, max_length=80)


class CallForm(TargetForm):
    """The GM's call for a check (the characters asked are read with ``sheets.ids``)."""

    note = forms.CharField(required=False, max_length=80)


class AnswerForm(_Form):
    """A player's answer to a call, or a Fate re-roll: the table's d100, if any."""

    roll = RollField()


class ResourceForm(_Form):
    """Mana or Chi spent or restored from the sheet: the points, always positive here (the
    direction says which)."""

    amount = forms.IntegerField(
        min_value=1,
        max_value=100,
        error_messages={
            "required": "How many points?",
            "invalid": "A whole number of points from 1 to 100.",
        },
    )
    note = forms.CharField(required=False, max_length=80)
