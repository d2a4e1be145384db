"""The one-screen NPC form: a stat block's numbers as fields, its rows as short lines of text
(one discipline, weapon or zone a line), read into the same document a JSON import gives and
validated the same way (prep/statblock.py)."""

from __future__ import annotations

import re
from typing import Any

from django import forms

from prep.models import PreparedEncounter
from rules.engine.omg_data import ARMORS_BY_NAME, DEFAULT_ZONES, WEAPONS_BY_NAME
from sheets.models import APTITUDE_FIELDS

APTITUDE_LABELS = {f: f.upper() for f in APTITUDE_FIELDS}
_ARMORS_LOWER = {name.lower(): name for name in ARMORS_BY_NAME}

# The lines are read by splitting them (str.rpartition, str.rsplit) and by patterns that match
# a few characters of a known shape: nothing here backtracks, so a line costs time in
# proportion to its length, and no line is longer than MAX_LINE. ("name, white space, digits"
# as one pattern, `.+?\s+\d+`, took seconds on "a", 40,000 blanks, "b".)
MAX_LINE = 200
#: A number in a line: a level, DMG, ARM or bonus is at most 5; six digits say "too large"
#: without int() ever reading thousands of digits (it refuses more than 4,300: a server error).
MAX_DIGITS = 6
_CATEGORY = re.compile(r"([IVX]+)\s*,\s*DMG\s*([0-9]+)", re.IGNORECASE)
_ARM = re.compile(r"ARM\s*([0-9]+)", re.IGNORECASE)


class FormatError(ValueError):
    pass


def _lines(text: str, what: str) -> list[str]:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:
        if len(line) > MAX_LINE:
            raise FormatError(
                f"{what}: a line is at most {MAX_LINE} characters; “{line[:40]}…” is longer."
            )
    return lines


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _number(text: str, what: str, line: str) -> int:
    if len(text) > MAX_DIGITS:
        raise FormatError(f"{what}: the number in “{line[:40]}” is far too large.")
    return int(text)


def _bonus(text: str, what: str) -> tuple[str, int]:
    """``"Long Sword +1"`` -> ``("Long Sword", 1)``: a trailing ``+n``, if any."""
    head, plus, tail = text.rpartition("+")
    if plus and _digits(tail):
        return head.rstrip(), _number(tail, what, text)
    return text, 0


def parse_disciplines(text: str, before: list[dict[str, Any]]) -> list[dict[str, Any]]:
    paired = {d["name"]: d.get("aptitude", "SKL") for d in before}
    out = []
    for line in _lines(text, "Disciplines"):
        parts = line.rsplit(None, 1)
        if len(parts) == 2 and _digits(parts[1]):
            name, level = parts[0], _number(parts[1], "Disciplines", line)
        else:
            name, level = line, 1
        out.append({"name": name, "level": level, "aptitude": paired.get(name, "SKL")})
    return out


def parse_weapons(text: str) -> list[dict[str, Any]]:
    out = []
    for line in _lines(text, "Weapons"):
        name, bonus = _bonus(line, "Weapons")
        opening = name.rfind("(")
        spec_text = name[opening + 1 : -1] if name.endswith(")") and opening > 0 else ""
        written = _CATEGORY.fullmatch(spec_text)
        if written is not None:
            dmg = _number(written[2], "Weapons", line)
            out.append(
                {
                    "name": name[:opening].strip(),
                    "category": written[1].upper(),
                    "dmg": dmg,
                    "dmg_max": dmg,
                    "bonus": bonus,
                }
            )
            continue
        name = name.strip()
        spec = WEAPONS_BY_NAME.get(name) or next(
            (w for n, w in WEAPONS_BY_NAME.items() if n.lower() == name.lower()), None
        )
        if spec is None or spec.category is None:
            raise FormatError(
                f"Weapons: “{name}” is not a melee weapon of the table; write it as "
                f"“{name} (I, DMG 2)” with its category and DMG."
            )
        out.append(
            {
                "name": spec.name,
                "category": spec.category,
                "dmg": spec.dmg,
                "dmg_max": spec.dmg,
                "bonus": bonus,
            }
        )
    return out


def parse_zones(text: str) -> list[dict[str, Any]]:
    out = []
    for position, line in enumerate(_lines(text, "Zones")):
        name, _, armor = line.partition(":")
        zone: dict[str, Any] = {"name": name.strip(), "position": position}
        armor = armor.strip()
        if armor:
            kind, bonus = _bonus(armor, "Zones")
            kind = kind.strip()
            if "+" in kind:
                raise FormatError(f"Zones: cannot read the armor of “{line}”.")
            arm = _ARM.fullmatch(kind)
            if arm is not None:
                value = _number(arm[1], "Zones", line)
                zone.update(arm=value, arm_max=value)
            else:
                found = _ARMORS_LOWER.get(kind.lower())
                if found is None:
                    known = ", ".join(ARMORS_BY_NAME)
                    raise FormatError(
                        f"Zones: “{armor}” is not an armor of the table ({known}), nor ARM n."
                    )
                zone["armor_type"] = found
            zone["arm_bonus"] = bonus
        out.append(zone)
    return out


def disciplines_text(rows: list[dict[str, Any]]) -> str:
    return "\n".join(f"{d['name']} {d['level']}" for d in rows)


def weapons_text(rows: list[dict[str, Any]]) -> str:
    lines = []
    for w in rows:
        spec = WEAPONS_BY_NAME.get(w["name"])
        plain = spec is not None and spec.category == w["category"] and spec.dmg == w["dmg_max"]
        text = w["name"] if plain else f"{w['name']} ({w['category']}, DMG {w['dmg_max']})"
        lines.append(text + (f" +{w['bonus']}" if w.get("bonus") else ""))
    return "\n".join(lines)


def zones_text(rows: list[dict[str, Any]]) -> str:
    lines = []
    for z in rows:
        armor = z.get("armor_type") or (f"ARM {z['arm_max']}" if z.get("arm_max") else "")
        if armor and z.get("arm_bonus"):
            armor += f" +{z['arm_bonus']}"
        lines.append(f"{z['name']}: {armor}" if armor else z["name"])
    return "\n".join(lines)


class NpcForm(forms.Form):
    name = forms.CharField(max_length=120)
    foc = forms.IntegerField(label="FOC", min_value=1, max_value=5, initial=2)
    spd = forms.IntegerField(label="SPD", min_value=1, max_value=5, initial=2)
    skl = forms.IntegerField(label="SKL", min_value=1, max_value=5, initial=2)
    vgr = forms.IntegerField(label="VGR", min_value=1, max_value=5, initial=2)
    nrv = forms.IntegerField(label="NRV", min_value=1, max_value=5, initial=2)
    chr = forms.IntegerField(label="CHR", min_value=1, max_value=5, initial=2)
    svy = forms.IntegerField(label="SVY", min_value=1, max_value=5, initial=2)
    weight = forms.IntegerField(
        label="Weight (lb)", required=False, min_value=14, max_value=100_000, initial=168
    )
    bzf = forms.IntegerField(
        label="or BZF",
        required=False,
        min_value=1,
        max_value=7_000,
        help_text="Leave blank: weight / 14.",
    )
    disciplines = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        initial="Melee Combat 1",
        help_text="One a line with its level: Melee Combat 2",
    )
    weapons = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="From the table (Hatchet, Long Sword +1) or Bite (I, DMG 2)",
    )
    zones = forms.CharField(
        label="Zones and armor",
        widget=forms.Textarea(attrs={"rows": 4}),
        initial="\n".join(DEFAULT_ZONES),
        help_text="One zone a line, armor after a colon: chest: Chain mail, body: ARM 1",
    )
    notes = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))

    @classmethod
    def initial_from(cls, sheet: dict[str, Any]) -> dict[str, Any]:
        initial = {k: sheet.get(k) for k in ("name", *APTITUDE_FIELDS, "weight", "notes")}
        if sheet.get("bzf") and not sheet.get("weight"):
            initial["bzf"] = sheet["bzf"]
        initial["disciplines"] = disciplines_text(sheet.get("disciplines", []))
        initial["weapons"] = weapons_text(sheet.get("weapons", []))
        initial["zones"] = zones_text(sheet.get("zones", []))
        return initial

    def document(self, before: dict[str, Any]) -> dict[str, Any]:
        """The stat block document the form describes (raises FormatError on a line it cannot
        read); what the form does not show (occupation, archetype...) stays as it was."""
        d = self.cleaned_data
        keep = {
            k: v
            for k, v in before.items()
            if k not in ("disciplines", "weapons", "zones", "weight", "bzf", "bzf_rolled")
        }
        doc: dict[str, Any] = {**keep, "name": d["name"], "notes": d["notes"]}
        doc.update({f: d[f] for f in APTITUDE_FIELDS})
        if d.get("bzf"):
            doc.update(bzf=d["bzf"], bzf_rolled=True, weight=d.get("weight"))
        elif d.get("weight"):
            doc.update(weight=d["weight"])
        else:
            raise FormatError("Give a weight (BZF = weight / 14) or a BZF.")
        doc["disciplines"] = parse_disciplines(d["disciplines"], before.get("disciplines", []))
        doc["weapons"] = parse_weapons(d["weapons"])
        doc["zones"] = parse_zones(d["zones"])
        return doc


class PreparedForm(forms.ModelForm):  # type: ignore[type-arg]  # Django's class takes no [] at runtime
    """A prepared encounter's name and notes, on its list page (the name alone) and its own
    page. A form, not request.POST: it strips the name, holds it to 120 characters and
    refuses a NUL character (which PostgreSQL cannot store: a server error)."""

    class Meta:
        model = PreparedEncounter
        fields = ["name", "notes"]
        error_messages = {"name": {"required": "Give the prepared encounter a name."}}

    def first_error(self) -> str:
        return next(f"{message}" for errors in self.errors.values() for message in errors)
