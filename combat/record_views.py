"""The record of a fight as files to download: Markdown and JSON, each built as the viewer
sees the fight (combat/record.py)."""

from __future__ import annotations

import json

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.utils.text import slugify

from combat import access, record


def _download(body: str, content_type: str, name: str) -> HttpResponse:
    response = HttpResponse(body, content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


def _filename(encounter_pk: int, name: str, ext: str) -> str:
    return f"fight-{encounter_pk}-{slugify(name)[:60] or 'record'}.{ext}"


@login_required
def record_markdown(request: HttpRequest, pk: int) -> HttpResponse:
    encounter = access.get_encounter(request.user, pk)
    body = record.markdown(record.build(encounter, request.user))
    return _download(body, "text/markdown", _filename(encounter.pk, encounter.name, "md"))


@login_required
def record_json(request: HttpRequest, pk: int) -> HttpResponse:
    encounter = access.get_encounter(request.user, pk)
    body = json.dumps(record.build(encounter, request.user), ensure_ascii=False, indent=2)
    return _download(body, "application/json", _filename(encounter.pk, encounter.name, "json"))
