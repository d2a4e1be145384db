#!/usr/bin/env bash
# The whole test suite, as CI runs it:
#   - ruff (lint + format check), mypy over every app, the benchmarks and the tests (strict,
#     with django-stubs and djangorestframework-stubs; see [tool.mypy] in pyproject.toml),
#     import-linter's contracts
#   - unit + API tests on SQLite
#   - browser tests (headless Debian Chromium + Playwright), in their own pytest process
#   - on a throwaway PostgreSQL cluster (and Redis when present), the tests whose outcome can
#     depend on the database (--database-dependent-only, tests/conftest.py): the schema fuzz and
#     the authorization matrix, every test that commits, the PostgreSQL-only tests and the ones
#     marked both_databases. PG_EVERY_TEST=1 runs the whole unit + API suite there instead.
# The deep, slow tests marked "once" (the schema fuzz, the authorization matrix) run in the
# PostgreSQL leg only; with no PostgreSQL on a laptop they run on SQLite instead, never in neither.
# A test that rolls back sends PostgreSQL the same ORM calls it sent SQLite; the ones that
# reach statements nothing else sends there are marked both_databases (docs/testing.md).
#
# The legs run one after the other: browser, SQLite, PostgreSQL. Lint (mypy is one process on
# one core) runs beside the browser leg, at the lowest priority (nice 19), and its output is
# shown after it: Chromium keeps about 1.6 of the 2 cores busy (329 busy core-seconds in 200 s
# alone). Everything behind the browser leg at nice 19 was tried: the browser leg went from
# 213 s to 296 s and the whole run took 764 s and 785 s; with only lint beside it, the browser
# leg took 189 s and the whole run 760 s.
# The SQLite and PostgreSQL legs side by side (2 workers each) took 380 s against 383 s in
# turn: too little for twice the contention on timing-sensitive tests.
# The unit + API legs spread their tests over TEST_WORKERS pytest-xdist processes (default: one
# more than the CPUs; 0 runs them in the pytest process itself); the browser leg stays in one
# process, since its uvicorn subprocess shares one SQLite file with it.
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
FAILED="$REPORTS/failed.txt"    # one line per failed suite (lint runs in a subshell)
SKIPPED="$REPORTS/skipped.txt"
touch "$FAILED" "$SKIPPED"
CLEANUP=()
cleanup() { for cmd in "${CLEANUP[@]}"; do eval "$cmd" >/dev/null 2>&1 || true; done; rm -rf "$REPORTS"; }
trap cleanup EXIT

banner() { printf '\n===== %s =====\n' "$*"; }

missing() {  # missing <suite> <why>
  if [ "$STRICT" = 1 ]; then
    echo "!!! $1 cannot run: $2 (CI/REQUIRE_ALL set: this is a failure)"
    echo "$1 (not run: $2)" >>"$FAILED"
  else
    echo "!!! SKIPPING $1: $2"
    echo "$1 ($2)" >>"$SKIPPED"
  fi
}

run_pytest() {  # run_pytest <suite name> <pytest args...>
  local name="$1"; shift
  banner "$name"
  "$PY" -m pytest --junitxml="$REPORTS/$(echo "$name" | tr -c 'a-zA-Z0-9' _).xml" "$@"
  local rc=$?
  if [ $rc -eq 5 ]; then
    echo "!!! $name collected no tests, but it must have some: failing."
    echo "$name (no tests collected)" >>"$FAILED"
  elif [ $rc -ne 0 ]; then
    echo "$name (pytest exit $rc)" >>"$FAILED"
  fi
}

lint() {
  banner "ruff"
  .venv/bin/ruff check . || echo "ruff check" >>"$FAILED"
  .venv/bin/ruff format --check . || echo "ruff format" >>"$FAILED"
  banner "mypy (every app, bench, tests; django-stubs, DRF stubs)"
  .venv/bin/mypy || echo "mypy" >>"$FAILED"
  banner "import-linter (layers, pure engine)"
  .venv/bin/lint-imports || echo "lint-imports" >>"$FAILED"
}

# One worker more than the CPUs: a worker waiting on PostgreSQL, a subprocess or a server leaves
# its core to another (PostgreSQL leg on 2 cores: 408 s with 2 workers, 302 s with 3).
WORKERS=(-n "${TEST_WORKERS:-$(($(nproc) + 1))}")
PG_BIN="${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}"
PG_URL=""
if [ -n "$PG_BIN" ] && [ -x "$PG_BIN/initdb" ]; then
  banner "starting a throwaway PostgreSQL"
  if PG_ENV="$(scripts/throwaway-services.sh postgres "$PG_BIN")"; then
    eval "$PG_ENV"
    CLEANUP+=("$PG_STOP")
    if command -v redis-server >/dev/null 2>&1; then
      REDIS_ENV="$(scripts/throwaway-services.sh redis)" && eval "$REDIS_ENV" \
        && CLEANUP+=("$REDIS_STOP")
    else
      missing "Redis-backed tests" "no redis-server (apt-get install redis-server)"
    fi
  else
    echo "PostgreSQL (the throwaway cluster did not start)" >>"$FAILED"
  fi
else
  missing "PostgreSQL suite" "no PostgreSQL server binaries (apt-get install postgresql)"
fi
if [ -n "$PG_URL" ]; then
  ONCE=" and not once"  # run by the PostgreSQL leg
  # The schema fuzz builds its tests while it is collected (about 5 s a process): leave it out.
  NOT_ONCE=(--ignore=tests/security/test_schema_fuzz.py)
else
  ONCE=""
  NOT_ONCE=()
  echo "!!! no PostgreSQL: the tests marked once (schema fuzz, authorization matrix) run on SQLite"
fi

LINT_LOG="$REPORTS/lint.log"
( renice -n 19 -p "$BASHPID" >/dev/null; lint ) >"$LINT_LOG" 2>&1 &
LINT=$!
CLEANUP+=("kill $LINT")

CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
if [ -x "$CHROMIUM" ]; then
  # Live pages are served by a uvicorn subprocess: it shares this SQLite file with pytest.
  OMG_TEST_DB="$REPORTS/browser.sqlite3" CHROMIUM="$CHROMIUM" DJANGO_ALLOW_ASYNC_UNSAFE=true \
    run_pytest "browser (Chromium)" -m browser -q --screenshot only-on-failure --output "${BROWSER_ARTIFACTS:-test-results}" tests/browser
else
  missing "browser suite" "no Chromium at $CHROMIUM (apt-get install chromium)"
fi

wait "$LINT"
cat "$LINT_LOG"

run_pytest "unit and API (SQLite)" "${WORKERS[@]}" -m "not browser and not postgres$ONCE" \
  "${NOT_ONCE[@]}" -q tests

PG_SELECT=(--database-dependent-only)
if [ "${PG_EVERY_TEST:-}" = 1 ]; then PG_SELECT=(); fi
if [ -n "$PG_URL" ]; then
  DATABASE_URL="$PG_URL" TEST_REDIS_URL="${REDIS_TEST_URL:-}" \
    run_pytest "unit and API (PostgreSQL)" "${WORKERS[@]}" -m "not browser" \
      "${PG_SELECT[@]}" -q tests
fi

banner "summary"
"$PY" scripts/junit_summary.py "$REPORTS"/*.xml
sed 's/^/SKIPPED SUITE: /' "$SKIPPED"
if [ -s "$FAILED" ]; then
  sed 's/^/FAILED: /' "$FAILED"
  exit 1
fi
echo "All suites passed."
