"""Serializer fields that take only the JSON type the schema documents.

DRF's own fields are lenient: an IntegerField takes ``"7"``, ``7.0`` and ``true``; a CharField
takes ``7`` (and stores ``"7"``); a BooleanField takes ``"yes"``, ``"on"`` and ``1``. The schema
says integer, string, boolean, and the API parses JSON bodies only (config/parsers.py), where
each has a type of its own: what the schema refuses, the API refuses too, with a 400 naming
the field, as the rules API always did (README, "Rules API").

``StrictModelSerializer`` builds its model fields from these, and the API's own serializers
declare them.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers


class IntegerField(serializers.IntegerField):
    """A JSON integer: no strings, floats or booleans."""

    default_error_messages = {"invalid": "Must be a whole number, such as 7."}

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)  # type: ignore[no-any-return]


class CharField(serializers.CharField):
    """A JSON string: no numbers or booleans."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)  # type: ignore[no-any-return]


class BooleanField(serializers.BooleanField):
    """JSON true or false: no strings or numbers."""

    default_error_messages = {"invalid": "Must be true or false."}

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class PrimaryKeyRelatedField(serializers.PrimaryKeyRelatedField):  # type: ignore[type-arg]
    """An id as a JSON integer: ``"5"`` is refused like any other string."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("incorrect_type", data_type=type(data).__name__)
        return super().to_internal_value(data)


_STRICT: dict[type, type] = {
    serializers.IntegerField: IntegerField,
    serializers.CharField: CharField,
    serializers.BooleanField: BooleanField,
}


class StrictModelSerializer(serializers.ModelSerializer):  # type: ignore[type-arg]
    """A ModelSerializer whose integer, text and boolean model fields take their JSON type only."""

    serializer_field_mapping = {
        model_field: _STRICT.get(field, field)
        for model_field, field in serializers.ModelSerializer.serializer_field_mapping.items()
    }
    serializer_related_field = PrimaryKeyRelatedField
