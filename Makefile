# Card table: `make run` serves the API with a worker, `make test` runs every test.
VENV ?= .venv
PY := $(VENV)/bin/python
export VENV

.PHONY: install run test test-fast lint openapi verify simulate bench clean

$(VENV)/.installed: pyproject.toml constraints.txt scripts/install.sh
	scripts/install.sh

install: $(VENV)/.installed

run: install
	scripts/run.sh

test: install
	scripts/ensure-redis.sh
	scripts/ensure-chromium.sh
	$(PY) -m pytest -n 2 -q

test-fast: install
	$(PY) -m pytest -q -m "not integration and not slow"

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-cache

# The verifier's exit code (0 PASS, 1 FAIL or INCOMPLETE, 2 no record) is the recipe's status and is
# printed on failure; make's own status is 2 for any failure, so scripts call `python -m domain.verify`.
verify: install
	@test -n "$(RECORD)" || { echo "usage: make verify RECORD=path/to/record.json"; exit 2; }
	@$(PY) -m domain.verify "$(RECORD)" || { code=$$?; echo "verify: exit code $$code (1: FAIL or INCOMPLETE, 2: no record); make itself exits 2 on any failure" >&2; exit $$code; }

GAME ?= golf
GAMES ?= 500
SEATS ?= greedy,random
OPTIONS ?= {}
VIA_QUEUE ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 1)
SAMPLES ?=
THINK_MS ?=
NO_TIME_CAP ?=
simulate: install
	$(PY) -m workers.simulate --game "$(GAME)" --games "$(GAMES)" --seats "$(SEATS)" --options '$(OPTIONS)' \
		--jobs "$(JOBS)" $(if $(SAMPLES),--samples "$(SAMPLES)") $(if $(THINK_MS),--think-ms "$(THINK_MS)") $(if $(NO_TIME_CAP),--no-time-cap) $(if $(VIA_QUEUE),--via-queue "$(VIA_QUEUE)") $(if $(DUPLICATE),--duplicate)

# Every figure against its floor, measured in one run: prints a table, writes var/bench.json.
bench: install
	$(PY) -m bench

openapi: install
	$(PY) -m service.openapi > openapi.yaml

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache .hypothesis
