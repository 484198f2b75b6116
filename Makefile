# Neural Memory — developer commands. `make serve` and `make test` work from a fresh clone:
# they create .venv and install everything first (python3 >= 3.11 and pip are all you need).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
HOST   ?= 127.0.0.1
PORT   ?= 8080
DATA   ?= .neural-memory

.PHONY: dev serve test lint typecheck unit integration format bench openapi clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=25.1"
	$(BIN)/python -m pip install --quiet -e '.[local]' --group dev
	@touch $(STAMP)

dev: $(STAMP)  ## create .venv and install the project with its local extra and dev tools

serve: dev  ## start the local API on http://$(HOST):$(PORT) with a demo workspace and sample data
	$(BIN)/neural-memory serve --host $(HOST) --port $(PORT) --data-dir $(DATA)

test: dev lint typecheck  ## lint, type-check and run every test
	$(BIN)/python -m pytest

lint: dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: dev
	$(BIN)/mypy layers/core/python/neural_memory functions

unit: dev
	$(BIN)/python -m pytest tests/unit

integration: dev
	$(BIN)/python -m pytest tests/integration

format: dev
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: dev  ## search latency at 10k and 100k observations, and handler cold import
	$(BIN)/python -m bench.search_latency

openapi: dev  ## write the merged OpenAPI document
	$(BIN)/neural-memory openapi > docs/openapi.json

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
