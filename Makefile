# Two entry points for a fresh clone: `make run` and `make test`. Nothing needs exporting first.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
METRICS_DIR ?= $(CURDIR)/.prometheus-multiproc
# Without REDIS_URL, make run's processes share their login, token and request budgets in files here (CACHE_DIR).
RUN_CACHE_DIR ?= $(CURDIR)/var/cache

define WAIT_FOR_SERVER
import sys, time, urllib.request
try:
    for _ in range(300):
        try:
            urllib.request.urlopen(sys.argv[1], timeout=1)
            break
        except OSError:
            time.sleep(0.1)
except KeyboardInterrupt:
    sys.exit(130)
endef
export WAIT_FOR_SERVER

# Local defaults; the environment overrides them (see README "Configuration").
export DEBUG ?= 1
export PUBLIC_BASE_URL ?= http://127.0.0.1:$(PORT)

.PHONY: run test test-fast lint check-imports format check-migrations clean chromium screenshots

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e ".[test]"
	touch $@ $(VENV)/.installed

# gunicorn (gunicorn.conf.py, the production configuration too: WORKERS, THREADS from the environment) and one
# background worker (reprocessing, webhooks, e-mail) share a fresh Prometheus multiprocess directory. The demo data is
# written before they start (SQLite takes one writer at a time), and the tasks it queued (the demo clearance's
# e-mail, written by the console backend to var/make-run-tasks.log rather than the terminal) are run then too, so
# that the logins' box is what the terminal shows once the server answers, above the request log. gunicorn logs
# warnings and errors only here (its start-up lines, "Listening at", "Booting worker", came above the box; the box says
# where it listens), and the worker starts once the box is out (its first log lines raced the box). The worker does
# not reload on code changes (gunicorn does not either), so nothing is started twice. Both processes stop together,
# the worker by one SIGTERM from the shell: started with `&`, it was given SIGINT ignored and keeps ignoring it
# (db_worker's configure_signals), since it missed a Ctrl-C that came while it still loaded Django, and one that got
# both the terminal's SIGINT and the shell's SIGTERM took the second as "force". Ctrl-C: gunicorn gets the
# terminal's SIGINT (its quick shutdown: integration_service/server.py) and the shell's INT trap stops the worker;
# where the shell cannot trap SIGINT (started with it ignored), it stops the worker once gunicorn has ended. Any
# other end of the recipe stops both with SIGTERM.
# The worker gives its webhook requests 1 s (WORKER_STOP_SECONDS), not the WEBHOOK_TIMEOUT_SECONDS a deploy waits for:
# Ctrl-C ends everything in a second or two, without a traceback (tests/integration_service/test_make_run.py).
# Without REDIS_URL its processes share one login, token and request budget in files (CACHE_DIR, core/file_cache.py).
run: $(VENV)/.installed
	@$(BIN)/python manage.py migrate --no-input --verbosity 0
	@$(BIN)/python manage.py collectstatic --no-input --verbosity 0
	@rm -rf $(METRICS_DIR) $(RUN_CACHE_DIR) && mkdir -p $(METRICS_DIR)
	@LOGINS=$$($(BIN)/python manage.py seed_demo --base-url http://127.0.0.1:$(PORT)) || exit 1; \
	export PROMETHEUS_MULTIPROC_DIR=$(METRICS_DIR) CACHE_DIR=$${CACHE_DIR:-$(RUN_CACHE_DIR)}; \
	mkdir -p var; \
	$(BIN)/python manage.py db_worker --batch --no-startup-delay --no-reload -v 0 >var/make-run-tasks.log 2>&1; \
	$(BIN)/gunicorn -c gunicorn.conf.py --bind 127.0.0.1:$(PORT) --log-level warning & SERVER=$$!; \
	trap 'kill $$WORKER $$SERVER 2>/dev/null; wait' EXIT TERM HUP; \
	trap 'trap - EXIT; kill -INT $$SERVER 2>/dev/null; kill -TERM $$WORKER 2>/dev/null; wait' INT; \
	$(BIN)/python -c "$$WAIT_FOR_SERVER" http://127.0.0.1:$(PORT)/healthz && echo "$$LOGINS" \
		&& { WORKER_STOP_SECONDS=$${WORKER_STOP_SECONDS:-1} $(BIN)/python manage.py db_worker --no-reload & \
			WORKER=$$!; wait $$SERVER; }

test: $(VENV)/.installed-test chromium
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# A quick run while developing (docs/testing.md): leaves out the tests that start servers or processes or take seconds,
# the browser tests and those that need PostgreSQL. `make test`, which CI runs, runs them all.
test-fast: $(VENV)/.installed-test
	$(BIN)/python -m pytest -m "not slow and not browser and not postgres" $(PYTEST_ARGS)

# The browser test drives Debian's chromium (Playwright's own browser download is not used).
chromium:
	@command -v chromium >/dev/null 2>&1 || apt-get install -y -q chromium >/dev/null 2>&1 \
		|| (apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium >/dev/null 2>&1) \
		|| echo "chromium could not be installed here: the browser test will be skipped"

screenshots: $(VENV)/.installed-test chromium
	SCREENSHOT_DIR=docs/screenshots $(BIN)/python -m pytest tests/e2e -q

lint: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# The import layout (docs/architecture.md): apps import only the apps below them, no import circle inside an app.
check-imports: $(VENV)/.installed-test
	$(BIN)/lint-imports --no-cache

format: $(VENV)/.installed-test
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

check-migrations: $(VENV)/.installed-test
	$(BIN)/python manage.py makemigrations --check --dry-run

clean:
	rm -rf $(VENV) staticfiles db.sqlite3 $(METRICS_DIR)
