"""The creation wizard: the seed's creation rules as one form that checks itself as you fill
it in (aptitude method, archetype, the 7 points), then builds the sheet."""

from __future__ import annotations

import random
from typing import Any

from django import forms

from rules.engine import RulesError, omg
from rules.engine.omg_data import (
    APTITUDES,
    ARCHETYPE_CHOICES,
    ARCHETYPES,
    ARMORS,
    SECONDARY_LISTS,
    WEAPON_CATEGORY_CHOICES,
    WEAPONS,
)

EXTRA_ROWS = 5
METHOD_CHOICES = (
    ("2d6", "Roll 2d6 per aptitude, keep the higher"),
    ("7d6", "Roll 7d6 and place them yourself"),
    ("manual", "Type the aptitudes in (with your GM's approval)"),
)
DICE_NEEDED = {"2d6": 14, "7d6": 7}


def all_disciplines() -> list[str]:
    names = {d for a in ARCHETYPES for d in a.pool} | {
        d for names in SECONDARY_LISTS.values() for d in names
    }
    return sorted(names)


class CreationForm(forms.Form):
    # Name and archetype are needed to create, not to roll or check along the way: a player
    # who presses "Roll for me" first is not told off for fields they have not reached yet.
    name = forms.CharField(max_length=120, required=False)
    method = forms.ChoiceField(choices=METHOD_CHOICES, widget=forms.RadioSelect, initial="2d6")
    dice = forms.CharField(
        required=False,
        max_length=120,
        help_text="The d6 you rolled, separated by spaces: 14 for 2d6 (two per aptitude, in "
        "the order below), 7 for 7d6. Or press “Roll for me”: the server rolls once per "
        "method for this character, and the sheet records whose dice they were.",
    )
    archetype = forms.ChoiceField(choices=(("", "—"), *ARCHETYPE_CHOICES), required=False)
    weapon_category = forms.ChoiceField(
        choices=(("", "—"), *WEAPON_CATEGORY_CHOICES),
        required=False,
        help_text="Warriors only: the weapon category of their starting Weapon Mastery.",
    )
    weapon = forms.ChoiceField(
        required=False,
        choices=(("", "—"), *((w.name, f"{w.name} (DMG {w.dmg})") for w in WEAPONS if w.category)),
        help_text="A starting weapon from the table.",
    )
    armor = forms.ChoiceField(
        required=False,
        choices=(("", "—"), *((a.name, f"{a.name} (ARM {a.arm})") for a in ARMORS)),
        help_text="Worn on every zone but the head.",
    )
    equipment = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))
    weight = forms.IntegerField(
        required=False,
        min_value=14,
        max_value=100_000,
        label="Weight (lb)",
        help_text="Sets BZF (weight / 14). Leave empty to roll BZF as 6 + 2d6.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for apt in APTITUDES:
            self.fields[apt.abbr.lower()] = forms.IntegerField(
                label=f"{apt.name} ({apt.abbr})",
                required=False,
                min_value=1,
                max_value=6,
                help_text="7d6: the die you place here. Manual: 1 to 5.",
            )
        self.free: tuple[str, ...] = ()
        archetype = self.data.get("archetype") or self.initial.get("archetype")
        category = self.data.get("weapon_category") or None
        try:
            self.free = omg.free_disciplines(archetype, category) if archetype else ()
        except RulesError:
            self.free = ()
        for index, discipline in enumerate(self.free):
            self.fields[f"free_{index}"] = forms.IntegerField(
                label=discipline,
                min_value=1,
                max_value=3,
                initial=1,
                required=False,
                widget=forms.NumberInput(attrs={"placeholder": "1"}),
            )
        for index in range(EXTRA_ROWS):
            self.fields[f"extra_name_{index}"] = forms.CharField(
                label="Discipline", required=False, max_length=120
            )
            self.fields[f"extra_rank_{index}"] = forms.IntegerField(
                label="Rank", required=False, min_value=1, max_value=3
            )
        self.summary: omg.CreationSummary | None = None
        self.aptitude_roll: omg.AptitudeRoll | None = None

    def free_fields(self) -> list[forms.BoundField]:
        return [self[f"free_{i}"] for i in range(len(self.free))]

    def extra_fields(self) -> list[tuple[forms.BoundField, forms.BoundField]]:
        return [(self[f"extra_name_{i}"], self[f"extra_rank_{i}"]) for i in range(EXTRA_ROWS)]

    def aptitude_fields(self) -> list[forms.BoundField]:
        return [self[a.abbr.lower()] for a in APTITUDES]

    def _dice(self, method: str) -> list[int]:
        raw = self.cleaned_data.get("dice", "").replace(",", " ").split()
        try:
            values = [int(v) for v in raw]
        except ValueError:
            raise forms.ValidationError({"dice": "Dice are whole numbers from 1 to 6."}) from None
        if len(values) != DICE_NEEDED[method]:
            raise forms.ValidationError(
                {"dice": f"Method {method} needs {DICE_NEEDED[method]} dice, got {len(values)}."}
            )
        if any(not 1 <= v <= 6 for v in values):
            raise forms.ValidationError({"dice": "Dice are whole numbers from 1 to 6."})
        return values

    def _aptitudes(self, method: str) -> omg.AptitudeRoll:
        typed = {a.abbr: self.cleaned_data.get(a.abbr.lower()) for a in APTITUDES}
        if method == "2d6":
            values = self._dice(method)
            return omg.aptitudes_from_2d6([values[i : i + 2] for i in range(0, 14, 2)])
        if method == "7d6":
            self._dice(method)  # bad dice are named before the aptitudes they would fill
        missing = [abbr for abbr, v in typed.items() if v is None]
        if missing:
            raise forms.ValidationError(
                f"Give every aptitude a value (missing: {', '.join(missing)})."
            )
        given = {abbr: v for abbr, v in typed.items() if v is not None}  # all of them, as checked
        if method == "7d6":
            return omg.aptitudes_from_7d6(self._dice(method), given)
        return omg.manual_aptitudes(given)

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        method = data.get("method")
        archetype = data.get("archetype")
        if self.data.get("action") == "create":
            for name in ("name", "archetype"):
                if not data.get(name) and name not in self.errors:
                    self.add_error(name, "This field is required.")
        if method and not archetype:
            # Before the archetype, the dice are checked and 2d6 aptitudes shown; placing 7d6
            # or typing aptitudes is not asked for yet.
            try:
                if method == "2d6":
                    self.aptitude_roll = self._aptitudes(method)
                elif method == "7d6" and data.get("dice"):
                    self._dice(method)
            except RulesError as exc:
                self.add_error(None, str(exc))
            except forms.ValidationError as exc:
                self.add_error(None, exc)
        if not method or not archetype:
            return data
        ranks: dict[str, int] = {}
        for index, discipline in enumerate(self.free):
            ranks[discipline] = data.get(f"free_{index}") or 1
        for index in range(EXTRA_ROWS):
            name = (data.get(f"extra_name_{index}") or "").strip()
            rank = data.get(f"extra_rank_{index}")
            if name and rank:
                if name in ranks:
                    self.add_error(f"extra_name_{index}", f"{name} is already on the list above.")
                    continue
                ranks[name] = rank
            elif name or rank:
                self.add_error(f"extra_rank_{index}", "Give both the discipline and its rank.")
        try:
            self.aptitude_roll = self._aptitudes(method)
        except RulesError as exc:
            self.add_error(None, str(exc))
        except forms.ValidationError as exc:
            self.add_error(None, exc)
        try:
            self.summary = omg.validate_creation(
                archetype, ranks, weapon_category=data.get("weapon_category") or None
            )
        except RulesError as exc:
            self.add_error(None, str(exc))
        return data


def roll_dice_for(method: str, rng: random.Random) -> str:
    """Dice for the 'Roll for me' button, in the form's text format."""
    count = DICE_NEEDED.get(method, 0)
    return " ".join(str(rng.randint(1, 6)) for _ in range(count))
