"""Small factories for tests: real rows in the real database."""

from __future__ import annotations

import itertools
from typing import Any

from django.contrib.auth.models import User

from sheets.models import Campaign, Membership

PASSWORD = "correct-horse-battery"
_counter = itertools.count(1)


def make_user(username: str | None = None, **extra: Any) -> User:
    username = username or f"user{next(_counter)}"
    return User.objects.create_user(username=username, password=PASSWORD, **extra)


def make_campaign(
    gm: User | None = None, *, players: tuple[Any, ...] = (), **extra: Any
) -> Campaign:
    campaign = Campaign.objects.create(
        gm=gm or make_user(), name=extra.pop("name", f"Campaign {next(_counter)}"), **extra
    )
    for player in players:
        Membership.objects.create(campaign=campaign, user=player)
    return campaign
