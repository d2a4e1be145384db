"""The public rules API under /api/rules/: dice checks and their exact odds, no login needed.

Every view is a thin shell: a serializer parses the JSON body (or the query string of an odds
request), the pure engine in ``rules`` resolves it, and the engine's ``as_dict()`` is the answer.
Nothing here touches the database but for one thing: a roll sent with ``campaign`` by that
campaign's GM or one of its players is added to the campaign's roll log
(:class:`rules.models.DiceRoll`), the one its dice pages show.

Conventions of every endpoint:

- Numbers must be JSON integers in a body (``"70"`` and ``true`` are refused); in a query string
  they are plain ASCII digits with an optional leading ``-`` (``²`` or ``٧`` are refused).
- Dice already rolled at the table are given as values; left out, the server rolls them with
  :func:`server_rng`. A roll is typed in whole or rolled whole: once some dice are typed in,
  a die the roll still needs (a re-roll, the GM's die) is a 400 naming its field, never a
  server die logged as a physical one. A roll of two sides (an OGS opposed check, an ORE
  contest or timed cooperation) is one roll: every side typed in, or none.
- Exact odds come twice: as floats, and under ``"exact"`` the same fields as ``"n/d"`` strings.
- A bad request is a 400 whose body names each field at fault; an input the rules cannot
  resolve (``RulesError``) is a 400 under ``non_field_errors``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NoReturn

from django.http import QueryDict
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiResponse,
    extend_schema,
)
from rest_framework import exceptions, permissions, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from rules.api.fields import WholeNumberField
from rules.api.throttles import RulesAnonThrottle, RulesUserThrottle
from rules.engine import RulesError
from rules.models import DiceRoll
from sheets import fields
from sheets.models import Campaign

# The server's dice: the one generator every app rolls with (sheets.randomness), which the
# rules API's modules and the dice pages import from here.
from sheets.randomness import server_rng as server_rng


def with_exact(odds_obj: Any) -> dict[str, object]:
    """An engine odds object as JSON: floats, plus the same fields as exact fractions."""
    return {**odds_obj.as_dict(), "exact": odds_obj.as_dict(exact=True)}


class ErrorSerializer(serializers.Serializer[Any]):
    """A 400: each field at fault lists its messages; rules errors come as non_field_errors."""

    non_field_errors = serializers.ListField(child=serializers.CharField(), required=False)


class DetailSerializer(serializers.Serializer[Any]):
    detail = serializers.CharField()


BAD_REQUEST = OpenApiResponse(
    ErrorSerializer,
    description="Bad input: an object keyed by field name, each with a list of messages.",
    examples=[
        OpenApiExample(
            "A field out of range",
            value={"pro": ["Ensure this value is less than or equal to 100."]},
            status_codes=["400"],
        )
    ],
)
THROTTLED = OpenApiResponse(DetailSerializer, description="Too many requests; wait and retry.")


class RulesView(APIView):
    """Base of every rules endpoint: public, throttled, and never a 500 for bad input."""

    permission_classes = [permissions.AllowAny]
    throttle_classes = [RulesAnonThrottle, RulesUserThrottle]

    def throttled(self, request: Request, wait: float | None) -> NoReturn:
        raise exceptions.Throttled(
            wait=wait, detail="Too many rules requests from you in a short time; please slow down."
        )

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, RulesError):
            exc = exceptions.ValidationError({"non_field_errors": [str(exc)]})
        return super().handle_exception(exc)

    def parse(self, serializer_class: type[serializers.Serializer[Any]]) -> dict[str, Any]:
        data = self.request.query_params if self.request.method == "GET" else self.request.data
        if isinstance(data, QueryDict):
            # DRF reads "?tide=" as a parameter left out (its default); the schema documents
            # a value, so an empty one is refused like any other it does not allow.
            blank = [name for name, values in data.lists() if "" in values]
            if blank:
                raise exceptions.ValidationError(
                    {name: ["Give a value, or leave the parameter out."] for name in blank}
                )
        serializer = serializer_class(data=data)
        serializer.is_valid(raise_exception=True)
        return dict(serializer.validated_data)

    def campaign(self, data: Mapping[str, Any]) -> Campaign | None:
        """The campaign whose log a roll goes into: one the caller runs or plays in, else 404
        (anonymous callers have none). Checked before anything is rolled."""
        pk = data.get("campaign")
        if pk is None:
            return None
        campaign = Campaign.objects.for_user(self.request.user).filter(pk=pk).first()
        if campaign is None:
            raise exceptions.NotFound("None of your campaigns has this id.")
        return campaign

    def log(
        self, campaign: Campaign | None, data: Mapping[str, Any], result: object, *, physical: bool
    ) -> None:
        """Add the roll to the campaign's log, as the dice pages do."""
        if campaign is not None:
            DiceRoll.record(
                campaign=campaign,
                roller=self.request.user,
                result=result,
                physical=physical,
                source=DiceRoll.Source.API,
                note=data.get("note", ""),
            )


def campaign_field() -> WholeNumberField:
    return WholeNumberField(
        min_value=1,
        max_value=2**63 - 1,
        required=False,
        allow_null=True,
        help_text="Also put this roll in the log of one of your campaigns (you run it or play "
        "in it; send your session or API token). Any other id: 404, nothing rolled.",
    )


def note_field() -> serializers.CharField:
    return fields.CharField(
        max_length=80,
        required=False,
        allow_blank=True,
        default="",
        help_text="With campaign: a few words on what the roll was for, shown in the log.",
    )


NO_SUCH_CAMPAIGN = OpenApiResponse(
    DetailSerializer,
    description="campaign names none of the caller's campaigns (or the caller is anonymous).",
)


def documented(
    summary: str,
    request: type[serializers.Serializer[Any]],
    response: type[serializers.Serializer[Any]],
    examples: list[OpenApiExample],
    *,
    query: bool = False,
    logs: bool = False,
) -> Callable[[Any], Any]:
    """``extend_schema`` with the shape every rules endpoint shares. ``logs``: the endpoint
    takes an optional ``campaign`` to log the roll in, so credentials become optional."""
    responses: dict[int, Any] = {200: response, 400: BAD_REQUEST, 429: THROTTLED}
    if logs:
        responses[404] = NO_SUCH_CAMPAIGN
    return extend_schema(
        summary=summary,
        tags=["rules"],
        auth=None if logs else [],
        request=None if query else request,
        parameters=[request] if query else None,
        responses=responses,
        examples=examples,
    )


NEVER_MIXED = "typed-in dice are never mixed with server dice"


def every_side_typed_in(
    sides: Mapping[str, Mapping[str, Any]], field: str, *, forced: bool = False
) -> None:
    """A roll of several sides is typed in whole or rolled whole: once one side's dice (or
    anything else of the roll, ``forced``) are typed in, a side without them is a 400 on its
    ``field``, rather than a server roll passed off beside physical ones."""
    if not forced and all(side.get(field) is None for side in sides.values()):
        return
    missing = {
        name: {
            field: [
                f"Type this side's {field} too: the rest of the roll is typed in, and "
                f"{NEVER_MIXED}."
            ]
        }
        for name, side in sides.items()
        if side.get(field) is None
    }
    if missing:
        raise serializers.ValidationError(missing)


def request_example(name: str, value: Mapping[str, object]) -> OpenApiExample:
    return OpenApiExample(name, value=value, request_only=True)


def response_example(name: str, value: Mapping[str, object]) -> OpenApiExample:
    return OpenApiExample(name, value=value, response_only=True)
