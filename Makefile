# Two commands do the whole set-up: `make run` and `make test` (README).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
export OPERATOR_BASE_URL ?= http://$(HOST):$(PORT)

.PHONY: install run test lint format

install: $(VENV)/.installed

$(VENV)/.installed: requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $@

run: install
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

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

test: lint
	$(BIN)/python manage.py create_local_secrets
	OPERATOR_BASE_URL=http://testserver $(BIN)/python manage.py test tests --noinput $(TEST_ARGS)
