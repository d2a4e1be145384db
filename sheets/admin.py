from __future__ import annotations

from django.contrib import admin

from sheets.models import ApiToken, Campaign, Membership


class MembershipInline(admin.TabularInline):  # type: ignore[type-arg]  # Django's class takes no [] at runtime
    model = Membership
    extra = 0


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):  # type: ignore[type-arg]  # Django's class takes no [] at runtime
    list_display = ["name", "gm", "join_code", "created_at"]
    search_fields = ["name", "gm__username"]
    inlines = [MembershipInline]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):  # type: ignore[type-arg]  # Django's class takes no [] at runtime
    list_display = ["name", "user", "prefix", "created_at", "last_used_at"]
    readonly_fields = ["prefix", "created_at", "last_used_at"]
