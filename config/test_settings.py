"""Test settings: the real settings, only made faster."""

from __future__ import annotations

import os

from config.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.InMemoryStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
LOGGING = {"version": 1, "disable_existing_loggers": False}

# Browser tests that need an ASGI server run it in a subprocess (tests/browser/conftest.py):
# both processes then share an SQLite file instead of the usual in-memory test database.
if os.environ.get("OMG_TEST_DB") and DATABASES["default"]["ENGINE"].endswith("sqlite3"):  # noqa: F405
    DATABASES["default"]["TEST"] = {"NAME": os.environ["OMG_TEST_DB"]}  # noqa: F405
