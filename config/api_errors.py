"""JSON for the API's 404s that no view answers."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse

API_PREFIX = "/api/"


class JsonNotFoundMiddleware:
    """Under /api/, a path no route matches (``/api/characters/abc/``, an id with a dot, a
    typo) got Django's HTML 404 page, in DEBUG its technical one; the API's views answer
    ``{"detail": "Not found."}``, and so does this, whichever way the 404 came about."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            response.status_code == 404
            and request.path.startswith(API_PREFIX)
            and not response.get("Content-Type", "").startswith("application/json")
        ):
            return JsonResponse({"detail": "Not found."}, status=404)
        return response
