.PHONY: run test setup lint bench

# Install everything, load the demo data and serve on http://127.0.0.1:8000
run:
	scripts/run.sh

# The whole suite: lint, types, unit + API, browser, PostgreSQL (see scripts/test.sh)
test:
	scripts/test.sh

setup:
	scripts/setup.sh

# ruff, mypy over every app (pyproject.toml [tool.mypy]: files, plugins, strictness), import-linter
lint:
	.venv/bin/ruff check . && .venv/bin/ruff format --check . && .venv/bin/mypy && .venv/bin/lint-imports

bench:
	.venv/bin/python -m bench
