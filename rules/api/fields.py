"""Fields of the rules API: strict in JSON bodies, lenient only where a query string leaves
no choice; and the exact-odds twins of response serializers ("n/d" strings for floats).
"""

from __future__ import annotations

import copy
import re
from typing import Any

from django.http import QueryDict
from drf_spectacular.utils import (
    extend_schema_field,
)
from rest_framework import serializers

from rules.engine import RulesError, ogs

# ---------------------------------------------------------------------------------------------
# Fields: strict in JSON bodies, lenient only where a query string leaves no choice


def _in_query(field: serializers.Field[Any, Any, Any, Any]) -> bool:
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
            items = dictionary.getlist(self.field_name)  # type: ignore[arg-type]  # bound: it has a name
            return [d for item in items for d in item.split(",") if d]
        return super().get_value(dictionary)


@extend_schema_field({"type": "string", "enum": ["d4", "d6", "d8", "d10", "d12"]})
class OgsDieField(serializers.Field[Any, Any, Any, Any]):
    """One OGS die: ``"d4"`` .. ``"d12"`` (or the bare size, ``8``)."""

    def to_internal_value(self, data: Any) -> int:
        try:
            return ogs.parse_die(data)
        except RulesError as exc:
            raise serializers.ValidationError(str(exc)) from exc

    def to_representation(self, value: int) -> str:
        return f"d{value}"


def ogs_dice_field(**kwargs: Any) -> DiceListField:
    return DiceListField(child=OgsDieField(), max_length=ogs.MAX_DICE, **kwargs)


def faces_field(high: int, **kwargs: Any) -> serializers.ListField:
    return serializers.ListField(
        child=WholeNumberField(min_value=1, max_value=high), max_length=ogs.MAX_DICE, **kwargs
    )


# ---------------------------------------------------------------------------------------------
# Exact-odds twins for the schema: the same shape with "n/d" strings where floats were


_TWINS: dict[type, type[serializers.Serializer[Any]]] = {}


def _exact_field(
    field: serializers.Field[Any, Any, Any, Any],
) -> serializers.Field[Any, Any, Any, Any]:
    if isinstance(field, serializers.FloatField):
        return serializers.CharField(
            help_text="Exact probability as a fraction, e.g. '111/128'.",
            allow_null=field.allow_null,
        )
    if isinstance(field, serializers.DictField | serializers.ListField):
        return type(field)(child=_exact_field(field.child), allow_null=field.allow_null)
    if isinstance(field, serializers.ListSerializer):
        return serializers.ListSerializer(child=_exact_field(field.child))  # type: ignore[arg-type]  # always set
    if isinstance(field, serializers.Serializer):
        return exact_twin(type(field))
    return copy.deepcopy(field)


def exact_twin(serializer_class: type[serializers.Serializer[Any]]) -> serializers.Serializer[Any]:
    """A copy of an odds serializer in which every probability is an ``"n/d"`` string."""
    if serializer_class not in _TWINS:
        fields = {name: _exact_field(f) for name, f in serializer_class().fields.items()}
        name = serializer_class.__name__.replace("Serializer", "") + "ExactSerializer"
        _TWINS[serializer_class] = type(name, (serializers.Serializer,), fields)
    return _TWINS[serializer_class]()


def probability_map(help_text: str) -> serializers.DictField:
    return serializers.DictField(child=serializers.FloatField(), help_text=help_text)
