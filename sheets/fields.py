"""Serializer fields that take only the JSON type the schema documents.

DRF's own fields are lenient: an IntegerField takes ``"7"``, ``7.0`` and ``true``; a CharField
takes ``7`` (and stores ``"7"``); a BooleanField takes ``"yes"``, ``"on"`` and ``1``. The schema
says integer, string, boolean, and the API parses JSON bodies only (config/parsers.py), where
each has a type of its own: what the schema refuses, the API refuses too, with a 400 naming
the field, as the rules API always did (README, "Rules API").

``StrictModelSerializer`` builds its model fields from these, and the API's own serializers
declare them.

Every serializer that reads a JSON body derives from ``StrictSerializer`` or
``StrictModelSerializer``, which also refuse a key they do not know: a typo (``"speed"`` for
``"spd"``) was dropped in silence and the sheet stored with the default. A key is known when the
serializer has a field of that name, read-only ones included: what a GET answers can be sent back
as it is in a PUT (``id``, ``version``, the computed parts), and is ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.http import QueryDict
from rest_framework import relations, serializers

from sheets.ids import MAX_ID


class IntegerField(serializers.IntegerField):
    """A JSON integer: no strings, floats or booleans."""

    default_error_messages = {
        "invalid": "Must be a whole number, such as 7.",
        "out_of_range": "Must be a whole number between -{limit} and {limit}.",
    }

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        # JSON has no limit on an integer's size; the databases do (a bigint), and SQLite's
        # driver raises OverflowError past it: a field without a bound of its own (ids) is one.
        if abs(data) > MAX_ID:
            self.fail("out_of_range", limit=MAX_ID)
        return super().to_internal_value(data)


class CharField(serializers.CharField):
    """A JSON string: no numbers or booleans. Its max_length holds for the string as sent
    (what the schema's maxLength says), and so for what is stored once stripped: DRF checked
    only the stripped string, so 121 characters starting with a blank or a control character
    that counts as one (``\x1f``) passed a limit of 120."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        if self.max_length is not None and len(data) > self.max_length:
            self.fail("max_length", max_length=self.max_length)
        return super().to_internal_value(data)


class BooleanField(serializers.BooleanField):
    """JSON true or false: no strings or numbers."""

    default_error_messages = {"invalid": "Must be true or false."}

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class ManyRelatedField(serializers.ManyRelatedField):
    """A JSON array of ids. DRF's takes anything iterable: ``{}`` passed as no id at all
    (and ``{"7": 1}`` as [7]), where the schema documents an array."""

    def to_internal_value(self, data: Any) -> list[Any]:
        if not isinstance(data, list):
            self.fail("not_a_list", input_type=type(data).__name__)
        return list(super().to_internal_value(data))


class PrimaryKeyRelatedField(serializers.PrimaryKeyRelatedField[Any]):
    """An id as a JSON integer: ``"5"`` is refused like any other string; ``many=True``
    takes a JSON array only."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("incorrect_type", data_type=type(data).__name__)
        return super().to_internal_value(data)

    @classmethod
    def many_init(cls, *args: Any, **kwargs: Any) -> ManyRelatedField:
        # DRF's own many_init, with the strict list.
        list_kwargs: dict[str, Any] = {"child_relation": cls(*args, **kwargs)}
        for key in kwargs:
            if key in relations.MANY_RELATION_KWARGS:
                list_kwargs[key] = kwargs[key]
        return ManyRelatedField(**list_kwargs)


UNKNOWN_KEY = "Unknown field: nothing was saved. This object takes: {known}."


class RefuseUnknownKeys:
    """Refuses a JSON object with a key that names none of the serializer's fields (a 400
    naming each such key, with the fields it does take). Nested serializers and the rows of
    a list check their own objects, so the error names the key where it is
    (``{"zones": [{}, {"speedd": [...]}]}``). A query string (the rules API's odds) is not
    checked: a link may carry parameters of its own."""

    fields: Any

    def known_keys(self) -> set[str]:
        """The keys this object may carry: its fields, read-only ones included."""
        return set(self.fields)

    def to_internal_value(self, data: Any) -> Any:
        unknown: dict[str, list[str]] = {}
        if isinstance(data, Mapping) and not isinstance(data, QueryDict):
            known = self.known_keys()
            writable = sorted(n for n, f in self.fields.items() if not f.read_only)
            message = UNKNOWN_KEY.format(known=", ".join(writable) or "nothing")
            unknown = {str(key): [message] for key in data if key not in known}
        try:
            value = super().to_internal_value(data)  # type: ignore[misc]  # a mixin of serializers
        except serializers.ValidationError as exc:
            if unknown and isinstance(exc.detail, dict):
                merged: dict[Any, Any] = {**exc.detail, **unknown}
                raise serializers.ValidationError(merged) from None
            raise
        if unknown:
            raise serializers.ValidationError(unknown)
        return value


class StrictSerializer(RefuseUnknownKeys, serializers.Serializer[Any]):
    """A serializer of a JSON body that refuses keys it does not know."""


_STRICT: dict[type, type] = {
    serializers.IntegerField: IntegerField,
    serializers.CharField: CharField,
    serializers.BooleanField: BooleanField,
}


class StrictModelSerializer(RefuseUnknownKeys, serializers.ModelSerializer[Any]):
    """A ModelSerializer whose integer, text and boolean model fields take their JSON type only,
    and which refuses keys it does not know."""

    serializer_field_mapping = {
        model_field: _STRICT.get(field, field)
        for model_field, field in serializers.ModelSerializer.serializer_field_mapping.items()
    }
    serializer_related_field = PrimaryKeyRelatedField
