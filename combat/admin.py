from __future__ import annotations

from typing import Any

from django.contrib import admin

from combat.models import CombatLogEntry, Declaration, Encounter, Participant


class ParticipantInline(admin.TabularInline):  # type: ignore[type-arg]  # Django's class takes no [] at runtime
    model = Participant
    extra = 0
    raw_id_fields = ["character"]


@admin.register(Encounter)
class EncounterAdmin(admin.ModelAdmin):  # type: ignore[type-arg]  # Django's class takes no [] at runtime
    list_display = ["name", "campaign", "status", "round"]
    list_filter = ["status"]
    raw_id_fields = ["campaign", "turn"]
    inlines = [ParticipantInline]


@admin.register(Declaration)
class DeclarationAdmin(admin.ModelAdmin):  # type: ignore[type-arg]  # Django's class takes no [] at runtime
    list_display = ["pk", "encounter", "attacker", "target", "action", "defense", "status"]
    list_filter = ["status", "action"]
    raw_id_fields = ["encounter", "attacker", "target", "zone", "weapon", "created_by"]


@admin.register(CombatLogEntry)
class CombatLogEntryAdmin(admin.ModelAdmin):  # type: ignore[type-arg]  # Django's class takes no [] at runtime
    """Read only: the log is append-only, even here."""

    list_display = ["encounter", "seq", "kind", "actor", "roll", "physical", "created_at"]
    list_filter = ["kind"]

    def has_add_permission(self, request: Any) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: Any, obj: Any = None) -> bool:
        return False
