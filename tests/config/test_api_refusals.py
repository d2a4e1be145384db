"""The API's one exception handler (config.api_errors.exception_handler): each shared refusal of
sheets.refusals, and the app errors built on them, comes back as the status and body the API
documents, whichever view raised it."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.test import APIRequestFactory
from rest_framework.views import APIView

from combat.services import CombatConflict, CombatError
from prep.services import PrepError
from sheets.refusals import Conflict, NotFound, Refused
from sheets.services import VersionConflict


def answer(exc: Exception) -> tuple[int, object]:
    """What an API view that raises ``exc`` answers, through DRF's dispatch and the settings'
    exception handler."""

    class Raises(APIView):
        authentication_classes = ()
        permission_classes = ()

        def post(self, request: Request) -> Response:
            raise exc

    response = Raises.as_view()(APIRequestFactory().post("/api/raises/", {}, format="json"))
    response.render()
    return response.status_code, json.loads(response.content)


@pytest.mark.parametrize(
    ("exc", "status", "body"),
    [
        (Refused("Not your turn."), 400, {"detail": "Not your turn."}),
        (Conflict("Already resolved."), 409, {"detail": "Already resolved."}),
        (NotFound(), 404, {"detail": "Not found."}),
        (NotFound("No such fight."), 404, {"detail": "No such fight."}),
        (CombatError("The fight is over."), 400, {"detail": "The fight is over."}),
        (CombatConflict("Someone rolled first."), 409, {"detail": "Someone rolled first."}),
        (PrepError("Pick at least one NPC."), 400, {"detail": "Pick at least one NPC."}),
        (
            CombatError("Only the GM sets it.", fields=("difficulty",)),
            400,
            {"difficulty": ["Only the GM sets it."]},
        ),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, Exception) else None,
)
def test_it_answers_each_refusal_with_its_status_and_reason(
    exc: Exception, status: int, body: object
) -> None:
    assert answer(exc) == (status, body)


def test_it_says_the_version_now_in_a_version_conflict() -> None:
    assert answer(VersionConflict(7)) == (
        409,
        {"detail": "The sheet changed since you read it; fetch it again and retry.", "version": 7},
    )


def test_it_answers_a_models_validation_error_as_a_400_by_field() -> None:
    by_field = DjangoValidationError({"roll": ["From 1 to 100."]})
    assert answer(by_field) == (400, {"roll": ["From 1 to 100."]})
    assert answer(DjangoValidationError("Not now.")) == (400, ["Not now."])


def test_it_answers_every_404_alike_and_leaves_drfs_other_answers() -> None:
    # A missing id and one this user may not see must read the same, whatever the view said.
    assert answer(Http404("No such call.")) == (404, {"detail": "Not found."})
    assert answer(PermissionDenied("Players act for their own.")) == (
        403,
        {"detail": "Players act for their own."},
    )


def test_it_lets_anything_else_be_a_server_error() -> None:
    with pytest.raises(ZeroDivisionError):
        answer(ZeroDivisionError("a bug"))


def test_it_keeps_the_app_errors_catchable_as_they_were() -> None:
    # Callers that catch an app's own error (the pages) keep catching its conflicts.
    assert issubclass(CombatConflict, CombatError)
    assert issubclass(CombatConflict, Conflict)
    assert issubclass(Conflict, Refused)
    assert issubclass(PrepError, Refused)
