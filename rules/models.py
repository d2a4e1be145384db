"""The campaign roll log: rolls made on a campaign's dice pages or through the rules API with
``campaign``, kept for its table to see (summaries only: the engine is the source of truth)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models, transaction
from django.db.models import Q

from rules.engine import omg
from sheets.models import Campaign
from sheets.services import lock_campaign


class DiceRollQuerySet(models.QuerySet["DiceRoll"]):
    def recent(self, limit: int = 30) -> DiceRollQuerySet:
        """The newest rolls first, with their rollers."""
        return self.select_related("roller").order_by("-created_at", "-pk")[:limit]


class DiceRoll(models.Model):
    """A roll made for a campaign on its dice pages (or through the rules API), kept for its
    table to see. Only short summaries are stored: the dice engines are the source of truth,
    and a summary reads the same whatever later changes to the pages."""

    class System(models.TextChoices):
        OMG = "omg", "OMG"
        OGS = "ogs", "OGS"
        OKRPG = "okrpg", "OK RPG"
        ORE = "ore", "ORE"
        SDS = "sds", "Simple Die"

    class Source(models.TextChoices):
        PAGE = "page", "dice page"
        API = "api", "rules API"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="dice_rolls")
    roller = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    system = models.CharField(max_length=5, choices=System.choices)
    source = models.CharField(max_length=4, choices=Source.choices, default=Source.PAGE)
    physical = models.BooleanField(
        default=False, help_text="The dice were thrown at the table and typed in."
    )
    note = models.CharField(
        max_length=80, blank=True, help_text="What the roll was for, in the roller's words."
    )
    inputs = models.CharField(max_length=200, help_text="Short account of what was rolled.")
    outcome = models.CharField(max_length=200, help_text="Short account of what came up.")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = DiceRollQuerySet.as_manager()

    class Meta:
        # Created by combat's migrations when the roll log lived there; the table keeps its name.
        db_table = "combat_diceroll"
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["campaign", "-created_at"], name="diceroll_recent")]
        constraints = [
            models.CheckConstraint(
                condition=Q(system__in=["omg", "ogs", "okrpg", "ore", "sds"]),
                name="diceroll_system_valid",
            ),
            models.CheckConstraint(
                condition=Q(source__in=["page", "api"]), name="diceroll_source_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_system_display()}: {self.outcome}"

    @classmethod
    def record(
        cls,
        *,
        campaign: Campaign,
        roller: Any,
        result: object,
        physical: bool,
        source: str = Source.PAGE,
        note: str = "",
    ) -> DiceRoll:
        """Log a rules-engine result for the campaign, summarised by :func:`describe_roll`.
        ``Campaign.DoesNotExist`` (a 404) when the campaign was deleted meanwhile."""
        system, inputs, outcome = describe_roll(result)
        with transaction.atomic():
            # Behind a deletion of the campaign: wait for it, then a 404 (lock_campaign).
            lock_campaign(pk=campaign.pk)
            return cls.objects.create(
                campaign=campaign,
                roller=roller,
                system=system,
                source=source,
                physical=physical,
                note=note.strip()[:80],
                inputs=inputs[:200],
                outcome=outcome[:200],
            )


def _signed(n: int) -> str:
    return f" {'+' if n > 0 else '-'} {abs(n)}" if n else ""


def _faces(values: Any) -> str:
    return ", ".join(str(v) for v in values)


def describe_roll(result: object) -> tuple[str, str, str]:
    """``(system, inputs, outcome)`` in a few words each, for the campaign's roll log."""
    # Imported here rather than at the top: only the roll log needs the sibling systems.
    from rules.engine import ogs, okrpg, ore, sds

    if isinstance(result, omg.StrikeResult):
        check = result.check
        hits = len(result.hits)
        inputs = (
            f"{result.attacker.mode.value.capitalize()} strike {check.pro} v {check.dif} "
            f"against {result.defender.mode.value}"
        )
        outcome = f"{check.roll}: {check.degree.label}"
        if hits:
            outcome += f"; {hits} hit{'s' if hits != 1 else ''}, {result.damage} damage"
        return "omg", inputs, outcome
    if isinstance(result, omg.CheckResult):
        inputs = f"{result.pro} v {result.dif}" + (", fast strike" if result.second else "")
        outcome = f"{result.roll}: {result.degree.label} (SUM {result.sum})"
        if result.second is not None:
            landed = "hits" if result.second.hit else "misses"
            outcome += f"; reversed {result.second.roll} {landed}"
        return "omg", inputs, outcome
    if isinstance(result, ogs.CheckResult):
        names = " + ".join(ogs.dice_names(result.check.dice)) + _signed(result.check.flat)
        inputs = names if result.difficulty is None else f"{names} vs {result.difficulty}"
        outcome = f"{_faces(result.values)} = {result.total}"
        if result.success is not None:
            outcome += ": success" if result.success else ": failure"
        if result.stages:
            outcome += f", {result.stages} stage{'s' if result.stages != 1 else ''}"
        return "ogs", inputs, outcome
    if isinstance(result, ogs.OpenResult):
        inputs = "Open roll " + " + ".join(ogs.dice_names(result.dice)) + _signed(result.flat)
        return "ogs", inputs, f"{_faces(result.values)} = {result.total}"
    if isinstance(result, ore.OreRoll):
        parts = [f"{result.rolled or len(result.faces)} dice"]
        if result.expert is not None:
            parts.append(f"expert die on {result.expert}")
        if result.master_value is not None:
            parts.append("master die")
        if result.difficulty:
            parts.append(f"difficulty {result.difficulty}")
        best = "no set" if result.best is None else f"{result.best} to the {result.location}"
        return "ore", ", ".join(parts), f"{_faces(result.faces)}: {best}"
    if isinstance(result, sds.SdsResult):
        inputs = f"Skill {result.effective_skill} on a d{result.die}"
        if len(result.skill_rolls) > 1:
            inputs += ", unskilled"
        if result.gm_die is not None:
            inputs += f" vs the GM's d{result.gm_die}"
        elif result.gm_result is not None:
            inputs += f" vs Hard {result.gm_result}"
        outcome = f"{_faces(result.skill_rolls)}, flag {_faces(result.flag.rolls)}: "
        outcome += str(result.skill_result)
        if result.multiplier > 1:
            outcome += f" x {result.multiplier} = {result.result}"
        if result.flags:
            outcome += f" ({', '.join(result.flags)})"
        if result.winner is not None:
            who = "the player" if result.winner == "player" else "the GM"
            outcome += f" against {result.gm_result}: {who} wins"
        return "sds", inputs, outcome
    if isinstance(result, okrpg.TideResult):
        kept = {"normal": "", "worse": ", worse of two", "better": ", better of two"}
        inputs = f"Tide of Battle{kept.get(result.mode, '')}"
        outcome = f"{_faces(result.dice)}: {result.value}"
        if result.edge:
            outcome += ", an edge"
        elif result.setback:
            outcome += ", a setback"
        return "okrpg", inputs, outcome
    raise TypeError(f"no roll log summary for {type(result).__name__}")
