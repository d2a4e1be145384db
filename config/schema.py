"""``/api/schema/``, built once per process and language instead of on every request.

Building the schema walks every view and serializer: 0.2 to 0.5 s of CPU, on an endpoint anyone
may call. It only changes with the code (or, in tests, the settings), so each process keeps the
last few it built: per API version and language (``?lang=``), what changes it from one
request to the next. It never depends on who asks: the schema is public
(``SERVE_PUBLIC``) and is built without the request, so one caller's view of it cannot reach
another."""

from __future__ import annotations

import functools
from typing import Any

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils import translation
from drf_spectacular.generators import SchemaGenerator

#: Schemas kept per process: versions times languages.
KEPT = 8


class CachedSchemaGenerator(SchemaGenerator):
    def get_schema(self, request: Any = None, public: bool = False) -> dict[str, Any]:
        if not public or self.patterns is not None:
            # Filtered by the caller's permissions (theirs alone), or for patterns given.
            built = super().get_schema(request=request, public=public)  # type: ignore[no-untyped-call]  # drf-spectacular is untyped
            return dict(built)
        # Shared by every request of the process: rendered, never changed.
        return public_schema(self.urlconf, self.api_version, schema_language())


def schema_language() -> str:
    """The language the schema is written in: the active one (``?lang=``) if Django knows it,
    else the site's. ``?lang=`` takes any text: one made up is one more name for the site's
    language, not one more schema to build."""
    for code in (translation.get_language(), settings.LANGUAGE_CODE):
        try:
            return translation.get_supported_language_variant(code or "")
        except LookupError:
            continue
    return settings.LANGUAGE_CODE


@functools.lru_cache(maxsize=KEPT)
def public_schema(urlconf: Any, api_version: str | None, language: str) -> dict[str, Any]:
    """The schema every caller gets (none sees more than another: ``SERVE_PUBLIC``), built
    without a request."""
    generator = SchemaGenerator(urlconf=urlconf, api_version=api_version)  # type: ignore[no-untyped-call]  # drf-spectacular is untyped
    with translation.override(language):
        return dict(generator.get_schema(request=None, public=True))  # type: ignore[no-untyped-call]  # drf-spectacular is untyped


@receiver(setting_changed)
def _forget(**kwargs: Any) -> None:
    """A test that changes a setting (URLs, SPECTACULAR_SETTINGS) gets a schema built anew."""
    public_schema.cache_clear()
