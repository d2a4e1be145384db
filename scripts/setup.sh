#!/usr/bin/env bash
# Create .venv with a Python 3.12+ and install the project with its dev tools. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -x .venv/bin/python ] && .venv/bin/python -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)'; then
  :
else
  rm -rf .venv
  python="$(scripts/find-python.sh)"
  echo "Using $python ($("$python" --version))"
  "$python" -m venv .venv
fi

stamp=.venv/.installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e '.[dev]'
  touch "$stamp"
fi
