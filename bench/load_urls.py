"""URLconf of the bench server (bench/load_site.py): the app's, plus a bare view."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.urls import include, path


def bare(request: HttpRequest) -> HttpResponse:
    """The floor: the whole middleware stack, no database, no template."""
    return HttpResponse(b"ok", content_type="text/plain")


urlpatterns = [path("bench/bare/", bare), path("", include("config.urls"))]
