"""Load the demo table: a GM, two players and a campaign. Safe to run again and again."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from combat.demo import DEMO_ENCOUNTER, load_demo_encounter
from sheets.demo import load_demo_characters
from sheets.models import Campaign, Membership

DEMO_PASSWORD = "omg-demo-2026"  # noqa: S105 - printed on purpose: these are demo logins
DEMO_USERS = [("gm", "Game Master"), ("alice", "Alice"), ("bob", "Bob")]
DEMO_CAMPAIGN = "The Sunken Keep"
DEMO_JOIN_CODE = "SUNKEN26"


class Command(BaseCommand):
    help = "Create (or refresh) the demo accounts and campaign, then print the logins."

    @transaction.atomic
    def handle(self, *args: Any, **options: Any) -> None:
        user_model = get_user_model()
        users = {}
        for username, first_name in DEMO_USERS:
            user, created = user_model.objects.get_or_create(
                username=username, defaults={"first_name": first_name}
            )
            if created:
                user.set_password(DEMO_PASSWORD)
                user.save()
            users[username] = user
        campaign, _ = Campaign.objects.get_or_create(
            name=DEMO_CAMPAIGN,
            gm=users["gm"],
            defaults={
                "description": "A drowned fortress, a missing heir and a rival crew of salvagers.",
                "join_code": DEMO_JOIN_CODE,
            },
        )
        for username in ("alice", "bob"):
            Membership.objects.get_or_create(campaign=campaign, user=users[username])
        for hook in DEMO_HOOKS:
            hook(campaign=campaign, users=users)
        self.stdout.write(self.style.SUCCESS("Demo data ready."))
        self.stdout.write(f"  GM:      gm / {DEMO_PASSWORD}")
        self.stdout.write(f"  Players: alice / {DEMO_PASSWORD}, bob / {DEMO_PASSWORD}")
        self.stdout.write(f"  Campaign “{campaign.name}”, join code {campaign.join_code}")
        self.stdout.write(f"  Encounter “{DEMO_ENCOUNTER}” is ready for the GM to start")


# Each part of the app adds its demo content here, in order.
DEMO_HOOKS: list[Any] = [load_demo_characters, load_demo_encounter]
