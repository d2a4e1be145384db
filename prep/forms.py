"""The one-screen NPC form: a stat block's numbers as fields, its rows as short lines of text
(one discipline, weapon or zone a line), read into the same document a JSON import gives and
validated the same way (prep/statblock.py)."""

from __future__ import annotations

import re
from typing import Any

from django import forms

from rules.engine.omg_data import ARMORS_BY_NAME, DEFAULT_ZONES, WEAPONS_BY_NAME
from sheets.models import APTITUDE_FIELDS

APTITUDE_LABELS = {f: f.upper() for f in APTITUDE_FIELDS}
_LEVEL = re.compile(r"^(?P<name>.+?)\s+(?P<level>\d+)$")
_WEAPON = re.compile(
    r"^(?P<name>.+?)(?:\s*\((?P<cat>[IVX]+)\s*,\s*DMG\s*(?P<dmg>\d+)\))?(?:\s*\+(?P<bonus>\d+))?$",
    re.IGNORECASE,
)
_ARMOR = re.compile(
    r"^(?:ARM\s*(?P<arm>\d+)|(?P<type>[^+]*?))(?:\s*\+(?P<bonus>\d+))?$", re.IGNORECASE
)
_ARMORS_LOWER = {name.lower(): name for name in ARMORS_BY_NAME}


class FormatError(ValueError):
    pass


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def parse_disciplines(text: str, before: list[dict[str, Any]]) -> list[dict[str, Any]]:
    paired = {d["name"]: d.get("aptitude", "SKL") for d in before}
    out = []
    for line in _lines(text):
        m = _LEVEL.match(line)
        name, level = (m["name"], int(m["level"])) if m else (line, 1)
        out.append({"name": name, "level": level, "aptitude": paired.get(name, "SKL")})
    return out


def parse_weapons(text: str) -> list[dict[str, Any]]:
    out = []
    for line in _lines(text):
        m = _WEAPON.match(line)
        if m is None:  # pragma: no cover - the pattern takes any line
            raise FormatError(f"Weapons: cannot read “{line}”.")
        name, bonus = m["name"].strip(), int(m["bonus"] or 0)
        if m["cat"]:
            dmg = int(m["dmg"])
            out.append(
                {"name": name, "category": m["cat"].upper(), "dmg": dmg, "dmg_max": dmg}
                | {"bonus": bonus}
            )
            continue
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
    for position, line in enumerate(_lines(text)):
        name, _, armor = line.partition(":")
        zone: dict[str, Any] = {"name": name.strip(), "position": position}
        armor = armor.strip()
        if armor:
            m = _ARMOR.match(armor)
            if m is None:
                raise FormatError(f"Zones: cannot read the armor of “{line}”.")
            if m["arm"] is not None:
                zone.update(arm=int(m["arm"]), arm_max=int(m["arm"]))
            else:
                kind = _ARMORS_LOWER.get((m["type"] or "").strip().lower())
                if kind is None:
                    known = ", ".join(ARMORS_BY_NAME)
                    raise FormatError(
                        f"Zones: “{armor}” is not an armor of the table ({known}), nor ARM n."
                    )
                zone["armor_type"] = kind
            zone["arm_bonus"] = int(m["bonus"] or 0)
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
