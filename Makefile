# Two commands do the whole set-up: `make run` and `make test` (README).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
export OPERATOR_BASE_URL ?= http://$(HOST):$(PORT)

.PHONY: install run test lint format audit lock

install: $(VENV)/.installed

# The dev lock (runtime included, pip itself too) with hash checking: a file
# whose hash is not in the lock is refused (docs/dependencies.md).
# The venv is created only when missing: `python3 -m venv` refuses a .venv that is a symlink.
$(VENV)/.installed: requirements.txt requirements-dev.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --require-hashes -r requirements-dev.txt
	touch $@

run: install
	# A busy port stops the run here, in one line, before anything is migrated or printed.
	$(BIN)/python manage.py check_port --host $(HOST) --port $(PORT)
	$(BIN)/python manage.py create_local_secrets
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py seed_demo
	# The email worker sends the headless verification codes (to the console without EMAIL_HOST);
	# Ctrl-C stops it with the server.
	$(BIN)/python manage.py db_worker --no-startup-delay & \
	    trap 'kill $$! 2>/dev/null' EXIT; \
	    $(BIN)/python manage.py print_banner; \
	    $(BIN)/python manage.py runserver --insecure $(HOST):$(PORT)

lint: install
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache
	$(BIN)/mypy

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

test: lint
	$(BIN)/python manage.py create_local_secrets
	OPERATOR_BASE_URL=http://testserver $(BIN)/python manage.py test tests --noinput $(TEST_ARGS)

# pip-audit of both locks: fails on a known advisory or a package left unaudited,
# skips (exit 0) when no advisory service answers. AUDIT_ARGS go to pip-audit.
audit: install
	$(BIN)/python .ci/audit.py requirements.txt requirements-dev.txt $(if $(AUDIT_ARGS),-- $(AUDIT_ARGS))

# Recompile both locks from the .in files, runtime first: the dev lock is
# constrained to its versions. pip-tools only compiles, so it lives in a venv of
# its own and in neither lock. PIP_COMPILE_ARGS=--upgrade moves every pin to the
# newest release the .in files allow; --upgrade-package NAME moves one.
LOCK_VENV := .venv-lock
PIP_TOOLS := pip-tools==7.6.2
PIP_COMPILE = $(LOCK_VENV)/bin/pip-compile --quiet --generate-hashes --allow-unsafe --strip-extras \
	--no-emit-index-url --no-emit-find-links $(PIP_COMPILE_ARGS)

lock:
	$(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/pip install --quiet "$(PIP_TOOLS)"
	$(PIP_COMPILE) --output-file requirements.txt requirements.in
	$(PIP_COMPILE) --output-file requirements-dev.txt requirements-dev.in
