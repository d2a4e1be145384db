"""A check rolled from the sheet, a GM's call for checks, a Mana or Chi change.

A check keeps what it did to the sheet (``changes``: each field's value before and after), so
undo and Fate write the before values back exactly, after checking nothing changed them since,
as the combat log does."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models
from django.db.models import Q

from rules.engine import omg
from sheets.models import Campaign, Character

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser

    from sheets.users import User

KIND_CHOICES = [(k.value, k.value.capitalize()) for k in omg.CheckKind]
DEGREE_CHOICES = [(d.value, d.label) for d in omg.Degree]
COMPOSITE_CHOICES = [(c.abbr, c.name) for c in omg.COMPOSITES]


class CheckQuerySet(models.QuerySet["Check"]):
    def visible_to(self, user: User | AnonymousUser, campaign: Campaign) -> CheckQuerySet:
        """The GM sees every check; a player every open one of a character they may see (not an
        NPC the GM keeps to themself: docs/security.md, "Who sees an NPC"), and their own secret
        ones (which say only that they were made: the result stays the GM's)."""
        qs = self.filter(campaign=campaign)
        if campaign.gm_id == user.pk:
            return qs
        return qs.filter(character__in=Character.objects.visible_to(user)).filter(
            Q(secret=False) | Q(character__owner_id=user.pk)
        )


class CheckCall(models.Model):
    """The GM asks some of the campaign's characters for a check."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="check_calls")
    gm = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    kind = models.CharField(max_length=10, choices=KIND_CHOICES)
    aptitude = models.CharField(max_length=3, blank=True, choices=omg.APTITUDE_CHOICES)
    discipline = models.CharField(max_length=120, blank=True)
    composite = models.CharField(max_length=3, blank=True, choices=COMPOSITE_CHOICES)
    against = models.PositiveSmallIntegerField()
    secret = models.BooleanField(default=False)
    note = models.CharField(max_length=80, blank=True)
    closed = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(against__gte=5, against__lte=100), name="checkcall_against_5_100"
            ),
        ]

    def __str__(self) -> str:
        return self.label

    @property
    def label(self) -> str:
        return describe(self.kind, self.aptitude, self.discipline, self.composite, self.against)


class CheckRequest(models.Model):
    """One character asked by a call; ``check`` is their answer."""

    call = models.ForeignKey(CheckCall, on_delete=models.CASCADE, related_name="requests")
    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="+")
    check_made = models.OneToOneField(
        "Check", on_delete=models.SET_NULL, null=True, blank=True, related_name="request"
    )

    class Meta:
        ordering = ["pk"]
        constraints = [
            models.UniqueConstraint(fields=["call", "character"], name="checkrequest_once"),
        ]

    def __str__(self) -> str:
        return f"{self.call} for {self.character_id}"


class Check(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active", "active"
        REVOKED = "revoked", "revoked with Fate"
        UNDONE = "undone", "undone by the GM"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="checks")
    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="checks")
    roller = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    seq = models.PositiveIntegerField(help_text="Order of the campaign's checks and Fate spends.")
    kind = models.CharField(max_length=10, choices=KIND_CHOICES)
    aptitude = models.CharField(max_length=3, blank=True, choices=omg.APTITUDE_CHOICES)
    discipline = models.CharField(max_length=120, blank=True)
    level = models.PositiveSmallIntegerField(default=0, help_text="The discipline's level; 0 none.")
    composite = models.CharField(max_length=3, blank=True, choices=COMPOSITE_CHOICES)
    pro = models.PositiveSmallIntegerField()
    dif = models.PositiveSmallIntegerField()
    roll = models.PositiveSmallIntegerField()
    degree = models.CharField(max_length=22, choices=DEGREE_CHOICES)
    success = models.BooleanField()
    exp = models.PositiveSmallIntegerField(default=0)
    exp_on = models.CharField(max_length=10, blank=True)
    fate = models.SmallIntegerField(default=0, help_text="The Fate change the roll earned.")
    physical = models.BooleanField(default=False, help_text="Table dice, typed in.")
    secret = models.BooleanField(default=False)
    note = models.CharField(max_length=80, blank=True)
    changes = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=7, choices=Status.choices, default=Status.ACTIVE)
    replaces = models.OneToOneField(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="replaced_by"
    )
    fate_seq = models.PositiveIntegerField(null=True, blank=True)
    fate_action = models.CharField(max_length=6, blank=True)
    fate_spender = models.ForeignKey(
        Character, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    fate_changes = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = CheckQuerySet.as_manager()

    class Meta:
        ordering = ["-seq"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "seq"], name="check_seq_unique"),
            models.CheckConstraint(condition=Q(roll__gte=1, roll__lte=100), name="check_roll"),
            models.CheckConstraint(condition=Q(pro__gte=55, pro__lte=100), name="check_pro"),
            models.CheckConstraint(condition=Q(dif__gte=5, dif__lte=50), name="check_dif"),
            models.CheckConstraint(condition=Q(fate__gte=-1, fate__lte=1), name="check_fate"),
        ]

    def __str__(self) -> str:
        return f"{self.label}: {self.roll}"

    @property
    def label(self) -> str:
        against = self.pro if self.kind == omg.CheckKind.SAVE else self.dif
        return describe(self.kind, self.aptitude, self.discipline, self.composite, against)

    @property
    def degree_label(self) -> str:
        d = omg.Degree(self.degree)
        return d.label + (f" ({d.abbr})" if d.abbr else "")

    @property
    def effects(self) -> str:
        """What the roll did to the sheet, in words."""
        parts = []
        if self.exp:
            where = self.discipline if self.exp_on == "discipline" else "the sheet's EXP marks"
            parts.append(f"+{self.exp} EXP on {where}")
        if self.fate:
            parts.append(f"{self.fate:+d} Fate")
        if self.secret and self.status == self.Status.ACTIVE and not self.changes and parts:
            return "held until the GM reveals it: " + ", ".join(parts)
        return ", ".join(parts)


def describe(kind: str, aptitude: str, discipline: str, composite: str, against: int) -> str:
    """``"Lock-picking (SKL) vs Ambitious 30"``, ``"Stamina save vs PRO 70"``."""
    names = dict(omg.APTITUDE_CHOICES) | dict(COMPOSITE_CHOICES)
    if kind == omg.CheckKind.SAVE:
        return f"{names.get(composite, composite)} save vs PRO {against}"
    if kind == omg.CheckKind.COMPOSITE:
        what = names.get(composite, composite)
    elif kind == omg.CheckKind.DISCIPLINE:
        what = f"{discipline} ({aptitude})" if aptitude else discipline
    else:
        what = names.get(aptitude, aptitude)
    category = next((c.name for c in omg.DIFFICULTY_CATEGORIES if c.dif == against), None)
    return f"{what} vs {category} {against}" if category else f"{what} vs DIF {against}"


class ResourceChange(models.Model):
    """Mana or Chi spent or given back, for the campaign's log."""

    class Pool(models.TextChoices):
        MANA = "mana", "Mana"
        CHI = "chi", "Chi"

    class Cost(models.TextChoices):
        ARC = "ARC", "spell (ARC)"
        PWR = "PWR", "rune (PWR)"
        PSI = "PSI", "psionics (PSI)"
        CHI = "CHI", "chi technique (CHI)"

    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="resource_changes"
    )
    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    pool = models.CharField(max_length=4, choices=Pool.choices)
    cost = models.CharField(max_length=3, blank=True, choices=Cost.choices)
    amount = models.SmallIntegerField(help_text="Negative when spent.")
    before = models.SmallIntegerField()
    after = models.SmallIntegerField()
    note = models.CharField(max_length=80, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.get_pool_display()} {self.amount:+d}"


__all__ = ["Check", "CheckCall", "CheckRequest", "ResourceChange", "describe"]
