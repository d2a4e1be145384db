"""Everything an account owns, in one JSON file: the "download my data" of the account page.

It reads every app (sheets, combat, prep, integrations), so it lives in the top layer. Each
part is the document the app already exports, so parts can be imported again where an import
exists: a character through a campaign's "Import a sheet" (the API's character document), an
NPC through the library's import (its stat block). Webhooks carry no secret; API tokens only
their name and prefix (the key itself is never stored).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.utils.text import slugify

from combat import record
from integrations.api import WebhookSerializer
from prep import services as prep
from sheets.api.campaigns import CampaignSerializer
from sheets.api.characters import CharacterSerializer
from sheets.http import signed_in
from sheets.models import Campaign, Character

FORMAT = "omg-table-account"
VERSION = 1


def _characters(queryset: Any, request: HttpRequest) -> list[dict[str, Any]]:
    return list(CharacterSerializer(queryset, many=True, context={"request": request}).data)


def build(request: HttpRequest) -> dict[str, Any]:
    """The export of ``request.user``'s account (a JSON-ready dict; see :data:`SCHEMA`)."""
    user = signed_in(request.user)
    sheets = Character.objects.prefetch_related("disciplines", "weapons", "zones")
    run = (
        Campaign.objects.filter(gm=user)
        .prefetch_related("memberships__user", "encounters", "webhooks")
        .select_related("gm")
        .order_by("name", "pk")
    )
    campaigns_run = []
    for campaign in run:
        campaigns_run.append(
            {
                **CampaignSerializer(campaign, context={"request": request}).data,
                "characters": _characters(sheets.filter(campaign=campaign), request),
                "fights": [
                    record.build(encounter, user)
                    for encounter in campaign.encounters.select_related("campaign").order_by("pk")
                ],
                "webhooks": WebhookSerializer(campaign.webhooks.all(), many=True).data,
            }
        )
    played = Campaign.objects.filter(memberships__user=user).order_by("name", "pk")
    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": timezone.now().isoformat(),
        "profile": {
            "username": user.get_username(),
            "email": user.email,
            "date_joined": user.date_joined.isoformat(),
            "last_login": user.last_login.isoformat() if user.last_login else None,
        },
        "characters": _characters(
            sheets.filter(owner=user).exclude(campaign__gm=user).order_by("name", "pk"), request
        ),
        "campaigns_played": [{"id": c.pk, "name": c.name} for c in played],
        "campaigns_run": campaigns_run,
        "library": [prep.full_sheet(npc) for npc in user.npc_library.order_by("name", "pk")],
        "api_tokens": [
            {
                "name": t.name,
                "prefix": t.prefix,
                "created_at": t.created_at.isoformat(),
                "last_used_at": t.last_used_at.isoformat() if t.last_used_at else None,
            }
            for t in user.api_tokens.all()
        ],
    }


@login_required
def account_export(request: HttpRequest) -> HttpResponse:
    response = JsonResponse(build(request), json_dumps_params={"indent": 2})
    slug = slugify(request.user.get_username()) or "account"
    response["Content-Disposition"] = f'attachment; filename="omg-table-{slug}.json"'
    return response


_CHARACTER = {
    "type": "object",
    "required": ["id", "name", "campaign", "disciplines", "weapons", "zones"],
    "properties": {
        "id": {"type": "integer"},
        "name": {"type": "string", "minLength": 1},
        "campaign": {"type": "integer"},
        "disciplines": {"type": "array", "items": {"type": "object"}},
        "weapons": {"type": "array", "items": {"type": "object"}},
        "zones": {"type": "array", "items": {"type": "object"}},
    },
}
_STAMP = {"type": "string", "format": "date-time"}
_MAYBE_STAMP = {"type": ["string", "null"], "format": "date-time"}

#: JSON Schema (2020-12) of the export: the frame is closed; each part is the app's own
#: document, checked for what an import needs.
SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "OMG Table account export",
    "type": "object",
    "additionalProperties": False,
    "required": [
        "format",
        "version",
        "exported_at",
        "profile",
        "characters",
        "campaigns_played",
        "campaigns_run",
        "library",
        "api_tokens",
    ],
    "properties": {
        "format": {"const": FORMAT},
        "version": {"const": VERSION},
        "exported_at": _STAMP,
        "profile": {
            "type": "object",
            "additionalProperties": False,
            "required": ["username", "email", "date_joined", "last_login"],
            "properties": {
                "username": {"type": "string", "minLength": 1},
                "email": {"type": "string"},
                "date_joined": _STAMP,
                "last_login": _MAYBE_STAMP,
            },
        },
        "characters": {"type": "array", "items": _CHARACTER},
        "campaigns_played": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["id", "name"],
                "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
            },
        },
        "campaigns_run": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "name", "players", "characters", "fights", "webhooks"],
                "properties": {
                    "id": {"type": "integer"},
                    "name": {"type": "string"},
                    "players": {"type": "array"},
                    "characters": {"type": "array", "items": _CHARACTER},
                    "fights": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["format", "encounter", "participants", "log"],
                            "properties": {"log": {"type": "array"}},
                        },
                    },
                    "webhooks": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["url", "events"],
                            "not": {"required": ["secret"]},
                        },
                    },
                },
            },
        },
        "library": {
            "type": "array",
            "items": {"type": "object", "required": ["name"]},
        },
        "api_tokens": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["name", "prefix", "created_at", "last_used_at"],
                "properties": {
                    "name": {"type": "string"},
                    "prefix": {"type": "string"},
                    "created_at": _STAMP,
                    "last_used_at": _MAYBE_STAMP,
                },
            },
        },
    },
}
