"""A campaign's webhook endpoints and every delivery made to them."""

from __future__ import annotations

import base64
import secrets
from typing import Any

from django.db import models
from django.urls import reverse

from sheets.models import Campaign

#: The events an endpoint may ask for (docs/integrations.md lists their payloads).
EVENT_TYPES: dict[str, str] = {
    "roll.resolved": "a roll resolved: attack, maneuver or Stamina test, with its outcome",
    "damage.applied": "damage and wounds (or healing) the GM applied to a zone",
    "participant.down": "a participant down or out of the fight",
    "turn.passed": "the turn passed to the next participant",
    "encounter.started": "an encounter started",
    "encounter.finished": "an encounter finished",
    "character.created": "a character created",
    "character.changed": "a character's sheet changed",
    "character.rested": "a character's daily rest",
    "check.resolved": "a check outside combat rolled or revealed (a secret one without result)",
}


def new_secret() -> str:
    """A Standard Webhooks secret: ``whsec_`` and 32 random bytes in base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


class WebhookEndpoint(models.Model):
    class Format(models.TextChoices):
        JSON = "json", "Signed JSON event"
        CHAT = "chat", "Chat message (text and an embed)"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="webhooks")
    url = models.URLField("URL", max_length=500)
    description = models.CharField(max_length=100, blank=True)
    events = models.JSONField(default=list, help_text="Event types wanted (EVENT_TYPES).")
    format = models.CharField(max_length=4, choices=Format.choices, default=Format.JSON)
    active = models.BooleanField(default=True)
    secret = models.CharField(max_length=60, default=new_secret)
    consecutive_failures = models.PositiveIntegerField(
        default=0, help_text="Failed attempts in a row (reset by a success)."
    )
    failed_deliveries = models.PositiveIntegerField(
        default=0, help_text="Deliveries that ran out of retries."
    )
    paused_reason = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["pk"]

    def __str__(self) -> str:
        return self.url

    def get_absolute_url(self) -> str:
        return reverse("integrations:webhook_detail", args=[self.campaign_id, self.pk])

    def wants(self, event_type: str) -> bool:
        return self.active and event_type in self.events

    def rotate_secret(self) -> str:
        self.secret = new_secret()
        self.save(update_fields=["secret", "updated_at"])
        return self.secret


class WebhookDelivery(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "waiting or retrying"
        DELIVERED = "delivered"
        FAILED = "failed", "gave up"
        CANCELLED = "cancelled", "endpoint paused or deleted"

    endpoint = models.ForeignKey(
        WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries"
    )
    event_type = models.CharField(max_length=30)
    webhook_id = models.CharField(
        max_length=40, unique=True, help_text="The webhook-id header: the same on every retry."
    )
    payload: models.JSONField[Any, Any] = models.JSONField(
        help_text="The body sent (before serialization)."
    )
    status = models.CharField(max_length=9, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=300, blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-pk"]
        verbose_name_plural = "webhook deliveries"
        indexes = [models.Index(fields=["status", "next_attempt_at"])]

    def __str__(self) -> str:
        return f"{self.event_type} {self.webhook_id}"
