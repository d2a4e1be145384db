#!/usr/bin/env bash
# The whole test suite, as CI runs it:
#   1. ruff (lint + format check), mypy over every app, the benchmarks and the tests (strict,
#      with django-stubs and djangorestframework-stubs; see [tool.mypy] in pyproject.toml),
#      import-linter's contracts
#   2. unit + API tests on SQLite
#   3. browser tests (headless Debian Chromium + Playwright), in their own pytest process
#   4. the unit + API tests that use a database again, on a throwaway PostgreSQL cluster (and
#      Redis when present), plus the PostgreSQL-only tests
# The deep, slow tests marked "once" (the schema fuzz, the authorization matrix) run in leg 4
# only, on PostgreSQL; with no PostgreSQL on a laptop they run in leg 2 instead, never in neither.
# Leg 4 leaves out the tests that never use a database (--database-tests-only, tests/conftest.py):
# pytest-django refuses them one, so they ran the very same code in leg 2.
# Legs 2 and 4 spread their tests over TEST_WORKERS pytest-xdist processes (default: one per
# CPU; 0 runs them in the pytest process itself); the browser leg stays in one process, since
# its uvicorn subprocess shares one SQLite file with it. The browser leg runs in the background
# from the start, beside 1, 2 and 4, which run one after the other at nice 19 (PostgreSQL and
# Redis too) while it runs: the pages it drives are answered first.
# Suites whose tools are missing are skipped LOUDLY on a laptop; with CI=true or REQUIRE_ALL=1
# a missing tool fails the run instead, so CI can never skip a suite silently.
set -uo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh || exit 1
export DJANGO_SETTINGS_MODULE=config.test_settings
# Where PYTHONDONTWRITEBYTECODE is set (these machines set it), every Python process of the run
# (each pytest worker, a uvicorn server per browser test, the subprocess tests) compiled the
# project's modules again: about 6 s a pytest process. The run writes __pycache__ (git ignores it).
unset PYTHONDONTWRITEBYTECODE
PY=.venv/bin/python
STRICT=0
if [ "${CI:-}" = "true" ] || [ "${REQUIRE_ALL:-}" = "1" ]; then STRICT=1; fi
REPORTS="$(mktemp -d)"
FAILED=()
SKIPPED=()
CLEANUP=()
cleanup() { for cmd in "${CLEANUP[@]}"; do eval "$cmd" >/dev/null 2>&1 || true; done; rm -rf "$REPORTS"; }
trap cleanup EXIT

banner() { printf '\n===== %s =====\n' "$*"; }

missing() {  # missing <suite> <why>
  if [ "$STRICT" = 1 ]; then
    echo "!!! $1 cannot run: $2 (CI/REQUIRE_ALL set: this is a failure)"
    FAILED+=("$1 (not run: $2)")
  else
    echo "!!! SKIPPING $1: $2"
    SKIPPED+=("$1 ($2)")
  fi
}

judge() {  # judge <suite name> <pytest exit code>
  if [ "$2" -eq 5 ]; then
    echo "!!! $1 collected no tests, but it must have some: failing."
    FAILED+=("$1 (no tests collected)")
  elif [ "$2" -ne 0 ]; then
    FAILED+=("$1 (pytest exit $2)")
  fi
}

report() { echo "$REPORTS/$(echo "$1" | tr -c 'a-zA-Z0-9' _).xml"; }

run_pytest() {  # run_pytest <suite name> <pytest args...>: niced, in the foreground
  local name="$1"; shift
  banner "$name"
  nice -n "$NICE" "$PY" -m pytest --junitxml="$(report "$name")" "$@"
  judge "$name" $?
}

# The browser leg waits on pages more than it computes (about a third of a core): it runs in the
# background, at normal priority, while the lint and the two CPU-bound legs run beside it niced,
# so a page's answer is never kept waiting behind them. Its output is shown when it ends.
CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
BROWSER="browser (Chromium)"
BROWSER_PID=""
NICE=0
if [ -x "$CHROMIUM" ]; then
  NICE=19
  banner "$BROWSER: started in the background, its output follows the other legs"
  # Live pages are served by a uvicorn subprocess: it shares this SQLite file with pytest.
  OMG_TEST_DB="$REPORTS/browser.sqlite3" CHROMIUM="$CHROMIUM" DJANGO_ALLOW_ASYNC_UNSAFE=true \
    "$PY" -m pytest --junitxml="$(report "$BROWSER")" -m browser -q --screenshot only-on-failure \
    --output "${BROWSER_ARTIFACTS:-test-results}" tests/browser >"$REPORTS/browser.log" 2>&1 &
  BROWSER_PID=$!
  CLEANUP+=("kill $BROWSER_PID")
else
  missing "browser suite" "no Chromium at $CHROMIUM (apt-get install chromium)"
fi

banner "ruff"
.venv/bin/ruff check . || FAILED+=("ruff check")
.venv/bin/ruff format --check . || FAILED+=("ruff format")
banner "mypy (every app, bench, tests; django-stubs, DRF stubs)"
nice -n "$NICE" .venv/bin/mypy || FAILED+=("mypy")
banner "import-linter (layers, pure engine)"
nice -n "$NICE" .venv/bin/lint-imports || FAILED+=("lint-imports")

WORKERS=(-n "${TEST_WORKERS:-auto}")
PG_BIN="${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}"
if [ -n "$PG_BIN" ] && [ -x "$PG_BIN/initdb" ]; then
  ONCE=" and not once"  # run by the PostgreSQL leg
  # The schema fuzz builds its tests while it is collected (about 5 s a process): leave it out.
  NOT_ONCE=(--ignore=tests/security/test_schema_fuzz.py)
else
  ONCE=""
  NOT_ONCE=()
  echo "!!! no PostgreSQL: the tests marked once (schema fuzz, authorization matrix) run on SQLite"
fi
run_pytest "unit and API (SQLite)" "${WORKERS[@]}" -m "not browser and not postgres$ONCE" "${NOT_ONCE[@]}" -q tests

if [ -n "$PG_BIN" ] && [ -x "$PG_BIN/initdb" ]; then
  banner "starting a throwaway PostgreSQL"
  # The servers are niced too: their work is the PostgreSQL leg's.
  if PG_ENV="$(nice -n "$NICE" scripts/throwaway-services.sh postgres "$PG_BIN")"; then
    eval "$PG_ENV"
    CLEANUP+=("$PG_STOP")
    if command -v redis-server >/dev/null 2>&1; then
      REDIS_ENV="$(nice -n "$NICE" scripts/throwaway-services.sh redis)" && eval "$REDIS_ENV" && CLEANUP+=("$REDIS_STOP")
    else
      missing "Redis-backed tests" "no redis-server (apt-get install redis-server)"
    fi
    DATABASE_URL="$PG_URL" TEST_REDIS_URL="${REDIS_TEST_URL:-}" \
      run_pytest "unit and API (PostgreSQL)" "${WORKERS[@]}" -m "not browser" --database-tests-only -q tests
  else
    FAILED+=("PostgreSQL (the throwaway cluster did not start)")
  fi
else
  missing "PostgreSQL suite" "no PostgreSQL server binaries (apt-get install postgresql)"
fi

if [ -n "$BROWSER_PID" ]; then
  wait "$BROWSER_PID"
  rc=$?
  banner "$BROWSER"
  cat "$REPORTS/browser.log"
  judge "$BROWSER" $rc
fi

banner "summary"
"$PY" scripts/junit_summary.py "$REPORTS"/*.xml
for s in "${SKIPPED[@]}"; do echo "SKIPPED SUITE: $s"; done
if [ ${#FAILED[@]} -gt 0 ]; then
  for f in "${FAILED[@]}"; do echo "FAILED: $f"; done
  exit 1
fi
echo "All suites passed."
