"""The GM's preparation: an NPC library of their own, encounters built ahead of a session,
and the sheets made for one fight from the library."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.urls import reverse

from sheets.models import Campaign, Character

#: As many copies of one NPC as combat adds at once (combat.services.MAX_COPIES).
MAX_COUNT = 20


class LibraryNpc(models.Model):
    """A stat block in a GM's library, usable in every campaign they run. ``sheet`` is the
    character document's fight-relevant part (prep/statblock.py validates and normalizes it
    exactly as a character import is validated)."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="npc_library"
    )
    name = models.CharField(max_length=120)
    sheet = models.JSONField(default=dict)
    starter = models.CharField(
        max_length=40,
        blank=True,
        help_text="Which starter stat block this came from (blank: the GM's own).",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "pk"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("prep:npc_edit", args=[self.pk])


class PreparedEncounter(models.Model):
    """An encounter built ahead: groups of library NPCs and the characters expected."""

    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="prepared_encounters"
    )
    name = models.CharField(max_length=120)
    notes = models.TextField(blank=True)
    expected = models.ManyToManyField(Character, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "pk"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("prep:prepared_detail", args=[self.pk])


class PreparedGroup(models.Model):
    """``count`` copies of one library NPC in a prepared encounter."""

    prepared = models.ForeignKey(PreparedEncounter, on_delete=models.CASCADE, related_name="groups")
    #: A library NPC in a prepared encounter is not deleted (prep.services.delete_npc says
    #: where it is used); RESTRICT, not PROTECT, so deleting the GM's account, which takes
    #: their campaigns and these groups along, still works.
    npc = models.ForeignKey(LibraryNpc, on_delete=models.RESTRICT, related_name="groups")
    count = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1), MaxValueValidator(MAX_COUNT)]
    )
    hidden = models.BooleanField(default=False, help_text="Their numbers stay with the GM.")
    on_alert = models.BooleanField(default=False)

    class Meta:
        ordering = ["pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(count__gte=1) & Q(count__lte=MAX_COUNT), name="prep_group_count_1_20"
            )
        ]

    def __str__(self) -> str:
        return f"{self.count} × {self.npc}"


class FightSheet(models.Model):
    """Ties a sheet made from the library (the campaign-side template and its numbered copies)
    to the one encounter it was made for: deleting the encounter deletes these sheets
    (prep/signals.py); finishing it keeps them, as the fight's log refers to them."""

    character = models.OneToOneField(
        Character, on_delete=models.CASCADE, primary_key=True, related_name="fight_sheet"
    )
    encounter = models.ForeignKey(
        "combat.Encounter", on_delete=models.CASCADE, related_name="fight_sheets"
    )
    source = models.ForeignKey(
        LibraryNpc, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    def __str__(self) -> str:
        return f"{self.character} in {self.encounter}"
