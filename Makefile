# Card table: `make run` serves the API with a worker, `make test` runs every test.
VENV ?= .venv
PY := $(VENV)/bin/python
export VENV

.PHONY: install run test test-fast lint openapi verify simulate clean

$(VENV)/.installed: pyproject.toml constraints.txt scripts/install.sh
	scripts/install.sh

install: $(VENV)/.installed

run: install
	scripts/run.sh

test: install
	scripts/ensure-redis.sh
	$(PY) -m pytest -n 2 -q

test-fast: install
	$(PY) -m pytest -q -m "not integration"

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

verify: install
	@test -n "$(RECORD)" || { echo "usage: make verify RECORD=path/to/record.json"; exit 2; }
	$(PY) -m domain.verify "$(RECORD)"

GAME ?= golf
GAMES ?= 500
SEATS ?= greedy,random
OPTIONS ?= {}
simulate: install
	$(PY) -m workers.simulate --game "$(GAME)" --games "$(GAMES)" --seats "$(SEATS)" --options '$(OPTIONS)'

openapi: install
	$(PY) -m service.openapi > openapi.yaml

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache .hypothesis
