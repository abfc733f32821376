# memadmin: build, run and test. GNU make; every target works from a fresh clone.
#
#   make run      dashboard with demo data at http://127.0.0.1:8000 (embedded PostgreSQL)
#   make test     ruff, mypy, then the whole pytest suite (browser tests drive /usr/bin/chromium)
#
# Variables: RUN_ADDR (default 127.0.0.1:8000), PYTEST_ARGS (extra pytest arguments),
# PYTEST_WORKERS (parallel pytest processes for make test, default 3; 1 runs serially),
# PYTHON (the interpreter to build .venv with; found by .ci/find-python when unset).

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:

VENV := .venv
PY := $(VENV)/bin/python
# The stamp carries pyproject.toml's hash, so editing the dependencies reinstalls and nothing
# else does (a checkout that only touches the file's mtime keeps the venv).
PYPROJECT_HASH := $(shell sha256sum pyproject.toml | cut -c1-16)
STAMP := $(VENV)/.installed-$(PYPROJECT_HASH)

RUN_ADDR ?= 127.0.0.1:8000
PYTEST_ARGS ?=
# pytest-xdist workers. Files are dealt out whole (--dist loadfile): a module's fixtures and
# servers are set up once, in one worker. Each worker has its own test database and var dir
# (tests/isolation.py, tests/README.md). "auto" means one per core, at most 4. Three by default
# on the 2-core machines here: the deadline tests hold locks and sleep (about 130 s of one
# worker's time), browser tests wait on Chromium, so a third worker fills a core they leave
# idle (pytest 828 -> 777 s at 7e18025).
PYTEST_WORKERS ?= 3
ifeq ($(PYTEST_WORKERS),auto)
override PYTEST_WORKERS := $(shell n=$$(nproc); echo $$(( n < 4 ? n : 4 )))
endif
ifeq ($(filter-out 0 1,$(PYTEST_WORKERS)),)
PYTEST_PARALLEL :=
else
PYTEST_PARALLEL := -n $(PYTEST_WORKERS) --dist loadfile
endif

# This machine's pip config lists local mirrors that may be missing; pip then warns on every
# call. The warning says nothing about memadmin, so it is dropped (errors still show).
PIP_NOISE := WARNING: Location .* is ignored
export PIP_DISABLE_PIP_VERSION_CHECK := 1
# Browsers come from the system (/usr/bin/chromium), never from Playwright's download.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD := 1

.PHONY: help venv chromium run test lint bench stop-db clean hostile-full test-restricted

help:
	@echo "make run       migrate, seed demo data, run web + worker + scheduler (Ctrl-C stops all)"
	@echo "make test      ruff, mypy, then the whole test suite (PYTEST_ARGS=... to pass arguments;"
	@echo "               PYTEST_WORKERS=3 parallel processes by default, =1 serial, =auto one per core)"
	@echo "make lint      ruff check ."
	@echo "make hostile-full  the hostile-input suite over its whole cross product (minutes)"
	@echo "make test-restricted  the audit and gdpr tests as the least-privilege app role"
	@echo "make bench     run every benchmark, write docs/benchmarks.md"
	@echo "make stop-db   stop the embedded PostgreSQL (var/pgdata)"
	@echo "make clean     stop the embedded PostgreSQL, remove .venv and caches (keeps var/)"

venv: $(STAMP)

# No prerequisites on purpose: the hash in the name decides, not timestamps.
$(STAMP):
	@if ! $(PY) -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then \
	    python="$$(.ci/find-python)"; \
	    echo "Creating $(VENV) with $$python"; \
	    rm -rf $(VENV); \
	    "$$python" -m venv $(VENV); \
	fi
	@echo "Installing memadmin with its dev extras into $(VENV) (first run, or pyproject.toml changed)"
	@$(PY) -m pip install --quiet --progress-bar off -e '.[dev]' 2>&1 \
	    | { grep -v -E '$(PIP_NOISE)' || true; }
	@rm -f $(VENV)/.installed-*
	@touch $@

chromium:
	@.ci/ensure-chromium

run: venv
	@export DEBUG="$${DEBUG-true}"; \
	export MEMADMIN_OUTBOUND_ALLOW="$${MEMADMIN_OUTBOUND_ALLOW-127.0.0.1}"; \
	$(PY) manage.py migrate --noinput; \
	RUN_ADDR=$(RUN_ADDR) $(PY) manage.py seed_demo; \
	$(PY) manage.py seed_demo_stores; \
	RUN_ADDR=$(RUN_ADDR) $(PY) manage.py seed_demo_health; \
	exec $(PY) -m memadmin.lib.supervisor --addr $(RUN_ADDR)

# mypy checks the code and the tests (pyproject: bodies of untyped test functions included).
# After the whole suite, the audit and gdpr tests again as the least-privilege app role
# (test-restricted below); skipped when PYTEST_ARGS picks tests.
test: venv chromium
	$(VENV)/bin/ruff check .
	DEBUG=true $(VENV)/bin/mypy memadmin tests
	@status=0; \
	DEBUG=true $(PY) -m pytest -ra $(PYTEST_PARALLEL) $(PYTEST_ARGS) || status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no tests: that counts as a failure here" >&2; fi; \
	if [ $$status -eq 0 ] && [ -z "$(PYTEST_ARGS)" ]; then \
	    DEBUG=true $(PY) -m pytest -p tests.restricted_role -q $(PYTEST_PARALLEL) \
	        tests/audit tests/gdpr || status=$$?; \
	fi; \
	exit $$status

lint: venv
	$(VENV)/bin/ruff check .

# `make test` sends each form field one hostile value per category; this sends them all.
hostile-full: venv
	MEMADMIN_HOSTILE_FULL=1 DEBUG=true $(PY) -m pytest -ra $(PYTEST_ARGS) \
	    tests/security/test_hostile_input.py

# The audit and gdpr tests with the app connected as the role `manage.py audit_db_grants`
# describes (it may only INSERT and SELECT the audit tables): tests/restricted_role.py.
test-restricted: venv
	DEBUG=true $(PY) -m pytest -p tests.restricted_role -ra $(PYTEST_PARALLEL) $(PYTEST_ARGS) \
	    tests/audit tests/gdpr

# Every benchmark, then docs/benchmarks.md (DATABASE_URL, or the embedded PostgreSQL).
bench: venv
	DEBUG=$${DEBUG:-true} $(PY) benchmarks/run_all.py $(BENCH_ARGS)

stop-db:
	@if [ -x $(PY) ]; then \
	    $(PY) -W ignore -c 'import sys; from pathlib import Path; from memadmin.lib.embedded_db import stop_embedded; stop_embedded(Path(sys.argv[1]))' \
	        "$${MEMADMIN_VAR_DIR:-var}/pgdata"; \
	fi

# The embedded server's binaries live in .venv, so it is stopped before .venv goes.
# var/ (the embedded database, exports) is data, not build output: remove it by hand.
clean: stop-db
	rm -rf $(VENV) build *.egg-info test-results .ruff_cache .mypy_cache .pytest_cache
	find . -path ./var -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +
