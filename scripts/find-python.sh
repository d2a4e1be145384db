#!/usr/bin/env bash
# Print the path of a Python 3.12+ interpreter, or explain on stderr and fail.
# Looks at $PYTHON, then python3.13/python3.12/python3 on PATH, then pyenv's versions.
set -euo pipefail

ok() {
  "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null
}

candidates=()
[ -n "${PYTHON:-}" ] && candidates+=("$PYTHON")
for name in python3.14 python3.13 python3.12 python3; do
  if command -v "$name" >/dev/null 2>&1; then candidates+=("$(command -v "$name")"); fi
done
pyenv_root="${PYENV_ROOT:-}"
if [ -z "$pyenv_root" ] && command -v pyenv >/dev/null 2>&1; then
  pyenv_root="$(pyenv root 2>/dev/null || true)"
fi
[ -z "$pyenv_root" ] && pyenv_root="$HOME/.pyenv"
for dir in $(ls -d "$pyenv_root"/versions/3.1[2-9]* 2>/dev/null | sort -rV); do
  for exe in "$dir"/bin/python3.1[2-9] "$dir"/bin/python3; do
    [ -x "$exe" ] && candidates+=("$exe")
  done
done

for exe in "${candidates[@]}"; do
  if ok "$exe"; then
    echo "$exe"
    exit 0
  fi
done

cat >&2 <<MSG
OMG Table needs Python 3.12 or newer (Django 6), and none was found.
Looked at: \$PYTHON, python3.14/3.13/3.12/python3 on PATH, and $pyenv_root/versions/3.12+.
Install one (for example 'pyenv install 3.12') or point PYTHON at it: PYTHON=/path/to/python3.12 make run
MSG
exit 1
