"""Test settings: the real settings, only made faster."""

from __future__ import annotations

import os
from typing import cast

from config import settings as _base
from config.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.InMemoryStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
LOGGING = {"version": 1, "disable_existing_loggers": False}
# Webhook deliveries run at once, in the test's thread; tests/integrations switch to the
# database queue where the worker itself is under test. Receivers listen on 127.0.0.1.
TASKS = {"default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend"}}
WEBHOOKS_ALLOW_PRIVATE = True
# Many tests sign up, mail confirmation links and join campaigns from one address, in one
# process's cache: these limits are lifted here, and the tests of the limits set them low
# (tests/sheets/test_account_limits.py).
_rates = cast("dict[str, str | None]", _base.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"])
REST_FRAMEWORK = {
    **_base.REST_FRAMEWORK,
    "DEFAULT_THROTTLE_RATES": {**_rates, "signup": None, "confirm_mail": None, "join": None},
}
# The display test waits for an idle TV to pick up the next fight by itself.
DISPLAY_IDLE_SECONDS = 1

# Browser tests that need an ASGI server run it in a subprocess (tests/browser/conftest.py):
# both processes then share an SQLite file instead of the usual in-memory test database.
if os.environ.get("OMG_TEST_DB") and DATABASES["default"]["ENGINE"].endswith("sqlite3"):  # noqa: F405
    DATABASES["default"]["TEST"] = {"NAME": os.environ["OMG_TEST_DB"]}  # noqa: F405
