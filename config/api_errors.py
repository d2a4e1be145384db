"""How the API answers what goes wrong: the services' refusals (one exception handler for every
API view), JSON for the 404s that no view answers, a 404 for a row that vanished mid-request,
and JSON for the 400s Django answers before any view (a body past its size limit)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist, RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views.defaults import bad_request as html_bad_request
from django.views.defaults import page_not_found
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from sheets.refusals import Refused

API_PREFIX = "/api/"


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """``REST_FRAMEWORK["EXCEPTION_HANDLER"]``: a service's refusal (sheets.refusals) is the
    answer its class says (400 refused, 409 conflict, 404 not found) with its body
    (``{"detail": reason}``, or the fields at fault); a Django ``ValidationError`` from a
    model or service is a 400 like a serializer's. The rest is DRF's: its own errors,
    ``Http404``, ``PermissionDenied`` (with the service's reason), else a 500. So API views
    call the services and catch nothing they would only translate."""
    if isinstance(exc, Refused):
        # As DRF does for its own errors: a view in ATOMIC_REQUESTS rolls back.
        set_rollback()
        return Response(exc.body(), status=exc.api_status)
    if isinstance(exc, Http404):
        # Every 404 reads the same, as the URL resolver's do: what does not exist and what
        # this user may not see are not told apart by their message.
        exc = exceptions.NotFound()
    if isinstance(exc, DjangoValidationError):
        detail = exc.message_dict if hasattr(exc, "error_dict") else exc.messages
        exc = exceptions.ValidationError(detail)
    return drf_exception_handler(exc, context)


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

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        """A sheet, row or fight deleted by someone else while this request was working on it
        (its services lock and re-read rows, and find them gone): the answer is the 404 of
        a missing object, not a 500. The service's transaction has already rolled back."""
        if not isinstance(exception, ObjectDoesNotExist):
            return None
        if request.path.startswith(API_PREFIX):
            return JsonResponse({"detail": "Not found."}, status=404)
        return page_not_found(request, Http404("That was deleted meanwhile."))


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """Django's 400 for what it refuses before a view runs (handler400, config/urls.py): a
    body over DATA_UPLOAD_MAX_MEMORY_SIZE, too many fields. Under /api/ it was the HTML page;
    it is ``{"detail": ...}`` like every other API error. (With DEBUG on, Django answers
    with its technical page instead, as for any 400 it raises itself.)"""
    if not request.path.startswith(API_PREFIX):
        return html_bad_request(request, exception)
    if isinstance(exception, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        detail = f"The request body is too large: at most {limit / 2**20:g} MB."
    else:
        detail = "Bad request: the server could not read it."
    return JsonResponse({"detail": detail}, status=400)
