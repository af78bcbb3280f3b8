# The two commands: `make demo` and `make test`. Both install what they need first.
VENV := .venv
PY := $(VENV)/bin/python
# Vercel deploys on the version in .python-version (3.12): the tests run on the same one.
PYTHON_VERSION := $(shell cat .python-version)
PYTHON := $(shell command -v python$(PYTHON_VERSION) || pyenv which python$(PYTHON_VERSION) 2>/dev/null)
STAMP := $(VENV)/.installed
# The real Vercel and Supabase CLIs, and TypeScript, pinned in devstack/package-lock.json.
NODE_STAMP := devstack/node_modules/.installed
# Debian's chromium and a Japanese font, for the browser test and the demo's screenshot
# (devstack/browser.py installs them with apt when missing).
CHROMIUM := /usr/bin/chromium /usr/share/fonts/opentype/ipafont-gothic/ipag.ttf
SUPABASE := devstack/node_modules/.bin/supabase
TSC := devstack/node_modules/.bin/tsc
# The CLI runs on every machine and in CI: it sends no usage data.
export SUPABASE_TELEMETRY_DISABLED := 1
# pytest's workers (pytest-xdist). The shared stack's tests run one after another on one of them and
# the rest beside them (tests/support/lanes.py): two is what the two cores of a developer's machine
# and CI's keep busy. PYTEST_WORKERS=0 runs everything in one process.
PYTEST_WORKERS ?= 2
PYTEST_PARALLEL := -n $(PYTEST_WORKERS) --dist loadgroup

.PHONY: demo test test-fast lint schema explanations screenshots vendor test-on-stack test-in-stack chaos bench up faxes down clean cli

$(STAMP): requirements.txt requirements-cli.txt requirements-dev.txt .python-version
	@test -n "$(PYTHON)" || { echo "Python $(PYTHON_VERSION) not found (pyenv install $(PYTHON_VERSION))"; exit 1; }
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $(STAMP)

$(NODE_STAMP): devstack/package.json devstack/package-lock.json
	npm ci --prefix devstack --no-audit --no-fund --loglevel=error
	touch $(NODE_STAMP)

$(CHROMIUM): | $(STAMP)
	$(PY) -m devstack.browser install

## The whole flow on a fresh local stack: signed webhooks in, attachments stored, a summary.
demo: $(STAMP) $(NODE_STAMP) $(CHROMIUM)
	$(PY) -m devstack.tools.demo

## Lint, and every test (pytest and pgTAP) on a fresh local stack that is stopped afterwards: lint
## runs while the stack starts, and pytest on PYTEST_WORKERS workers (docs/LOCAL_STACK.md says which
## tests run side by side).
test: $(STAMP) $(NODE_STAMP) $(CHROMIUM)
	@$(MAKE) --no-print-directory lint & linting=$$!; \
	$(MAKE) --no-print-directory test-on-stack; tested=$$?; \
	wait $$linting || { echo "make test: lint failed (its output is above)"; exit 1; }; \
	exit $$tested

test-on-stack: $(STAMP) $(NODE_STAMP)
	$(PY) -m devstack run -- $(MAKE) --no-print-directory test-in-stack

## The fast suite while developing: pytest without the tests marked slow (chaos, bench, demo,
## the real pg_cron tick, whole-stack lifecycles; see pytest.ini), on a fresh local stack.
## `make test` still runs everything.
test-fast: $(STAMP) $(NODE_STAMP)
	$(PY) -m devstack run -- $(VENV)/bin/pytest $(PYTEST_PARALLEL) -m "not slow" -q

## ruff, and mypy (strict) over what is deployed: lib/ and api/ (settings in mypy.ini); tsc
## (strict, from JSDoc) over the admin screen's scripts, public/admin/*.js (devstack/tsconfig.admin.json).
lint: $(STAMP) $(NODE_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(TSC) -p devstack/tsconfig.admin.json

## supabase/schema.sql, the current schema, from a new database the migrations built (after any
## new migration; tests/tooling/test_schema_file.py fails while it is stale).
schema: $(STAMP) $(NODE_STAMP)
	$(PY) -m devstack.tools.schema

## public/admin/explanations.js, what every code on the screen means and what to do (English and
## Japanese), from lib/failures.py and lib/explanations.py (tests/unit/test_explanations.py fails
## while it is stale).
explanations: $(STAMP)
	$(PY) -m lib.explanations

## The admin screen's pictures in docs/images/ (Japanese and English, desktop and phone), from the
## real page on a fresh local stack with sample e-mails, a failed job and an open outage.
screenshots: $(STAMP) $(NODE_STAMP) $(CHROMIUM)
	$(PY) -m devstack.tools.screenshots

## public/admin/vendor/, the browser builds the admin screen loads (Supabase's client, PDF.js), copied
## from the package pinned in devstack/package-lock.json (after changing that pin; Vercel runs no build
## step, so the copy is committed, and tests/tooling/test_vendored_files.py fails while it differs).
vendor: $(STAMP) $(NODE_STAMP)
	$(PY) -m devstack.tools.vendor

# Runs inside `devstack run`, which exports the stack's settings (PGHOST, SUPABASE_URL, ...).
# devstack applied the migrations with `supabase db push`; the CLI lists them as applied, and its
# linter (plpgsql_check) fails the run on any warning.
test-in-stack:
	$(SUPABASE) migration list --db-url "$$SUPABASE_DB_URL"
	$(SUPABASE) db lint --db-url "$$SUPABASE_DB_URL" --level warning --fail-on warning
	pg_prove --ext .sql -r supabase/tests
	$(VENV)/bin/pytest $(PYTEST_PARALLEL)

## The long fault-injection run (500 e-mails); its figures go to docs/RELIABILITY.md.
chaos: $(STAMP) $(NODE_STAMP)
	$(PY) -m chaos --emails 500 --write-docs

## Benchmarks on a fresh local stack (tens of minutes: docs/BENCHMARKS.md says how long its run took),
## printed, and written to docs/BENCHMARKS.md.
bench: $(STAMP) $(NODE_STAMP)
	$(PY) -m devstack run -- $(PY) -m bench

## Start the local stack in the background (settings in .devstack/env, logs in its folder's
## *.log), with the Vault secrets stored so that it processes faxes; and stop it.
up: $(STAMP) $(NODE_STAMP)
	$(PY) -m devstack up

## Send sample faxes to the stack of `make up`: make faxes [COUNT=3] [FAULT=not_found|unavailable|unauthorized]
## [FILE=fax.tif] (a real file) or [SAMPLE=efax|invoice] (a G4 TIFF from an eFax-style service, a PDF
## invoice), [FROM='...'] [SUBJECT='...']
COUNT ?= 1
faxes: $(STAMP)
	$(PY) -m devstack.tools.send_faxes --count $(COUNT) $(if $(FAULT),--fault $(FAULT)) \
		$(if $(FILE),--file '$(FILE)') $(if $(SAMPLE),--sample $(SAMPLE)) \
		$(if $(FROM),--from '$(FROM)') $(if $(SUBJECT),--subject '$(SUBJECT)')

down:
	$(PY) -m devstack down

## The admin CLI alone, on an operator's machine (no PostgreSQL, Chromium or root): a virtualenv of
## its own (CLI_VENV) with requirements-cli.txt, and the launcher document-jobs-admin in BINDIR,
## which runs it from any folder. CLI_PIP_OPTIONS go to pip (e.g. --no-index --find-links DIR).
CLI_VENV ?= .venv-cli
BINDIR ?= $(HOME)/.local/bin
cli:
	@test -n "$(PYTHON)" || { echo "Python $(PYTHON_VERSION) not found (pyenv install $(PYTHON_VERSION))"; exit 1; }
	$(PYTHON) -m venv $(CLI_VENV)
	$(CLI_VENV)/bin/pip install --quiet --disable-pip-version-check $(CLI_PIP_OPTIONS) -r requirements-cli.txt
	$(CLI_VENV)/bin/python -m lib.admin.install --bin $(BINDIR)

clean: down
	rm -rf $(VENV) .venv-cli .pytest_cache .ruff_cache .mypy_cache .hypothesis .vercel devstack/node_modules
