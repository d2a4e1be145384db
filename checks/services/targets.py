"""What a check rolls: the target as asked (kind, names, what it is against), validated, and
the engine's check for one character's sheet."""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ValidationError

from checks.models import CheckCall
from rules.engine import RulesError, omg
from sheets.models import Character, Discipline
from sheets.numbers import aptitudes_of
from sheets.services import guess_aptitude

COMPOSITE_ABBRS = tuple(c.abbr for c in omg.COMPOSITES)


@dataclass(frozen=True)
class Target:
    """What a check rolls, as asked: the kind and its names, and what it is against."""

    kind: str
    against: int
    aptitude: str = ""
    discipline: str = ""
    composite: str = ""


def parse_target(
    *,
    kind: object,
    against: object,
    aptitude: object = "",
    discipline: object = "",
    composite: object = "",
) -> Target:
    """Validate what to roll: ValidationError naming the field that is wrong.

    ``against`` is a number (an ``int``, as a form or a serializer parsed it) or a name; a
    string is only ever a name, so '²' or 5,000 digits are an unknown name, not a number."""
    if kind not in {k.value for k in omg.CheckKind}:
        raise ValidationError({"kind": "Choose aptitude, discipline, composite or save."})
    aptitude = aptitude or ""
    discipline = discipline or ""
    composite = composite or ""
    if not isinstance(aptitude, str) or (aptitude and aptitude not in omg.APTITUDE_ABBRS):
        raise ValidationError({"aptitude": f"One of {', '.join(omg.APTITUDE_ABBRS)}."})
    if not isinstance(discipline, str) or len(discipline) > 120:
        raise ValidationError({"discipline": "A discipline's name, at most 120 characters."})
    if not isinstance(composite, str) or (composite and composite not in COMPOSITE_ABBRS):
        raise ValidationError({"composite": f"One of {', '.join(COMPOSITE_ABBRS)}."})
    if kind == "aptitude" and not aptitude:
        raise ValidationError({"aptitude": "Choose the aptitude to roll."})
    if kind == "discipline" and not discipline.strip():
        raise ValidationError({"discipline": "Choose the discipline to roll."})
    if kind in ("composite", "save") and not composite:
        raise ValidationError({"composite": "Choose the composite to roll."})
    if not isinstance(against, int | str) or isinstance(against, bool):
        raise ValidationError({"against": "A Difficulty Category or a number."})
    try:
        value = omg.against_value(str(kind), against)
    except RulesError as exc:
        raise ValidationError({"against": str(exc)}) from exc
    return Target(
        str(kind),
        value,
        aptitude if kind in ("aptitude", "discipline") else "",
        discipline.strip() if kind == "discipline" else "",
        composite if kind in ("composite", "save") else "",
    )


def parse_roll(roll: object) -> int | None:
    """A typed d100 (an ``int``, as a form or a serializer parsed it), or None for the
    server's dice."""
    if roll is None:
        return None
    if isinstance(roll, bool) or not isinstance(roll, int) or not 1 <= roll <= 100:
        raise ValidationError({"roll": "A d100 roll is a whole number from 1 to 100 (00 is 100)."})
    return roll


def target_of(call: CheckCall, aptitude: str = "") -> Target:
    """What ``call`` asks to roll (``aptitude``: the one the player chose instead)."""
    return Target(
        call.kind, call.against, aptitude or call.aptitude, call.discipline, call.composite
    )


def discipline_row(character: Character, name: str) -> Discipline | None:
    """The sheet's discipline called ``name`` (whatever its case), if any."""
    return character.disciplines.filter(name__iexact=name).order_by("pk").first()


def spec_for(
    character: Character, target: Target, *, lenient: bool = False
) -> tuple[omg.SheetCheck, str, int]:
    """The engine's check for ``character``, and the aptitude and discipline level it uses.

    A discipline the sheet lacks is refused, unless ``lenient`` (a GM's call): then the check
    is undisciplined, on the aptitude alone (docs/rules.md, "Checks outside combat")."""
    aptitude, level = target.aptitude, 0
    if target.kind == "discipline":
        row = discipline_row(character, target.discipline)
        if row is None and not lenient:
            raise ValidationError(
                {"discipline": f"{character.name} has no discipline named {target.discipline}."}
            )
        if row is not None:
            level = row.level
            aptitude = aptitude or row.aptitude
        aptitude = aptitude or guess_aptitude(target.discipline)
    apts = aptitudes_of(character)
    try:
        if target.kind in ("composite", "save"):
            value = omg.composites(apts).as_dict()[target.composite]
            spec = omg.sheet_check(target.kind, composite=value, against=target.against)
        else:
            spec = omg.sheet_check(
                target.kind,
                aptitude=getattr(apts, aptitude.lower()),
                discipline=level,
                against=target.against,
            )
    except RulesError as exc:
        raise ValidationError({"character": f"{character.name}'s sheet: {exc}"}) from exc
    return spec, aptitude, level
