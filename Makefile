# The two commands: `make demo` and `make test`. Both install what they need first.
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint test-in-stack chaos bench up down clean

$(STAMP): requirements.txt requirements-dev.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $(STAMP)

## The whole flow on a fresh local stack: signed webhooks in, attachments stored, a summary.
demo: $(STAMP)
	$(PY) -m devstack.demo

## Lint, then every test (pytest and pgTAP) on a fresh local stack that is stopped afterwards.
test: $(STAMP) lint
	$(PY) -m devstack run -- $(MAKE) --no-print-directory test-in-stack

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# Runs inside `devstack run`, which exports the stack's settings (PGHOST, SUPABASE_URL, ...).
test-in-stack:
	pg_prove --ext .sql -r supabase/tests
	$(VENV)/bin/pytest

## The long fault-injection run (500 e-mails); its figures go to docs/RELIABILITY.md.
chaos: $(STAMP)
	$(PY) -m devstack.chaos --emails 500 --write-docs

## Benchmarks on a fresh local stack (~12 minutes): printed, and written to docs/BENCHMARKS.md.
bench: $(STAMP)
	$(PY) -m devstack run -- $(PY) -m bench

## Start the local stack in the background (settings in .devstack/env), and stop it.
up: $(STAMP)
	$(PY) -m devstack up

down:
	$(PY) -m devstack down

clean: down
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
