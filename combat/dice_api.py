"""The public rules API under /api/rules/: dice checks and their exact odds, no login needed.

Every view is a thin shell: a serializer parses the JSON body (or the query string of an odds
request), the pure engine in ``rules`` resolves it, and the engine's ``as_dict()`` is the answer.
Nothing here touches the database but for one thing: a roll sent with ``campaign`` by that
campaign's GM or one of its players is added to the campaign's roll log
(:class:`combat.models.DiceRoll`), the one its dice pages show.

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

import copy
import random
import re
from collections.abc import Callable, Mapping
from typing import Any

from django.http import QueryDict
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
)
from rest_framework import exceptions, permissions, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle
from rest_framework.views import APIView

from combat.models import DiceRoll
from config import fields
from config.throttling import FailOpenThrottleMixin
from rules.engine import RulesError, odds, ogs, okrpg, omg, ore, sds
from sheets.models import Campaign

# ---------------------------------------------------------------------------------------------
# Server dice

#: The server's dice. Tests swap in a seeded ``random.Random``; nothing else rolls.
RNG: random.Random = random.SystemRandom()


def server_rng() -> random.Random:
    """The generator every server-side roll uses (the API's and the dice pages')."""
    return RNG


def with_exact(odds_obj: Any) -> dict[str, object]:
    """An engine odds object as JSON: floats, plus the same fields as exact fractions."""
    return {**odds_obj.as_dict(), "exact": odds_obj.as_dict(exact=True)}


# ---------------------------------------------------------------------------------------------
# Fields: strict in JSON bodies, lenient only where a query string leaves no choice


def _in_query(field: serializers.Field) -> bool:
    return isinstance(getattr(field.root, "initial_data", None), QueryDict)


# ASCII digits only: str.isdigit() also takes '²' (which int() then refuses: a 500) and the
# digits of other scripts (which int() reads, so '٧٠' passed as 70).
_QUERY_INTEGER = re.compile(r"-?[0-9]+")


class WholeNumberField(serializers.IntegerField):
    """A JSON integer (no strings, floats or booleans); plain ASCII digits in a query string."""

    default_error_messages = {"invalid": "Must be a whole number, such as 7."}

    def to_internal_value(self, data: Any) -> int:
        if _in_query(self) and isinstance(data, str):
            text = data.strip()
            if text.isascii() and len(text) <= 7 and _QUERY_INTEGER.fullmatch(text):
                return int(text)
            self.fail("invalid")
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return data


class StrictBooleanField(serializers.BooleanField):
    """JSON true or false; ``true``/``false``/``1``/``0`` in a query string."""

    default_error_messages = {"invalid": "Must be true or false."}

    def to_internal_value(self, data: Any) -> bool:
        if isinstance(data, bool):
            return data
        if (
            _in_query(self)
            and isinstance(data, str)
            and data.lower() in {"true", "false", "1", "0"}
        ):
            return data.lower() in {"true", "1"}
        self.fail("invalid")
        raise AssertionError  # fail() always raises


class DiceListField(serializers.ListField):
    """A list of dice such as ``["d4", "d8"]``; in a query string ``dice=d4,d8`` too."""

    def get_value(self, dictionary: Any) -> Any:
        if isinstance(dictionary, QueryDict):
            if self.field_name not in dictionary:
                return serializers.empty
            return [d for item in dictionary.getlist(self.field_name) for d in item.split(",") if d]
        return super().get_value(dictionary)


@extend_schema_field({"type": "string", "enum": ["d4", "d6", "d8", "d10", "d12"]})
class OgsDieField(serializers.Field):  # type: ignore[type-arg]
    """One OGS die: ``"d4"`` .. ``"d12"`` (or the bare size, ``8``)."""

    def to_internal_value(self, data: Any) -> int:
        try:
            return ogs.parse_die(data)
        except RulesError as exc:
            raise serializers.ValidationError(str(exc)) from exc

    def to_representation(self, value: int) -> str:
        return f"d{value}"


def _ogs_dice(**kwargs: Any) -> DiceListField:
    return DiceListField(child=OgsDieField(), max_length=ogs.MAX_DICE, **kwargs)


def _faces(high: int, **kwargs: Any) -> serializers.ListField:
    return serializers.ListField(
        child=WholeNumberField(min_value=1, max_value=high), max_length=ogs.MAX_DICE, **kwargs
    )


# ---------------------------------------------------------------------------------------------
# Exact-odds twins for the schema: the same shape with "n/d" strings where floats were


_TWINS: dict[type, type] = {}


def _exact_field(field: serializers.Field) -> serializers.Field:  # type: ignore[type-arg]
    if isinstance(field, serializers.FloatField):
        return serializers.CharField(
            help_text="Exact probability as a fraction, e.g. '111/128'.",
            allow_null=field.allow_null,
        )
    if isinstance(field, serializers.DictField | serializers.ListField):
        return type(field)(child=_exact_field(field.child), allow_null=field.allow_null)
    if isinstance(field, serializers.ListSerializer):
        return serializers.ListSerializer(child=_exact_field(field.child))
    if isinstance(field, serializers.Serializer):
        return exact_twin(type(field))
    return copy.deepcopy(field)


def exact_twin(serializer_class: type[serializers.Serializer]) -> serializers.Serializer:  # type: ignore[type-arg]
    """A copy of an odds serializer in which every probability is an ``"n/d"`` string."""
    if serializer_class not in _TWINS:
        fields = {name: _exact_field(f) for name, f in serializer_class().fields.items()}
        name = serializer_class.__name__.replace("Serializer", "") + "ExactSerializer"
        _TWINS[serializer_class] = type(name, (serializers.Serializer,), fields)
    return _TWINS[serializer_class]()


def probability_map(help_text: str) -> serializers.DictField:
    return serializers.DictField(child=serializers.FloatField(), help_text=help_text)


# ---------------------------------------------------------------------------------------------
# Shared view behaviour


class RulesAnonThrottle(FailOpenThrottleMixin, AnonRateThrottle):
    scope = "rules_anon"

    def get_rate(self) -> str | None:
        # Read at request time so a changed setting (tests, a reload) takes effect.
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)


class RulesUserThrottle(FailOpenThrottleMixin, UserRateThrottle):
    scope = "rules_user"

    def get_rate(self) -> str | None:
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)

    def get_cache_key(self, request: Request, view: APIView) -> str | None:
        # Anonymous callers are counted by RulesAnonThrottle only.
        if not request.user or not request.user.is_authenticated:
            return None
        return super().get_cache_key(request, view)


class ErrorSerializer(serializers.Serializer):  # type: ignore[type-arg]
    """A 400: each field at fault lists its messages; rules errors come as non_field_errors."""

    non_field_errors = serializers.ListField(child=serializers.CharField(), required=False)


class DetailSerializer(serializers.Serializer):  # type: ignore[type-arg]
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

    def throttled(self, request: Request, wait: float | None) -> None:
        raise exceptions.Throttled(
            wait=wait, detail="Too many rules requests from you in a short time; please slow down."
        )

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, RulesError):
            exc = exceptions.ValidationError({"non_field_errors": [str(exc)]})
        return super().handle_exception(exc)

    def parse(self, serializer_class: type[serializers.Serializer]) -> dict[str, Any]:  # type: ignore[type-arg]
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
    request: type[serializers.Serializer],  # type: ignore[type-arg]
    response: type[serializers.Serializer],  # type: ignore[type-arg]
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


_NEVER_MIXED = "typed-in dice are never mixed with server dice"


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
                f"{_NEVER_MIXED}."
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


# ---------------------------------------------------------------------------------------------
# OMG System: checks, odds, strikes

_DEGREES = ", ".join(d.value for d in omg.Degree)


class OmgCheckRequestSerializer(serializers.Serializer):  # type: ignore[type-arg]
    pro = WholeNumberField(
        min_value=omg.PRO_MIN, max_value=omg.PRO_MAX, help_text="Proficiency to roll at or under."
    )
    dif = WholeNumberField(
        min_value=omg.DIF_MIN, max_value=omg.DIF_MAX, help_text="Difficulty to roll over."
    )
    roll = WholeNumberField(
        min_value=1,
        max_value=100,
        required=False,
        allow_null=True,
        help_text="The d100 already rolled (a 00 pair is 100); leave out to let the server roll.",
    )
    fast = StrictBooleanField(
        default=False, help_text="Also read the reversed roll as a fast strike's second attack."
    )
    campaign = campaign_field()
    note = note_field()


class SecondHitSerializer(serializers.Serializer):  # type: ignore[type-arg]
    roll = serializers.IntegerField(help_text="The roll with its two dice swapped.")
    hit = serializers.BooleanField(help_text="Whether the second attack lands.")


class OmgCheckSerializer(serializers.Serializer):  # type: ignore[type-arg]
    roll = serializers.IntegerField()
    pro = serializers.IntegerField()
    dif = serializers.IntegerField()
    degree = serializers.CharField(help_text=f"One of: {_DEGREES}.")
    abbr = serializers.CharField(
        allow_null=True, help_text="DrS, DrF, EpS, EpF or SwS; null for a plain result."
    )
    success = serializers.BooleanField(help_text="True for every kind of success.")
    exp = serializers.IntegerField(help_text="EXP mark earned on the discipline (0 or 1).")
    fate = serializers.IntegerField(help_text="Change to the roller's Fate: -1, 0 or +1.")
    sum = serializers.IntegerField(help_text="The two d10 faces added, a 0 face counting 10.")
    second = SecondHitSerializer(required=False, help_text="Only when fast was asked for.")


class OmgOddsRequestSerializer(serializers.Serializer):  # type: ignore[type-arg]
    pro = WholeNumberField(min_value=omg.PRO_MIN, max_value=omg.PRO_MAX, help_text="Proficiency.")
    dif = WholeNumberField(min_value=omg.DIF_MIN, max_value=omg.DIF_MAX, help_text="Difficulty.")


class DegreeCountsSerializer(serializers.Serializer):  # type: ignore[type-arg]
    success = serializers.IntegerField()
    failure = serializers.IntegerField()
    dramatic_success = serializers.IntegerField()
    dramatic_failure = serializers.IntegerField()
    epic_success = serializers.IntegerField()
    epic_failure = serializers.IntegerField()
    success_with_sacrifice = serializers.IntegerField()


class OmgOddsSerializer(serializers.Serializer):  # type: ignore[type-arg]
    pro = serializers.IntegerField()
    dif = serializers.IntegerField()
    faces = serializers.IntegerField(help_text="Every count is out of this many faces (100).")
    counts = DegreeCountsSerializer(help_text="Faces of the d100 giving each degree.")
    hits = serializers.IntegerField(help_text="Faces giving any kind of success.")
    second_hit = serializers.IntegerField(
        help_text="Faces on which a disciplined fast strike lands its second attack as well."
    )


class OmgStrikeRequestSerializer(serializers.Serializer):  # type: ignore[type-arg]
    strike = serializers.ChoiceField(
        choices=[m.value for m in omg.StrikeMode],
        help_text="Strike mode: fast uses Speed, precise Skill, mighty Vigor.",
    )
    attack_apt = WholeNumberField(min_value=1, max_value=5, help_text="Attacker's aptitude.")
    attack_dsc = WholeNumberField(
        min_value=0, max_value=5, default=0, help_text="Weapon discipline; 0 is undisciplined."
    )
    weapon_dmg = WholeNumberField(min_value=0, max_value=5, default=0, help_text="Weapon DMG.")
    weapon_bonus = WholeNumberField(
        min_value=0, max_value=5, default=0, help_text="Quality or magic bonus of the weapon."
    )
    defense = serializers.ChoiceField(
        choices=[m.value for m in omg.DefenseMode],
        help_text="Defense mode: dodge uses Speed, parry Skill, block Vigor.",
    )
    defense_apt = WholeNumberField(min_value=1, max_value=5, help_text="Defender's aptitude.")
    defense_dsc = WholeNumberField(
        min_value=0, max_value=5, default=0, help_text="Melee Combat; 0 is undisciplined."
    )
    arm = WholeNumberField(min_value=0, max_value=5, default=0, help_text="ARM of the zone hit.")
    arm_bonus = WholeNumberField(
        min_value=0, max_value=5, default=0, help_text="Magic bonus of that armor."
    )

    def build(self, data: Mapping[str, Any]) -> tuple[omg.Attacker, omg.Defender]:
        attacker = omg.Attacker(
            omg.StrikeMode(data["strike"]),
            data["attack_apt"],
            data["attack_dsc"],
            data["weapon_dmg"],
            data["weapon_bonus"],
        )
        defender = omg.Defender(
            omg.DefenseMode(data["defense"]),
            data["defense_apt"],
            data["defense_dsc"],
            data["arm"],
            data["arm_bonus"],
        )
        return attacker, defender


class OmgStrikeRollRequestSerializer(OmgStrikeRequestSerializer):
    roll = WholeNumberField(
        min_value=1,
        max_value=100,
        required=False,
        allow_null=True,
        help_text="The attacker's d100 already rolled; leave out to let the server roll.",
    )
    campaign = campaign_field()
    note = note_field()


class OmgHitSerializer(serializers.Serializer):  # type: ignore[type-arg]
    roll = serializers.IntegerField(help_text="The roll this hit was read from.")
    damage = serializers.IntegerField(help_text="Damage after armor and a dodge.")
    raw = serializers.IntegerField(help_text="Damage before armor.")
    protection = serializers.IntegerField(help_text="Armor that stood against the hit.")
    armor_wear = serializers.IntegerField(help_text="1 when this hit wore the armor down.")
    second = serializers.BooleanField(help_text="True for a fast strike's second attack.")


class OmgStrikeSerializer(serializers.Serializer):  # type: ignore[type-arg]
    pro = serializers.IntegerField()
    dif = serializers.IntegerField()
    roll = serializers.IntegerField()
    degree = serializers.CharField(help_text=f"One of: {_DEGREES}.")
    abbr = serializers.CharField(allow_null=True)
    success = serializers.BooleanField()
    sum = serializers.IntegerField()
    exp = serializers.IntegerField()
    fate = serializers.IntegerField()
    hits = OmgHitSerializer(many=True, help_text="Each landed attack, in order.")
    damage = serializers.IntegerField(help_text="Total damage of every hit.")
    armor_wear = serializers.IntegerField(help_text="Points of ARM lost.")
    arm_after = serializers.IntegerField()
    armor_destroyed = serializers.BooleanField()
    weapon_wear = serializers.IntegerField(help_text="Points of weapon DMG lost.")
    weapon_dmg_after = serializers.IntegerField()
    weapon_destroyed = serializers.BooleanField()
    counterattack = serializers.BooleanField(help_text="The defender earned a counterattack.")


class OmgStrikeOddsSerializer(serializers.Serializer):  # type: ignore[type-arg]
    pro = serializers.IntegerField()
    dif = serializers.IntegerField()
    faces = serializers.IntegerField(help_text="Every count is out of this many faces (100).")
    check = OmgOddsSerializer()
    first = serializers.DictField(
        child=serializers.IntegerField(), help_text="Damage of the first attack -> faces."
    )
    first_miss = serializers.IntegerField()
    second = serializers.DictField(
        child=serializers.IntegerField(),
        allow_null=True,
        help_text="Damage of the second attack -> faces; null without a second attack.",
    )
    second_miss = serializers.IntegerField()
    total = serializers.DictField(
        child=serializers.IntegerField(), help_text="Damage of the whole strike -> faces."
    )
    mean_damage = serializers.FloatField()
    mean_damage_exact = serializers.CharField(help_text="The mean damage as a fraction.")


class OmgCheckView(RulesView):
    @documented(
        "Resolve a d100 check",
        OmgCheckRequestSerializer,
        OmgCheckSerializer,
        [
            request_example(
                "70 v 20, a fast strike rolling 43",
                {"pro": 70, "dif": 20, "roll": 43, "fast": True},
            ),
            response_example(
                "A success whose reversed roll hits too",
                omg.check(70, 20, 43, fast=True).as_dict(),
            ),
        ],
        logs=True,
    )
    def post(self, request: Request) -> Response:
        """Read one d100 roll against PRO v DIF; without a roll the server rolls."""
        data = self.parse(OmgCheckRequestSerializer)
        campaign = self.campaign(data)
        result = omg.check(
            data["pro"], data["dif"], data.get("roll"), rng=server_rng(), fast=data["fast"]
        )
        self.log(campaign, data, result, physical=data.get("roll") is not None)
        return Response(result.as_dict())


class OmgOddsView(RulesView):
    @documented(
        "Exact odds of a d100 check",
        OmgOddsRequestSerializer,
        OmgOddsSerializer,
        [response_example("70 v 20", {**odds.check_odds(70, 20).as_dict(), "faces": 100})],
        query=True,
    )
    def get(self, request: Request) -> Response:
        """How many of the 100 faces give each degree at PRO v DIF."""
        data = self.parse(OmgOddsRequestSerializer)
        return Response({**odds.check_odds(data["pro"], data["dif"]).as_dict(), "faces": 100})


_STRIKE_EXAMPLE = {
    "strike": "fast",
    "attack_apt": 3,
    "attack_dsc": 3,
    "weapon_dmg": 4,
    "weapon_bonus": 0,
    "defense": "dodge",
    "defense_apt": 3,
    "defense_dsc": 2,
    "arm": 2,
    "arm_bonus": 0,
}


def _strike_odds_dict(odds_obj: odds.StrikeOdds) -> dict[str, object]:
    mean = odds_obj.mean_damage
    return {
        **odds_obj.as_dict(),
        "faces": odds.FACES,
        "check": {**odds_obj.check.as_dict(), "faces": odds.FACES},
        "mean_damage_exact": f"{mean.numerator}/{mean.denominator}",
    }


class OmgStrikeView(RulesView):
    @documented(
        "Resolve a strike",
        OmgStrikeRollRequestSerializer,
        OmgStrikeSerializer,
        [
            request_example(
                "Fast sword strike into a dodge, rolling 43", {**_STRIKE_EXAMPLE, "roll": 43}
            ),
            response_example(
                "Two hits, the armor worn by both",
                omg.strike(
                    omg.Attacker(omg.StrikeMode.FAST, 3, 3, 4),
                    omg.Defender(omg.DefenseMode.DODGE, 3, 2, 2),
                    43,
                ).as_dict(),
            ),
        ],
        logs=True,
    )
    def post(self, request: Request) -> Response:
        """One strike against one defense: the check, every hit's damage, wear, counterattack."""
        data = self.parse(OmgStrikeRollRequestSerializer)
        campaign = self.campaign(data)
        attacker, defender = OmgStrikeRequestSerializer().build(data)
        result = omg.strike(attacker, defender, data.get("roll"), rng=server_rng())
        self.log(campaign, data, result, physical=data.get("roll") is not None)
        return Response(result.as_dict())


class OmgStrikeOddsView(RulesView):
    @documented(
        "Exact damage distribution of a strike",
        OmgStrikeRequestSerializer,
        OmgStrikeOddsSerializer,
        [
            response_example(
                "Fast sword strike into a dodge",
                _strike_odds_dict(odds.damage_odds(**_STRIKE_EXAMPLE)),  # type: ignore[arg-type]
            )
        ],
        query=True,
    )
    def get(self, request: Request) -> Response:
        """Faces (of 100) giving each damage, per attack and for the whole strike."""
        data = self.parse(OmgStrikeRequestSerializer)
        attacker, defender = OmgStrikeRequestSerializer().build(data)
        return Response(_strike_odds_dict(odds.strike_odds(attacker, defender)))


# ---------------------------------------------------------------------------------------------
# OGS: action checks, opposed checks, open rolls, die increases


class OgsRollRequestSerializer(serializers.Serializer):  # type: ignore[type-arg]
    dice = _ogs_dice(
        min_length=2,
        help_text="Stat die, skill (or force) die, then any enhancement dice: ['d4', 'd8', 'd8'].",
    )
    values = _faces(
        12,
        required=False,
        allow_null=True,
        help_text="Faces already rolled, one per die in order; leave out to let the server roll.",
    )
    rerolls = _faces(
        12,
        required=False,
        allow_null=True,
        help_text="With reroll_ones: the new faces of the enhancement dice that showed 1, "
        "in dice order. Needed whenever values are typed in and an enhancement die shows 1; "
        "only with values.",
    )
    flat = WholeNumberField(min_value=-100, max_value=100, default=0, help_text="Flat bonus.")
    reroll_ones = StrictBooleanField(
        default=False, help_text="Enhancement dice showing 1 are rolled once more."
    )

    def check(self, data: Mapping[str, Any]) -> ogs.ActionCheck:
        return ogs.ActionCheck(tuple(data["dice"]), data["flat"], data["reroll_ones"])

    def roll(self, data: Mapping[str, Any], difficulty: int | None = None) -> ogs.CheckResult:
        return ogs.roll_check(
            self.check(data),
            difficulty=difficulty,
            values=data.get("values"),
            rerolls=data.get("rerolls"),
            rng=server_rng(),
        )


class OgsCheckRequestSerializer(OgsRollRequestSerializer):
    difficulty = WholeNumberField(
        min_value=0, max_value=1000, required=False, allow_null=True, help_text="Target total."
    )
    odds = StrictBooleanField(default=False, help_text="Add the exact odds of this check.")
    campaign = campaign_field()
    note = note_field()


class OgsCheckOddsSerializer(serializers.Serializer):  # type: ignore[type-arg]
    totals = probability_map("Total -> probability.")
    difficulty = serializers.IntegerField(allow_null=True)
    success = serializers.FloatField(allow_null=True, help_text="Chance to reach the difficulty.")
    stages = probability_map("Stages of critical success (1 and up) -> probability.")


class OgsCheckOddsWithExactSerializer(OgsCheckOddsSerializer):
    exact = exact_twin(OgsCheckOddsSerializer)


class OgsCheckSerializer(serializers.Serializer):  # type: ignore[type-arg]
    dice = serializers.ListField(child=serializers.CharField())
    values = serializers.ListField(
        child=serializers.IntegerField(), help_text="Kept face of every die."
    )
    flat = serializers.IntegerField()
    reroll_ones = serializers.BooleanField()
    rerolled = serializers.ListField(
        child=serializers.IntegerField(), help_text="Indexes of the dice that were re-rolled."
    )
    first_faces = serializers.ListField(
        child=serializers.IntegerField(), help_text="Their faces before the re-roll."
    )
    total = serializers.IntegerField()
    difficulty = serializers.IntegerField(allow_null=True)
    success = serializers.BooleanField(allow_null=True)
    stages = serializers.IntegerField(help_text="One stage of critical success per 2 points over.")
    odds = OgsCheckOddsWithExactSerializer(required=False)


class OgsCheckView(RulesView):
    @documented(
        "Roll or read an OGS action check",
        OgsCheckRequestSerializer,
        OgsCheckSerializer,
        [
            request_example(
                "d4 + d8 + d8 rolled 1, 4, 6 at difficulty 8",
                {"dice": ["d4", "d8", "d8"], "values": [1, 4, 6], "flat": 0, "difficulty": 8},
            ),
            response_example(
                "11 against 8: one stage",
                ogs.roll_check(
                    ogs.ActionCheck((4, 8, 8)), difficulty=8, values=[1, 4, 6]
                ).as_dict(),
            ),
        ],
        logs=True,
    )
    def post(self, request: Request) -> Response:
        """Total the dice plus the flat bonus, and count stages past the difficulty."""
        shape = OgsCheckRequestSerializer()
        data = self.parse(OgsCheckRequestSerializer)
        campaign = self.campaign(data)
        result = shape.roll(data, data.get("difficulty"))
        self.log(campaign, data, result, physical=data.get("values") is not None)
        body = result.as_dict()
        if data["odds"]:
            body["odds"] = with_exact(ogs.check_odds(result.check, data.get("difficulty")))
        return Response(body)


class OgsCheckOddsRequestSerializer(serializers.Serializer):  # type: ignore[type-arg]
    dice = _ogs_dice(min_length=1, help_text="Dice, e.g. dice=d4,d8,d8.")
    flat = WholeNumberField(min_value=-100, max_value=100, default=0, help_text="Flat bonus.")
    difficulty = WholeNumberField(
        min_value=0, max_value=1000, required=False, allow_null=True, help_text="Target total."
    )
    reroll_ones = StrictBooleanField(default=False, help_text="Re-roll enhancement ones once.")
    open = StrictBooleanField(
        default=False, help_text="An open roll (damage and the like): the dice simply totalled."
    )


class OgsOddsView(RulesView):
    @documented(
        "Exact odds of an OGS check or open roll",
        OgsCheckOddsRequestSerializer,
        OgsCheckOddsWithExactSerializer,
        [
            response_example(
                "d4 + d8 + d8 at difficulty 8",
                with_exact(ogs.check_odds(ogs.ActionCheck((4, 8, 8)), 8)),
            )
        ],
        query=True,
    )
    def get(self, request: Request) -> Response:
        """Distribution of the total, chance of success and of each stage."""
        data = self.parse(OgsCheckOddsRequestSerializer)
        if data["open"]:
            if data["reroll_ones"] or data.get("difficulty") is not None:
                raise RulesError("an open roll is simply totalled: no difficulty, no re-rolls")
            return Response(with_exact(ogs.open_odds(data["dice"], data["flat"])))
        check = ogs.ActionCheck(tuple(data["dice"]), data["flat"], data["reroll_ones"])
        return Response(with_exact(ogs.check_odds(check, data.get("difficulty"))))


class OgsOpposedRequestSerializer(serializers.Serializer):  # type: ignore[type-arg]
    a = OgsRollRequestSerializer(help_text="The first side's check.")
    b = OgsRollRequestSerializer(help_text="The second side's check.")
    rolloffs = serializers.ListField(
        child=serializers.ListField(
            child=WholeNumberField(min_value=1, max_value=12), min_length=2, max_length=2
        ),
        max_length=20,
        required=False,
        allow_null=True,
        help_text="d12 roll-off pairs [a, b], used only when everything else ties. With typed-in "
        "values they are needed whenever the tie goes that far (the server never throws them "
        "then); given, both sides' values are needed too.",
    )
    odds = StrictBooleanField(
        default=False,
        help_text="Add each side's exact chance to win: offered for up to "
        f"{ogs.MAX_OPPOSED_ODDS_DICE} dice a side (more is a 400).",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        sides = {"a": attrs["a"], "b": attrs["b"]}
        every_side_typed_in(sides, "values", forced=attrs.get("rolloffs") is not None)
        return attrs


class OgsOpposedOddsSerializer(serializers.Serializer):  # type: ignore[type-arg]
    a = serializers.FloatField(help_text="Chance the first side wins.")
    b = serializers.FloatField(help_text="Chance the second side wins.")
    decided_by = probability_map("Tie-break step (total, values, sizes, rolloff) -> probability.")


class OgsOpposedOddsWithExactSerializer(OgsOpposedOddsSerializer):
    exact = exact_twin(OgsOpposedOddsSerializer)


class OgsOpposedSerializer(serializers.Serializer):  # type: ignore[type-arg]
    winner = serializers.CharField(help_text="'a' or 'b'.")
    decided_by = serializers.CharField(help_text="total, values, sizes or rolloff.")
    rolloffs = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField()),
        help_text="The d12 roll-off pairs used.",
    )
    a = OgsCheckSerializer()
    b = OgsCheckSerializer()
    odds = OgsOpposedOddsWithExactSerializer(required=False)


_MICHAEL = {"dice": ["d4", "d8", "d8"], "values": [1, 4, 6]}
_GUARD = {"dice": ["d6", "d6", "d6"], "values": [1, 4, 6]}


class OgsOpposedView(RulesView):
    @documented(
        "Settle an OGS opposed check",
        OgsOpposedRequestSerializer,
        OgsOpposedSerializer,
        [
            request_example("Michael against the guardsman", {"a": _MICHAEL, "b": _GUARD}),
            response_example(
                "Tied totals and values; the bigger dice win",
                ogs.opposed(
                    ogs.roll_check(ogs.ActionCheck((4, 8, 8)), values=[1, 4, 6]),
                    ogs.roll_check(ogs.ActionCheck((6, 6, 6)), values=[1, 4, 6]),
                ).as_dict(),
            ),
        ],
    )
    def post(self, request: Request) -> Response:
        """Higher total wins; then higher values, bigger dice, and d12 roll-offs."""
        data = self.parse(OgsOpposedRequestSerializer)
        shape = OgsRollRequestSerializer()
        a, b = shape.roll(data["a"]), shape.roll(data["b"])
        # Both sides are typed in or neither is (validated); typed in, so are the roll-offs.
        typed = data["a"].get("values") is not None
        rng = None if typed else server_rng()
        result = ogs.opposed(a, b, rolloffs=data.get("rolloffs"), rng=rng)
        body = result.as_dict()
        if data["odds"]:
            body["odds"] = with_exact(ogs.opposed_odds(a.check, b.check))
        return Response(body)


def _opposed_odds_dice(**kwargs: Any) -> DiceListField:
    limit = ogs.MAX_OPPOSED_ODDS_DICE
    return DiceListField(
        child=OgsDieField(),
        min_length=2,
        max_length=limit,
        error_messages={
            "max_length": f"Exact opposed odds are offered for up to {limit} dice a side "
            "(they track every sorted set of faces, which grows fast)."
        },
        **kwargs,
    )


_ODDS_LIMIT = f"At most {ogs.MAX_OPPOSED_ODDS_DICE} dice a side."


class OgsOpposedOddsRequestSerializer(serializers.Serializer):  # type: ignore[type-arg]
    a = _opposed_odds_dice(help_text=f"First side's dice, e.g. a=d4,d8,d8. {_ODDS_LIMIT}")
    b = _opposed_odds_dice(help_text=f"Second side's dice, e.g. b=d6,d6,d6. {_ODDS_LIMIT}")
    a_flat = WholeNumberField(min_value=-100, max_value=100, default=0)
    b_flat = WholeNumberField(min_value=-100, max_value=100, default=0)
    a_reroll_ones = StrictBooleanField(default=False)
    b_reroll_ones = StrictBooleanField(default=False)


class OgsOpposedOddsView(RulesView):
    @documented(
        "Exact odds of an OGS opposed check",
        OgsOpposedOddsRequestSerializer,
        OgsOpposedOddsWithExactSerializer,
        [
            response_example(
                "d4 + d8 + d8 against 3d6",
                with_exact(
                    ogs.opposed_odds(ogs.ActionCheck((4, 8, 8)), ogs.ActionCheck((6, 6, 6)))
                ),
            )
        ],
        query=True,
    )
    def get(self, request: Request) -> Response:
        """Each side's chance to win with the full tie-break, and how often each step decides.

        Exact odds are offered up to a number of dice a side (see a and b): more is a 400
        naming the limit.
        """
        data = self.parse(OgsOpposedOddsRequestSerializer)
        a = ogs.ActionCheck(tuple(data["a"]), data["a_flat"], data["a_reroll_ones"])
        b = ogs.ActionCheck(tuple(data["b"]), data["b_flat"], data["b_reroll_ones"])
        return Response(with_exact(ogs.opposed_odds(a, b)))


class OgsOpenRequestSerializer(serializers.Serializer):  # type: ignore[type-arg]
    dice = _ogs_dice(min_length=1, help_text="Any dice, e.g. ['d6', 'd6'].")
    values = _faces(12, required=False, allow_null=True, help_text="Faces already rolled.")
    flat = WholeNumberField(min_value=-100, max_value=100, default=0, help_text="Flat bonus.")
    odds = StrictBooleanField(default=False, help_text="Add the exact distribution of the total.")
    campaign = campaign_field()
    note = note_field()


class OgsOpenSerializer(serializers.Serializer):  # type: ignore[type-arg]
    dice = serializers.ListField(child=serializers.CharField())
    values = serializers.ListField(child=serializers.IntegerField())
    flat = serializers.IntegerField()
    total = serializers.IntegerField()
    odds = OgsCheckOddsWithExactSerializer(required=False)


class OgsOpenView(RulesView):
    @documented(
        "Roll or read an OGS open roll",
        OgsOpenRequestSerializer,
        OgsOpenSerializer,
        [
            request_example(
                "3d6 + 2", {"dice": ["d6", "d6", "d6"], "values": [1, 5, 6], "flat": 2}
            ),
            response_example(
                "Totals 14", ogs.roll_open(["d6"] * 3, flat=2, values=[1, 5, 6]).as_dict()
            ),
        ],
        logs=True,
    )
    def post(self, request: Request) -> Response:
        """An open roll (damage and the like): the dice and the bonus simply added."""
        data = self.parse(OgsOpenRequestSerializer)
        campaign = self.campaign(data)
        result = ogs.roll_open(
            data["dice"], flat=data["flat"], values=data.get("values"), rng=server_rng()
        )
        self.log(campaign, data, result, physical=data.get("values") is not None)
        body = result.as_dict()
        if data["odds"]:
            body["odds"] = with_exact(ogs.open_odds(data["dice"], data["flat"]))
        return Response(body)


class OgsIncreaseRequestSerializer(serializers.Serializer):  # type: ignore[type-arg]
    dice = _ogs_dice(min_length=1, help_text="The dice before the increase.")
    stages = WholeNumberField(min_value=0, max_value=100, help_text="Steps of the one effect.")
    open = StrictBooleanField(
        default=False, help_text="An open roll: every die is raised, not just one."
    )
    target = WholeNumberField(
        min_value=0,
        required=False,
        allow_null=True,
        help_text="Index of the die to raise (default: the last one). Not with open.",
    )


class OgsIncreaseSerializer(serializers.Serializer):  # type: ignore[type-arg]
    dice = serializers.ListField(child=serializers.CharField(), help_text="The dice after.")


class OgsIncreaseView(RulesView):
    @documented(
        "Apply an OGS die increase",
        OgsIncreaseRequestSerializer,
        OgsIncreaseSerializer,
        [
            request_example(
                "A d12 raised two steps", {"dice": ["d12"], "stages": 2, "open": False}
            ),
            response_example("Past d12 it splits", {"dice": ["d8", "d8"]}),
        ],
    )
    def post(self, request: Request) -> Response:
        """Raise one die (or every die of an open roll); past d12 a die splits in two."""
        data = self.parse(OgsIncreaseRequestSerializer)
        grown = ogs.increase(
            data["dice"], data["stages"], open_roll=data["open"], target=data.get("target")
        )
        return Response({"dice": list(ogs.dice_names(grown))})


# ---------------------------------------------------------------------------------------------
# ORE: pools, sets, contests


class OrePoolRequestSerializer(serializers.Serializer):  # type: ignore[type-arg]
    pool = WholeNumberField(
        min_value=0,
        max_value=100,
        required=False,
        allow_null=True,
        help_text="Every die of the pool, an expert or master die included (at most 10 rolled). "
        "Leave out to read the dice as they are.",
    )
    penalty = WholeNumberField(
        min_value=0,
        max_value=100,
        default=0,
        help_text="Penalty dice, off the excess over 10 first.",
    )
    expert = WholeNumberField(
        min_value=1,
        max_value=10,
        required=False,
        allow_null=True,
        help_text="The face the expert die is set to.",
    )
    master = StrictBooleanField(default=False, help_text="A master die, set after the roll.")
    dice = serializers.ListField(
        child=WholeNumberField(min_value=1, max_value=10),
        max_length=ore.MAX_DICE,
        required=False,
        allow_null=True,
        help_text="The normal d10s rolled (no expert or master die); leave out to let the "
        "server roll.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs.get("pool") is None and attrs.get("dice") is None:
            raise serializers.ValidationError(
                {"dice": ["Give the dice rolled, or the pool for the server to roll."]}
            )
        return attrs

    def roll(self, data: Mapping[str, Any], difficulty: int = 0) -> ore.OreRoll:
        if data.get("pool") is None:
            return ore.read_dice(
                data["dice"],
                expert=data.get("expert"),
                master=data["master"],
                difficulty=difficulty,
            )
        pool = ore.OrePool(data["pool"], data["penalty"], data.get("expert"), data["master"])
        return ore.roll(pool, difficulty=difficulty, dice=data.get("dice"), rng=server_rng())


class OreRollRequestSerializer(OrePoolRequestSerializer):
    difficulty = WholeNumberField(
        min_value=0, max_value=10, default=0, help_text="Lowest height a set needs."
    )
    odds = StrictBooleanField(default=False, help_text="Add the pool's exact best-set odds.")
    campaign = campaign_field()
    note = note_field()


class OreSetSerializer(serializers.Serializer):  # type: ignore[type-arg]
    width = serializers.IntegerField(help_text="How many dice match.")
    height = serializers.IntegerField(help_text="The face they show.")


class OreBestOddsSerializer(serializers.Serializer):  # type: ignore[type-arg]
    width = serializers.IntegerField(help_text="0 stands for no set.")
    height = serializers.IntegerField()
    p = serializers.FloatField()


class OreOddsSerializer(serializers.Serializer):  # type: ignore[type-arg]
    normal = serializers.IntegerField(help_text="Normal dice rolled.")
    expert = serializers.IntegerField(allow_null=True)
    master = serializers.BooleanField()
    difficulty = serializers.IntegerField()
    best = OreBestOddsSerializer(many=True, help_text="Each possible best set with its chance.")
    success = serializers.FloatField(help_text="Chance of a set meeting the difficulty.")
    width = probability_map("Width of the best set -> probability.")
    height = probability_map("Height of the best set -> probability.")
    location = probability_map("Hit location of the best set -> probability.")


class OreOddsWithExactSerializer(OreOddsSerializer):
    exact = exact_twin(OreOddsSerializer)


class OreReadingSerializer(serializers.Serializer):  # type: ignore[type-arg]
    """A roll read out: its dice, sets and best set."""

    rolled = serializers.IntegerField(help_text="Dice on the table, special die included.")
    dice = serializers.ListField(child=serializers.IntegerField(), help_text="Normal dice.")
    expert = serializers.IntegerField(allow_null=True)
    master_value = serializers.IntegerField(
        allow_null=True, help_text="The face the master die was set to."
    )
    faces = serializers.ListField(child=serializers.IntegerField(), help_text="Every die, sorted.")
    sets = OreSetSerializer(many=True, help_text="Widest first, then tallest.")
    loose = serializers.ListField(child=serializers.IntegerField())
    difficulty = serializers.IntegerField()
    best = OreSetSerializer(allow_null=True)
    success = serializers.BooleanField()
    location = serializers.CharField(allow_null=True, help_text="Where the best set hits.")
    gobbled = serializers.ListField(
        child=serializers.IntegerField(), help_text="Faces taken off by hits, in order."
    )


class OreRollSerializer(OreReadingSerializer):
    odds = OreOddsWithExactSerializer(required=False)


_JOHN = [3, 4, 4, 4, 6, 8, 10]
_MUGGER = [1, 5, 7, 7, 8]


class OreRollView(RulesView):
    @documented(
        "Roll or read an ORE pool",
        OreRollRequestSerializer,
        OreRollSerializer,
        [
            request_example(
                "John Doe's seven dice",
                {
                    "pool": 7,
                    "penalty": 0,
                    "expert": None,
                    "master": False,
                    "difficulty": 0,
                    "dice": _JOHN,
                },
            ),
            response_example(
                "A 3x4 to the left arm", ore.roll(ore.OrePool(7), dice=_JOHN).as_dict()
            ),
        ],
        logs=True,
    )
    def post(self, request: Request) -> Response:
        """Sets among the dice (width x height), the best one and where it hits."""
        data = self.parse(OreRollRequestSerializer)
        campaign = self.campaign(data)
        result = OreRollRequestSerializer().roll(data, data["difficulty"])
        self.log(campaign, data, result, physical=data.get("dice") is not None)
        body = result.as_dict()
        if data["odds"]:
            if data.get("pool") is None:
                raise RulesError("odds are for a pool: give pool as well")
            pool = ore.OrePool(data["pool"], data["penalty"], data.get("expert"), data["master"])
            body["odds"] = with_exact(ore.pool_odds(pool, data["difficulty"]))
        return Response(body)


class OreContestRequestSerializer(serializers.Serializer):  # type: ignore[type-arg]
    a = OrePoolRequestSerializer(
        help_text="The first side's pool or dice (dice for both sides, or for neither)."
    )
    b = OrePoolRequestSerializer(help_text="The second side's pool or dice.")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        every_side_typed_in({"a": attrs["a"], "b": attrs["b"]}, "dice")
        return attrs


class OreContestSideSerializer(serializers.Serializer):  # type: ignore[type-arg]
    best = OreSetSerializer(allow_null=True)


class OreContestSerializer(serializers.Serializer):  # type: ignore[type-arg]
    first = serializers.CharField(
        allow_null=True, help_text="'a' or 'b'; null when neither has a set, or both tie."
    )
    simultaneous = serializers.BooleanField(help_text="Both best sets are equal.")
    a = OreContestSideSerializer()
    b = OreContestSideSerializer()


class OreContestView(RulesView):
    @documented(
        "Order a dynamic ORE contest",
        OreContestRequestSerializer,
        OreContestSerializer,
        [
            request_example(
                "John Doe against the mugger", {"a": {"dice": _JOHN}, "b": {"dice": _MUGGER}}
            ),
            response_example(
                "The wider set acts first",
                ore.contest(ore.read_dice(_JOHN), ore.read_dice(_MUGGER)).as_dict(),
            ),
        ],
    )
    def post(self, request: Request) -> Response:
        """The wider best set acts first; equal widths go to the taller set."""
        data = self.parse(OreContestRequestSerializer)
        shape = OrePoolRequestSerializer()
        return Response(ore.contest(shape.roll(data["a"]), shape.roll(data["b"])).as_dict())


class OreOddsRequestSerializer(serializers.Serializer):  # type: ignore[type-arg]
    pool = WholeNumberField(min_value=0, max_value=100, help_text="Every die of the pool.")
    penalty = WholeNumberField(min_value=0, max_value=100, default=0)
    expert = WholeNumberField(min_value=1, max_value=10, required=False, allow_null=True)
    master = StrictBooleanField(default=False)
    difficulty = WholeNumberField(min_value=0, max_value=10, default=0)


class OreOddsView(RulesView):
    @documented(
        "Exact odds of an ORE pool",
        OreOddsRequestSerializer,
        OreOddsWithExactSerializer,
        [response_example("Five dice", with_exact(ore.pool_odds(ore.OrePool(5))))],
        query=True,
    )
    def get(self, request: Request) -> Response:
        """Chance of each best set, of success, and of each width, height and location."""
        data = self.parse(OreOddsRequestSerializer)
        pool = ore.OrePool(data["pool"], data["penalty"], data.get("expert"), data["master"])
        return Response(with_exact(ore.pool_odds(pool, data["difficulty"])))


class OreContestOddsRequestSerializer(serializers.Serializer):  # type: ignore[type-arg]
    a_pool = WholeNumberField(min_value=0, max_value=100, help_text="First side's pool.")
    a_penalty = WholeNumberField(min_value=0, max_value=100, default=0)
    a_expert = WholeNumberField(min_value=1, max_value=10, required=False, allow_null=True)
    a_master = StrictBooleanField(default=False)
    b_pool = WholeNumberField(min_value=0, max_value=100, help_text="Second side's pool.")
    b_penalty = WholeNumberField(min_value=0, max_value=100, default=0)
    b_expert = WholeNumberField(min_value=1, max_value=10, required=False, allow_null=True)
    b_master = StrictBooleanField(default=False)


class OreContestOddsSerializer(serializers.Serializer):  # type: ignore[type-arg]
    a_first = serializers.FloatField()
    b_first = serializers.FloatField()
    simultaneous = serializers.FloatField()
    neither = serializers.FloatField(help_text="Neither side rolls a set.")


class OreContestOddsWithExactSerializer(OreContestOddsSerializer):
    exact = exact_twin(OreContestOddsSerializer)


class OreContestOddsView(RulesView):
    @documented(
        "Exact odds of a dynamic ORE contest",
        OreContestOddsRequestSerializer,
        OreContestOddsWithExactSerializer,
        [
            response_example(
                "Seven dice against five",
                with_exact(ore.contest_odds(ore.OrePool(7), ore.OrePool(5))),
            )
        ],
        query=True,
    )
    def get(self, request: Request) -> Response:
        """Chance that each side's best set lands first."""
        data = self.parse(OreContestOddsRequestSerializer)
        a, b = (
            ore.OrePool(
                data[f"{s}_pool"],
                data[f"{s}_penalty"],
                data.get(f"{s}_expert"),
                data[f"{s}_master"],
            )
            for s in "ab"
        )
        return Response(with_exact(ore.contest_odds(a, b)))


def _ore_pool(data: Mapping[str, Any]) -> ore.OrePool:
    if data.get("pool") is None:
        raise RulesError("odds are for a pool: give pool as well")
    return ore.OrePool(data["pool"], data["penalty"], data.get("expert"), data["master"])


class OreGobbleRequestSerializer(OrePoolRequestSerializer):
    difficulty = WholeNumberField(
        min_value=0, max_value=10, default=0, help_text="Lowest height a set needs."
    )
    hits = WholeNumberField(
        min_value=0,
        max_value=ore.MAX_DICE,
        default=1,
        help_text="Damaging hits this roller took before acting; each takes one die off the "
        "tallest set.",
    )


class OreGobbleSerializer(serializers.Serializer):  # type: ignore[type-arg]
    before = OreReadingSerializer(help_text="The roll as it came up.")
    after = OreReadingSerializer(
        help_text="What is left once the hits took their dice (listed under gobbled)."
    )


class OreGobbleView(RulesView):
    @documented(
        "Take dice off an ORE roll that was hit (gobble)",
        OreGobbleRequestSerializer,
        OreGobbleSerializer,
        [
            request_example("John's blow lands on the mugger", {"dice": _MUGGER, "hits": 1}),
            response_example(
                "The mugger's 2x7 falls apart",
                {
                    "before": ore.read_dice(_MUGGER).as_dict(),
                    "after": ore.gobble(ore.read_dice(_MUGGER)).as_dict(),
                },
            ),
        ],
    )
    def post(self, request: Request) -> Response:
        """A damaging hit removes one die from the target's tallest set, one die per hit.

        No odds here: once the dice are on the table what a hit takes is certain.
        """
        data = self.parse(OreGobbleRequestSerializer)
        before = OrePoolRequestSerializer().roll(data, data["difficulty"])
        after = ore.gobble(before, data["hits"])
        return Response({"before": before.as_dict(), "after": after.as_dict()})


class OreMultipleRequestSerializer(OreRollRequestSerializer):
    actions = WholeNumberField(
        min_value=1,
        max_value=ore.MAX_DICE,
        help_text="Actions declared for this one roll; each needs a set of its own.",
    )
    charge = StrictBooleanField(
        default=False,
        help_text="Take one die off the pool for each action after the first, as in the "
        "rules' Master Li example (their multiple-actions paragraph charges nothing: the "
        "table decides).",
    )


class OreSetCountOddsSerializer(serializers.Serializer):  # type: ignore[type-arg]
    normal = serializers.IntegerField(help_text="Normal dice rolled.")
    expert = serializers.IntegerField(allow_null=True)
    master = serializers.BooleanField()
    difficulty = serializers.IntegerField()
    sets = probability_map("Number of sets meeting the difficulty -> probability.")
    at_least = probability_map("k -> chance of k sets or more.")
    all_actions = serializers.FloatField(help_text="Chance that every declared action gets a set.")


class OreSetCountOddsWithExactSerializer(OreSetCountOddsSerializer):
    exact = exact_twin(OreSetCountOddsSerializer)


# drf-spectacular 0.30 documents a list of nullable serializers as a list of plain ones (the
# ``$ref`` leaves ``nullable`` out): the null entries broke the documented schema.
@extend_schema_field(
    {
        "type": "array",
        "items": {
            "type": "object",
            "nullable": True,
            "properties": {
                "width": {"type": "integer", "description": "How many dice match."},
                "height": {"type": "integer", "description": "The face they show."},
            },
            "required": ["height", "width"],
        },
    }
)
class _AssignedSetsField(serializers.ListField):  # type: ignore[type-arg]
    pass


class OreMultipleSerializer(serializers.Serializer):  # type: ignore[type-arg]
    actions = serializers.IntegerField()
    penalty = serializers.IntegerField(
        help_text="Penalty dice on the pool, the charge for extra actions included."
    )
    roll = OreReadingSerializer()
    assigned = _AssignedSetsField(
        child=OreSetSerializer(allow_null=True),
        help_text="One entry per action, best set first; null where no set was left for it.",
    )
    every_action = serializers.BooleanField(help_text="Each action got a set.")
    odds = OreSetCountOddsWithExactSerializer(required=False)


def _set_count_odds(counts: ore.SetCountOdds, actions: int) -> dict[str, object]:
    p = counts.all_actions(actions)
    exact = {**counts.as_dict(exact=True), "all_actions": f"{p.numerator}/{p.denominator}"}
    return {**counts.as_dict(), "all_actions": float(p), "exact": exact}


_LI_DICE = [1, 1, 3, 5, 5, 5, 7, 9, 9, 10]


class OreMultipleView(RulesView):
    @documented(
        "Roll once for several ORE actions",
        OreMultipleRequestSerializer,
        OreMultipleSerializer,
        [
            request_example(
                "Master Li's three actions",
                {"pool": 12, "actions": 3, "charge": True, "dice": _LI_DICE},
            ),
            response_example(
                "Three sets, one per action",
                {
                    "actions": 3,
                    "penalty": 2,
                    "roll": ore.roll(ore.OrePool(12, 2), dice=_LI_DICE).as_dict(),
                    "assigned": [
                        s.as_dict() if s else None
                        for s in ore.assign_sets(ore.read_dice(_LI_DICE), 3)
                    ],
                    "every_action": True,
                },
            ),
        ],
        logs=True,
    )
    def post(self, request: Request) -> Response:
        """Each declared action takes one set, the best first; the player may swap them."""
        data = self.parse(OreMultipleRequestSerializer)
        campaign = self.campaign(data)
        actions = data["actions"]
        if data["charge"]:
            if data.get("pool") is None:
                raise RulesError("the charge for extra actions comes off a pool: give pool")
            data["penalty"] += ore.multiple_action_penalty(actions)
        result = OreRollRequestSerializer().roll(data, data["difficulty"])
        self.log(campaign, data, result, physical=data.get("dice") is not None)
        assigned = ore.assign_sets(result, actions)
        body: dict[str, object] = {
            "actions": actions,
            "penalty": data["penalty"],
            "roll": result.as_dict(),
            "assigned": [None if s is None else s.as_dict() for s in assigned],
            "every_action": all(s is not None for s in assigned),
        }
        if data["odds"]:
            counts = ore.sets_odds(_ore_pool(data), data["difficulty"])
            body["odds"] = _set_count_odds(counts, actions)
        return Response(body)


class OreCooperateRequestSerializer(serializers.Serializer):  # type: ignore[type-arg]
    members = OrePoolRequestSerializer(
        many=True,
        min_length=2,
        max_length=10,
        help_text="Each character's pool (same stat + skill). With timed, each may give the "
        "dice they rolled instead: every member, or none.",
    )
    timed = StrictBooleanField(
        default=False,
        help_text="Time matters: each rolls alone and all the faces are read together, as long "
        "as one of them rolled a set alone. Otherwise the pools are added up and rolled once.",
    )
    difficulty = WholeNumberField(
        min_value=0, max_value=10, default=0, help_text="Lowest height a set needs."
    )
    dice = serializers.ListField(
        child=WholeNumberField(min_value=1, max_value=10),
        max_length=ore.MAX_DICE,
        required=False,
        allow_null=True,
        help_text="Not timed: the normal d10s of the combined roll; leave out to let the "
        "server roll.",
    )
    odds = StrictBooleanField(
        default=False, help_text="Not timed: add the combined pool's exact best-set odds."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        members = attrs["members"]
        if attrs["timed"] and any(m.get("dice") is not None for m in members):
            missing = [m.get("dice") is None for m in members]
            if any(missing):
                message = (
                    f"Type this member's dice too: the others' are typed in, and {_NEVER_MIXED}."
                )
                raise serializers.ValidationError(
                    {"members": [{"dice": [message]} if m else {} for m in missing]}
                )
        return attrs


class OrePoolSerializer(serializers.Serializer):  # type: ignore[type-arg]
    pool = serializers.IntegerField()
    penalty = serializers.IntegerField()
    expert = serializers.IntegerField(allow_null=True)
    master = serializers.BooleanField()


class OreCooperateSerializer(serializers.Serializer):  # type: ignore[type-arg]
    timed = serializers.BooleanField()
    pool = OrePoolSerializer(
        allow_null=True, help_text="The combined pool (one special die kept); null when timed."
    )
    roll = OreReadingSerializer(allow_null=True, help_text="The combined roll; null when timed.")
    rolls = OreReadingSerializer(many=True, help_text="Timed: each character's own roll.")
    best = OreSetSerializer(allow_null=True)
    success = serializers.BooleanField()
    location = serializers.CharField(allow_null=True)
    odds = OreOddsWithExactSerializer(required=False)


class OreCooperateView(RulesView):
    @documented(
        "Cooperate on an ORE roll",
        OreCooperateRequestSerializer,
        OreCooperateSerializer,
        [
            request_example(
                "Two pools rolled as one",
                {
                    "members": [{"pool": 4}, {"pool": 5, "master": True}],
                    "dice": [2, 2, 5, 6, 8, 8, 9, 10],
                },
            ),
            request_example(
                "Each rolls alone against the clock",
                {"timed": True, "members": [{"dice": [3, 3, 8]}, {"dice": [8, 8, 1]}]},
            ),
            response_example(
                "The faces read together make a 3x8",
                {
                    "timed": True,
                    "pool": None,
                    "roll": None,
                    "rolls": [
                        ore.read_dice([3, 3, 8]).as_dict(),
                        ore.read_dice([8, 8, 1]).as_dict(),
                    ],
                    "best": {"width": 3, "height": 8},
                    "success": True,
                    "location": "torso",
                },
            ),
        ],
    )
    def post(self, request: Request) -> Response:
        """Characters pool their dice for one roll, or read their separate rolls together."""
        data = self.parse(OreCooperateRequestSerializer)
        members = data["members"]
        difficulty = data["difficulty"]
        shape = OrePoolRequestSerializer()
        if data["timed"]:
            if data.get("dice") is not None or data["odds"]:
                raise RulesError(
                    "timed cooperation: give each member's dice, not combined dice or odds"
                )
            rolls = [shape.roll(m, difficulty) for m in members]
            best = ore.team_best(rolls, difficulty)
            return Response(
                {
                    "timed": True,
                    "pool": None,
                    "roll": None,
                    "rolls": [r.as_dict() for r in rolls],
                    "best": None if best is None else best.as_dict(),
                    "success": best is not None,
                    "location": None if best is None else best.location,
                }
            )
        if any(m.get("pool") is None or m.get("dice") is not None for m in members):
            raise RulesError(
                "cooperation adds up pools: give each member's pool, and the "
                "dice of the combined roll (if any) beside members"
            )
        pool = ore.cooperate(
            [ore.OrePool(m["pool"], m["penalty"], m.get("expert"), m["master"]) for m in members]
        )
        result = ore.roll(pool, difficulty=difficulty, dice=data.get("dice"), rng=server_rng())
        body: dict[str, object] = {
            "timed": False,
            "pool": {
                "pool": pool.pool,
                "penalty": pool.penalty,
                "expert": pool.expert,
                "master": pool.master,
            },
            "roll": result.as_dict(),
            "rolls": [],
            "best": None if result.best is None else result.best.as_dict(),
            "success": result.success,
            "location": result.location,
        }
        if data["odds"]:
            body["odds"] = with_exact(ore.pool_odds(pool, difficulty))
        return Response(body)


# ---------------------------------------------------------------------------------------------
# Simple Die System


class SdsDifficultySerializer(serializers.Serializer):  # type: ignore[type-arg]
    die = WholeNumberField(
        min_value=4,
        max_value=sds.MAX_SIZE,
        required=False,
        allow_null=True,
        help_text="The GM's difficulty die (4, 6, 8 ...).",
    )
    hard = WholeNumberField(
        min_value=1,
        max_value=sds.MAX_HARD,
        required=False,
        allow_null=True,
        help_text="A fixed Hard number instead of a die.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if (attrs.get("die") is None) == (attrs.get("hard") is None):
            raise serializers.ValidationError("Give exactly one of die or hard.")
        return attrs


class SdsSkillSerializer(serializers.Serializer):  # type: ignore[type-arg]
    skill = WholeNumberField(
        min_value=4, max_value=sds.MAX_SIZE, help_text="Skill die size: 4, 6, 8 ... (even)."
    )
    mod = WholeNumberField(min_value=0, max_value=50, default=0, help_text="Item modifier.")
    self_buff = WholeNumberField(min_value=0, max_value=50, default=0)
    party_buff = WholeNumberField(min_value=0, max_value=50, default=0)
    focus = WholeNumberField(min_value=0, max_value=50, default=0, help_text="Added in full.")
    penalty = WholeNumberField(min_value=0, max_value=50, default=0)
    unskilled = StrictBooleanField(default=False, help_text="Roll twice, keep the lower.")

    def skill_check(self, data: Mapping[str, Any]) -> sds.SkillCheck:
        keys = ("skill", "mod", "self_buff", "party_buff", "focus", "penalty", "unskilled")
        return sds.SkillCheck(**{k: data[k] for k in keys})

    @staticmethod
    def difficulty(value: Mapping[str, Any] | None) -> sds.Difficulty | None:
        return None if value is None else sds.Difficulty(value.get("die"), value.get("hard"))


class SdsCheckRequestSerializer(SdsSkillSerializer):
    difficulty = SdsDifficultySerializer(
        required=False, allow_null=True, help_text="{'die': 10} or {'hard': 8}; null for none."
    )
    skill_rolls = serializers.ListField(
        child=WholeNumberField(min_value=1, max_value=100),
        max_length=2,
        required=False,
        allow_null=True,
        help_text="Face(s) on the physical skill die: two when unskilled.",
    )
    flag_rolls = serializers.ListField(
        child=WholeNumberField(min_value=1, max_value=20),
        min_length=1,
        max_length=50,
        required=False,
        allow_null=True,
        help_text="The flag d20, then every heroic re-roll.",
    )
    gm_roll = WholeNumberField(
        min_value=1,
        max_value=100,
        required=False,
        allow_null=True,
        help_text="Face on the GM's physical die: needed with a difficulty die whenever the "
        "player's dice are typed in (typed-in dice are never mixed with server dice).",
    )
    diceless = StrictBooleanField(default=False, help_text="The player threw every die.")
    odds = StrictBooleanField(default=False, help_text="Add the exact odds of this roll.")
    campaign = campaign_field()
    note = note_field()


class SdsOddsSerializer(serializers.Serializer):  # type: ignore[type-arg]
    skill_result = probability_map("Skill result before the flag -> probability.")
    flags = probability_map("critical, tremendous, heroic, none -> probability.")
    heroic_at_least = probability_map("k -> chance the result is multiplied by 10**k or more.")
    gm_result = probability_map("The GM's result -> probability.")
    player = serializers.FloatField(allow_null=True, help_text="Chance the player wins.")
    gm = serializers.FloatField(allow_null=True, help_text="Chance the GM wins.")


class SdsOddsWithExactSerializer(SdsOddsSerializer):
    exact = exact_twin(SdsOddsSerializer)


class SdsCheckSerializer(serializers.Serializer):  # type: ignore[type-arg]
    effective_skill = serializers.IntegerField(help_text="Skill after the stacked bonus.")
    die = serializers.CharField(help_text="The physical die rolled, e.g. 'd20'.")
    skill_rolls = serializers.ListField(child=serializers.IntegerField())
    skill_result = serializers.IntegerField()
    flag_rolls = serializers.ListField(child=serializers.IntegerField())
    multiplier = serializers.IntegerField(help_text="10 per link of a heroic chain.")
    result = serializers.IntegerField()
    flags = serializers.ListField(
        child=serializers.CharField(), help_text="critical, tremendous or heroic."
    )
    gm_die = serializers.CharField(allow_null=True)
    gm_roll = serializers.IntegerField(allow_null=True)
    gm_result = serializers.IntegerField(allow_null=True)
    winner = serializers.CharField(allow_null=True, help_text="'player' or 'gm'.")
    diceless = serializers.BooleanField()
    odds = SdsOddsWithExactSerializer(required=False)


_SDS_EXAMPLE: dict[str, object] = {
    "skill": 8,
    "difficulty": {"die": 10},
    "skill_rolls": [5],
    "flag_rolls": [10, 20, 3],
    "gm_roll": 7,
}


class SdsCheckView(RulesView):
    @documented(
        "Roll or read a Simple Die System check",
        SdsCheckRequestSerializer,
        SdsCheckSerializer,
        [
            request_example("A heroic chain against a d10", _SDS_EXAMPLE),
            response_example(
                "5 x 100 beats the GM's 7",
                sds.check(
                    sds.SkillCheck(8),
                    sds.Difficulty(die=10),
                    skill_rolls=[5],
                    flag_rolls=[10, 20, 3],
                    gm_roll=7,
                ).as_dict(),
            ),
        ],
        logs=True,
    )
    def post(self, request: Request) -> Response:
        """The skill die against the GM's die or Hard number, with the flag d20's effects."""
        data = self.parse(SdsCheckRequestSerializer)
        campaign = self.campaign(data)
        shape = SdsSkillSerializer()
        skill = shape.skill_check(data)
        difficulty = shape.difficulty(data.get("difficulty"))
        result = sds.check(
            skill,
            difficulty,
            skill_rolls=data.get("skill_rolls"),
            flag_rolls=data.get("flag_rolls"),
            gm_roll=data.get("gm_roll"),
            rng=server_rng(),
            diceless=data["diceless"],
        )
        # The engine refuses a roll typed in only in part, so one typed-in die means all are.
        self.log(campaign, data, result, physical=data.get("skill_rolls") is not None)
        body = result.as_dict()
        if data["odds"]:
            body["odds"] = with_exact(sds.check_odds(skill, difficulty))
        return Response(body)


class SdsOddsRequestSerializer(SdsSkillSerializer):
    die = WholeNumberField(
        min_value=4,
        max_value=sds.MAX_SIZE,
        required=False,
        allow_null=True,
        help_text="The GM's difficulty die.",
    )
    hard = WholeNumberField(
        min_value=1,
        max_value=sds.MAX_HARD,
        required=False,
        allow_null=True,
        help_text="A Hard number instead of a die.",
    )


class SdsOddsView(RulesView):
    @documented(
        "Exact odds of a Simple Die System check",
        SdsOddsRequestSerializer,
        SdsOddsWithExactSerializer,
        [
            response_example(
                "Skill 8 against a d8",
                with_exact(sds.check_odds(sds.SkillCheck(8), sds.Difficulty(die=8))),
            )
        ],
        query=True,
    )
    def get(self, request: Request) -> Response:
        """The skill die's results, the flag's chances and who wins, heroic chains included."""
        data = self.parse(SdsOddsRequestSerializer)
        shape = SdsSkillSerializer()
        difficulty = None
        if data.get("die") is not None or data.get("hard") is not None:
            difficulty = sds.Difficulty(data.get("die"), data.get("hard"))
        return Response(with_exact(sds.check_odds(shape.skill_check(data), difficulty)))


# ---------------------------------------------------------------------------------------------
# OK RPG: damage, the action-point round, Tide of Battle

_RANK_HELP = "A rank name (Pth, Def, Avg, Gd, Grt, Ext, Her, Leg, Mth), optionally with '+'."


class RankField(serializers.CharField):
    """An OK RPG rank such as 'Grt' or 'Avg+'."""

    def to_internal_value(self, data: Any) -> okrpg.Rank:  # type: ignore[override]
        if not isinstance(data, str):
            raise serializers.ValidationError("A rank is a name such as 'Grt' or 'Avg+'.")
        try:
            return okrpg.parse_rank(data[:20])
        except RulesError as exc:
            raise serializers.ValidationError(str(exc)) from exc


class OkrpgDamageRequestSerializer(serializers.Serializer):  # type: ignore[type-arg]
    damage = RankField(help_text=f"Damage rank. {_RANK_HELP}")
    dr = RankField(help_text=f"Damage resistance rank. {_RANK_HELP}")
    lethality = serializers.ChoiceField(
        choices=list(okrpg.LETHALITY), default="deep_puncturing", help_text="Lethality row."
    )


class OkrpgDamageSerializer(serializers.Serializer):  # type: ignore[type-arg]
    net = serializers.IntegerField(help_text="Damage minus DR, in half-ranks.")
    points = serializers.IntegerField()
    rounded_up = serializers.BooleanField(help_text="The points were rounded up (the asterisk).")
    lethality = serializers.CharField()
    lethal = serializers.IntegerField()
    nonlethal = serializers.IntegerField()


class OkrpgDamageView(RulesView):
    @documented(
        "OK RPG damage points of a hit",
        OkrpgDamageRequestSerializer,
        OkrpgDamageSerializer,
        [
            request_example(
                "A Great cut against Average+ DR",
                {"damage": "Grt", "dr": "Avg+", "lethality": "cutting"},
            ),
            response_example(
                "Three points, two lethal", okrpg.damage("Grt", "Avg+", "cutting").as_dict()
            ),
        ],
    )
    def post(self, request: Request) -> Response:
        """Points from the damage rank over DR, split into lethal and nonlethal."""
        data = self.parse(OkrpgDamageRequestSerializer)
        return Response(okrpg.damage(data["damage"], data["dr"], data["lethality"]).as_dict())


class OkrpgCombatantSerializer(serializers.Serializer):  # type: ignore[type-arg]
    name = fields.CharField(max_length=80)
    successes = WholeNumberField(min_value=0, max_value=100, help_text="Initiative successes.")
    carry = WholeNumberField(
        min_value=-100, max_value=3, default=0, help_text="Points carried from last round."
    )
    down = StrictBooleanField(default=False, help_text="Down: no action points.")


class OkrpgRoundRequestSerializer(serializers.Serializer):  # type: ignore[type-arg]
    combatants = OkrpgCombatantSerializer(many=True, max_length=100, min_length=1)


class OkrpgRoundSerializer(serializers.Serializer):  # type: ignore[type-arg]
    start = serializers.DictField(child=serializers.IntegerField(), help_text="Points at start.")
    order = serializers.ListField(child=serializers.CharField(), help_text="Names, acting order.")
    carry = serializers.DictField(
        child=serializers.IntegerField(), help_text="Points carried to next round per name."
    )


_ROUND_EXAMPLE = [
    {"name": "A", "successes": 7, "carry": 0},
    {"name": "B", "successes": 4, "carry": 2},
    {"name": "C", "successes": 2, "carry": 0},
]


class OkrpgRoundView(RulesView):
    @documented(
        "Play out an OK RPG action-point round",
        OkrpgRoundRequestSerializer,
        OkrpgRoundSerializer,
        [
            request_example("Three combatants", {"combatants": _ROUND_EXAMPLE}),
            response_example(
                "A and B act twice each",
                okrpg.run_round([okrpg.Combatant(**c) for c in _ROUND_EXAMPLE]).as_dict(),  # type: ignore[arg-type]
            ),
        ],
    )
    def post(self, request: Request) -> Response:
        """Who acts when if everybody acts as soon as they may; what carries over."""
        data = self.parse(OkrpgRoundRequestSerializer)
        plan = okrpg.run_round([okrpg.Combatant(**c) for c in data["combatants"]])
        return Response(plan.as_dict())


_TIDE_MODES = ["normal", "worse", "better"]


class OkrpgTideRequestSerializer(serializers.Serializer):  # type: ignore[type-arg]
    tide = serializers.ChoiceField(
        choices=_TIDE_MODES, default="normal", help_text="worse / better: two dice, one kept."
    )
    dice = serializers.ListField(
        child=WholeNumberField(min_value=1, max_value=6),
        max_length=2,
        required=False,
        allow_null=True,
        help_text="The d6 face(s) rolled.",
    )
    odds = StrictBooleanField(default=False, help_text="Add the exact Tide odds.")
    campaign = campaign_field()
    note = note_field()


class OkrpgTideOddsSerializer(serializers.Serializer):  # type: ignore[type-arg]
    values = probability_map("Tide value -> probability.")
    edge = serializers.FloatField(help_text="Chance of a 6.")
    setback = serializers.FloatField(help_text="Chance of a 1.")


class OkrpgTideOddsWithExactSerializer(OkrpgTideOddsSerializer):
    exact = exact_twin(OkrpgTideOddsSerializer)


class OkrpgTideSerializer(serializers.Serializer):  # type: ignore[type-arg]
    mode = serializers.CharField()
    dice = serializers.ListField(child=serializers.IntegerField())
    value = serializers.IntegerField()
    recoveries = serializers.IntegerField(help_text="Recoveries this round (0, 1 or 2).")
    edge = serializers.BooleanField()
    setback = serializers.BooleanField()
    odds = OkrpgTideOddsWithExactSerializer(required=False)


class OkrpgTideView(RulesView):
    @documented(
        "Roll or read a side's OK RPG Tide of Battle",
        OkrpgTideRequestSerializer,
        OkrpgTideSerializer,
        [
            request_example("A cursed side rolls 6 and 2", {"tide": "worse", "dice": [6, 2]}),
            response_example("The 2 is kept", okrpg.read_tide([6, 2], "worse").as_dict()),
        ],
        logs=True,
    )
    def post(self, request: Request) -> Response:
        """A 6 is an edge and a second recovery; a 1 is a setback and none."""
        data = self.parse(OkrpgTideRequestSerializer)
        campaign = self.campaign(data)
        result = okrpg.roll_tide(data["tide"], dice=data.get("dice"), rng=server_rng())
        self.log(campaign, data, result, physical=data.get("dice") is not None)
        body = result.as_dict()
        if data["odds"]:
            body["odds"] = with_exact(okrpg.tide_odds(data["tide"]))
        return Response(body)


class OkrpgOddsRequestSerializer(serializers.Serializer):  # type: ignore[type-arg]
    tide = serializers.ChoiceField(choices=_TIDE_MODES, default="normal")


class OkrpgOddsView(RulesView):
    @documented(
        "Exact odds of an OK RPG Tide of Battle",
        OkrpgOddsRequestSerializer,
        OkrpgTideOddsWithExactSerializer,
        [response_example("Worse of two dice", with_exact(okrpg.tide_odds("worse")))],
        query=True,
    )
    def get(self, request: Request) -> Response:
        """Chance of each Tide value, of an edge and of a setback."""
        data = self.parse(OkrpgOddsRequestSerializer)
        return Response(with_exact(okrpg.tide_odds(data["tide"])))
