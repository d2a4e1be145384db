"""OMG Table settings: one file, configured from the environment.

With no environment at all this is a developer's laptop: DEBUG on, SQLite in the project folder,
an in-memory channel layer. A deployment sets at least ``DEBUG=0``, ``SECRET_KEY``,
``ALLOWED_HOSTS``, ``DATABASE_URL`` (PostgreSQL) and ``REDIS_URL``; see docs/deploy.md.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

from config import logging as log_config

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    if value.lower() in {"1", "true", "yes", "on"}:
        return True
    if value.lower() in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false), not {value!r}")


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def env_networks(name: str) -> list[str]:
    """A list of IP addresses or networks (``10.0.0.0/8``); a typo stops the start."""
    items = env_list(name)
    for item in items:
        try:
            ipaddress.ip_network(item, strict=False)
        except ValueError as exc:
            raise ImproperlyConfigured(f"{name}: {item!r} is not an IP address or network") from exc
    return items


DEBUG = env_bool("DEBUG", True)

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
    # Good enough for a laptop; never used with DEBUG off (see above).
    SECRET_KEY = "django-insecure-local-development-only-omg-table-key"  # noqa: S105

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]" if DEBUG else "")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    # daphne first so that `runserver` serves ASGI (and so websockets / SSE) too.
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_tasks_db",
    "sheets",
    "rules",
    "combat",
    "checks",
    "prep",
    "integrations",
]

MIDDLEWARE = [
    # First: its one line per request times the whole stack and logs the status sent.
    "config.request_log.RequestLogMiddleware",
    # 503 instead of 500 when no database connection is free; streams give theirs back.
    "config.db_pool.ConnectionPoolMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Inside the security headers' middleware, so its JSON 404s carry them too.
    "config.api_errors.JsonNotFoundMiddleware",
    # After authentication (they need request.user); see docs/security.md.
    "config.throttling.LoginThrottleMiddleware",
    "config.throttling.PasswordResetThrottleMiddleware",
    "config.idempotency.IdempotencyMiddleware",
]

ROOT_URLCONF = "config.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.csp",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

# No persistent connections: under ASGI (the only way OMG Table is served) each request runs
# its database work on a thread of its own, so a connection kept for the next request is never
# reused: it only lingers until garbage collection (measured: 300 requests opened 300
# connections with CONN_MAX_AGE=60 too, and left a dozen idle). On PostgreSQL a pool (below)
# hands connections from one request to the next instead. CONN_HEALTH_CHECKS checks a pooled
# connection before handing it out (and a kept one, when CONN_MAX_AGE is set without a pool).
DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=int(os.environ.get("CONN_MAX_AGE", "0")),
        conn_health_checks=env_bool("CONN_HEALTH_CHECKS", True),
    )
}
# Behind PgBouncer in transaction pooling mode: a server-side cursor (QuerySet.iterator()) may
# outlive its transaction, and the next one may be on another server connection.
DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = env_bool("DISABLE_SERVER_SIDE_CURSORS", False)

# PostgreSQL: each process takes its connections from a pool (psycopg's, through Django) of at
# most DB_POOL_MAX. A burst of requests then waits for a free connection, up to DB_POOL_TIMEOUT
# seconds and then a 503 with Retry-After (config/db_pool.py), instead of opening one each until
# PostgreSQL refuses them all ("too many clients": 500s). Size it against max_connections:
# docs/deploy.md. DB_POOL_MAX=0 turns the pool off (a connection per request).
DB_POOL_MAX = int(os.environ.get("DB_POOL_MAX", "20"))
if DATABASES["default"]["ENGINE"].endswith("postgresql") and DB_POOL_MAX > 0:
    if DATABASES["default"]["CONN_MAX_AGE"] != 0:
        raise ImproperlyConfigured(
            "CONN_MAX_AGE must be 0 with the connection pool (DB_POOL_MAX=0 turns the pool off)."
        )
    DB_POOL_MIN = int(os.environ.get("DB_POOL_MIN", str(min(2, DB_POOL_MAX))))
    if not 0 <= DB_POOL_MIN <= DB_POOL_MAX:
        raise ImproperlyConfigured(f"DB_POOL_MIN must be 0 to DB_POOL_MAX ({DB_POOL_MAX}).")
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": DB_POOL_MIN,
        "max_size": DB_POOL_MAX,
        "timeout": float(os.environ.get("DB_POOL_TIMEOUT", "5")),
    }

if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # The laptop default serves requests in several threads at once: each write transaction
    # takes SQLite's write lock up front and waits for it (instead of failing with "database
    # is locked" when a read turns into a write), and WAL lets readers go on meanwhile.
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        **DATABASES["default"].get("OPTIONS", {}),
    }

REDIS_URL = os.environ.get("REDIS_URL", "")
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                "hosts": [
                    {
                        "address": REDIS_URL,
                        # channels-redis blocks 5 s per read (BZPOPMIN); redis-py 8 also times a
                        # socket read out after 5 s by default, so give the socket room above
                        # the block. A Redis that does not answer at all fails in 2 s instead.
                        "socket_timeout": 30,
                        "socket_connect_timeout": 2,
                        # Per worker; redis-py fails a call beyond it (MaxConnectionsError)
                        # rather than wait. The live feed uses a handful (docs/deploy.md).
                        "max_connections": int(
                            os.environ.get("CHANNEL_LAYER_MAX_CONNECTIONS", "100")
                        ),
                    }
                ],
                # Messages waiting on one channel (a worker's broadcaster) before the next
                # ones are dropped; the feed re-reads the log, so a drop only delays.
                "capacity": int(os.environ.get("CHANNEL_LAYER_CAPACITY", "100")),
                # A group forgets a member not added again within this many seconds. The live
                # feed's broadcasters join their groups again every heartbeat (15 s), so a
                # member left behind by a worker that died, or could not leave while Redis
                # failed, goes within two minutes instead of a day (channels-redis's default),
                # and stops filling up with messages nobody reads.
                "group_expiry": 120,
            },
        }
    }
else:
    # One process only: fine for a laptop and for tests, not for several ASGI workers.
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# The cache holds throttle counters and who is watching an encounter: shared through Redis
# when several processes serve, local memory otherwise.
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            # A Redis that hangs must not hang requests: throttles and presence fail open
            # (config/throttling.py) once these run out.
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# Fight forecasts are cached by the numbers they read (prep/forecast.py): an hour each, and an
# answer larger than this many bytes of JSON is not kept (a normal one is a few KB).
FORECAST_CACHE_SECONDS = max(1, int(os.environ.get("FORECAST_CACHE_SECONDS", "3600")))
FORECAST_CACHE_MAX_BYTES = max(0, int(os.environ.get("FORECAST_CACHE_MAX_BYTES", "32768")))

# Background tasks (webhook deliveries): Django's tasks framework with a queue in the database,
# run by `manage.py db_worker` (scripts/run.sh starts one beside the server; docs/deploy.md).
TASKS = {
    "default": {
        "BACKEND": "django_tasks_db.DatabaseBackend",
        "QUEUES": ["default"],
    }
}

# Webhooks may go to loopback, private and link-local addresses only on a laptop (and in the
# tests): in production such a URL is refused, when saved and again at each delivery.
WEBHOOKS_ALLOW_PRIVATE = env_bool("WEBHOOKS_ALLOW_PRIVATE", DEBUG)
# One delivery attempt, from connecting to the end of the answer, ends after this many
# seconds, however slowly the receiver trickles its bytes (the worker is not held longer).
WEBHOOKS_DELIVERY_TIMEOUT = float(os.environ.get("WEBHOOKS_DELIVERY_TIMEOUT", "10"))
# A table display between fights looks for the next one this often (a page reload; at least
# once a second, well within the display's request rate).
DISPLAY_IDLE_SECONDS = max(1, int(os.environ.get("DISPLAY_IDLE_SECONDS", "5")))

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Outgoing mail: password resets and address confirmations. On a laptop (DEBUG on) without
# EMAIL_HOST the mail is printed on the console (`make run`); a deployment sends through SMTP:
# EMAIL_HOST, or else the machine's own mail server on localhost:25. STARTTLS unless the host
# is the local one or told otherwise (docs/deploy.md). Mail is sent by the task worker, so a
# reset page never waits on the mail server.
_email_host = os.environ.get("EMAIL_HOST", "" if DEBUG else "localhost")
if _email_host:
    _email_ssl = env_bool("EMAIL_USE_SSL", False)
    _email_tls = env_bool(
        "EMAIL_USE_TLS", not _email_ssl and _email_host not in ("localhost", "127.0.0.1", "::1")
    )
    MAILERS = {
        "default": {
            "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
            "OPTIONS": {
                "host": _email_host,
                "port": int(
                    os.environ.get(
                        "EMAIL_PORT", "465" if _email_ssl else "587" if _email_tls else "25"
                    )
                ),
                "username": os.environ.get("EMAIL_HOST_USER", ""),
                "password": os.environ.get("EMAIL_HOST_PASSWORD", ""),
                "use_ssl": _email_ssl,
                "use_tls": _email_tls,
                "timeout": int(os.environ.get("EMAIL_TIMEOUT", "10")),
            },
        }
    }
else:
    MAILERS = {"default": {"BACKEND": "django.core.mail.backends.console.EmailBackend"}}
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "OMG Table <noreply@localhost>")
# A password reset link works once (the password it resets changes) and for this long.
PASSWORD_RESET_TIMEOUT = int(os.environ.get("PASSWORD_RESET_TIMEOUT", str(60 * 60)))

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "sheets:dashboard"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "sheets.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["config.parsers.JSONParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "config.pagination.LimitOffsetPagination",
    # The services' refusals (sheets.refusals) answered once for every view.
    "EXCEPTION_HANDLER": "config.api_errors.exception_handler",
    "PAGE_SIZE": 50,
    "DEFAULT_THROTTLE_RATES": {
        "rules_anon": os.environ.get("THROTTLE_RULES_ANON", "120/min"),
        "rules_user": os.environ.get("THROTTLE_RULES_USER", "600/min"),
        "login": os.environ.get("THROTTLE_LOGIN", "10/min"),
        # New API tokens per user through the API (sheets/api/tokens.py).
        "token_create": os.environ.get("THROTTLE_TOKEN_CREATE", "20/hour"),
        # Requests for a reset mail, per address asked for and per client (config/throttling.py).
        "password_reset": os.environ.get("THROTTLE_PASSWORD_RESET", "5/hour"),
        # Sign-up attempts per client; confirmation mails per client and per address mailed;
        # join-code attempts (page and API) per client and per user (sheets/limits.py).
        "signup": os.environ.get("THROTTLE_SIGNUP", "20/hour"),
        "confirm_mail": os.environ.get("THROTTLE_CONFIRM_MAIL", "5/hour"),
        "join": os.environ.get("THROTTLE_JOIN", "10/min"),
        # Fight forecasts per user, the four routes together (prep/throttles.py).
        "forecast": os.environ.get("THROTTLE_FORECAST", "20/min"),
    },
    # DRF's own reading of X-Forwarded-For is off (0: REMOTE_ADDR); the project's throttles
    # find the client through TRUSTED_PROXIES (config/throttling.py, client_ident).
    "NUM_PROXIES": 0,
}

# Proxies (addresses or networks, comma-separated) whose X-Forwarded-For is believed: only a
# request whose REMOTE_ADDR is one of them is counted, in every rate limit, by the rightmost
# address of that header that is not one of them. None by default: the client is REMOTE_ADDR
# (behind nginx, uvicorn's --proxy-headers already puts the client there: docs/deploy.md).
TRUSTED_PROXIES = env_networks("TRUSTED_PROXIES")

SPECTACULAR_SETTINGS = {
    "TITLE": "OMG Table API",
    "DESCRIPTION": (
        "Campaigns, character sheets, encounters and the dice engines of OMG Table. "
        "Authenticate with a session (the web pages) or with an API token: "
        "`Authorization: Bearer <key>` (or `Token <key>`), created on the API tokens page "
        "or with `POST /api/tokens/`."
    ),
    "VERSION": "1.0.0",
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "config.openapi.document_common_responses",
        "config.openapi.add_components",
        "config.openapi.blank_strings_as_any_of",
        "config.openapi.openapi_31_details",
        "config.openapi.close_request_bodies",
    ],
    "ENUM_NAME_OVERRIDES": {
        "AptitudeEnum": "rules.engine.omg_data.APTITUDE_CHOICES",
        "ArchetypeEnum": "rules.engine.omg_data.ARCHETYPE_CHOICES",
        "DeclareActionEnum": "combat.api.serializers.ATTACK_ACTIONS",
        "CheckKindEnum": ["aptitude", "discipline", "composite", "save"],
        "FateActionEnum": ["reroll", "revoke"],
        "WeaponCategoryEnum": "rules.engine.omg_data.WEAPON_CATEGORY_CHOICES",
    },
    # Each event type's signed body (integrations/openapi.py, docs/integrations.md).
    "WEBHOOKS": [
        f"integrations.openapi.{name}"
        for name in (
            "ROLL_RESOLVED",
            "DAMAGE_APPLIED",
            "PARTICIPANT_DOWN",
            "TURN_PASSED",
            "ENCOUNTER_STARTED",
            "ENCOUNTER_FINISHED",
            "CHARACTER_CREATED",
            "CHARACTER_CHANGED",
            "CHARACTER_RESTED",
            "CHECK_RESOLVED",
        )
    ],
}

# Content-Security-Policy: nothing inline, nothing from another origin. htmx is configured
# (templates/base.html) not to inject its indicator <style> and not to eval.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "font-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}

if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", str(60 * 60 * 24 * 365)))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True

# JSON lines with DEBUG=0, text with DEBUG=1 (LOG_FORMAT=json|text chooses), from LOG_LEVEL
# up, to stderr; each request logs one line (config.request_log). See config/logging.py.
LOGGING_CONFIG = "config.logging.configure"
LOGGING = log_config.from_environment(debug=DEBUG)
