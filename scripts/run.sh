#!/usr/bin/env bash
# Set up, migrate, load the demo table and serve OMG Table on http://127.0.0.1:8000 (ASGI).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export DJANGO_SETTINGS_MODULE=config.settings
.venv/bin/python manage.py migrate --noinput
.venv/bin/python manage.py demo
echo
echo "OMG Table: http://127.0.0.1:${PORT:-8000}/  (log in with one of the demo accounts above)"
echo
# The task worker (webhook deliveries, from the database queue) runs beside the server and
# stops with it.
.venv/bin/python manage.py db_worker &
worker=$!
trap 'kill "$worker" 2>/dev/null || true' EXIT
# daphne is first in INSTALLED_APPS, so runserver serves ASGI (websockets included).
.venv/bin/python manage.py runserver "127.0.0.1:${PORT:-8000}"
