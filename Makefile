# Neural Memory — developer commands. `make serve` and `make test` work from a fresh clone:
# they create .venv and install everything first (python3 >= 3.11 and pip are all you need).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
HOST   ?= 127.0.0.1
PORT   ?= 8080
DATA   ?= .neural-memory

# jsii (CDK) prints a banner on node 20; the synth itself works.
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 1
export JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION := 1
STAGE  ?= dev
LAYER  := .build/layers/core

.PHONY: dev serve test lint typecheck unit integration infra-tests format bench openapi build synth deploy destroy clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=25.1"
	$(BIN)/python -m pip install --quiet -e '.[local]' --group dev --group infra
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
	$(BIN)/mypy layers/core/python/neural_memory functions infra tests bench

unit: dev
	$(BIN)/python -m pytest tests/unit

integration: dev
	$(BIN)/python -m pytest tests/integration

infra-tests: dev  ## CDK template assertions and cdk-nag (the layer asset is a placeholder)
	$(BIN)/python -m pytest tests/infra

build: dev  ## the Lambda layer from arm64 / cp313 wheels into $(LAYER) — no Docker
	rm -rf $(LAYER) .build/wheels && mkdir -p $(LAYER)/python
	$(BIN)/python -m pip wheel --quiet --no-deps -w .build/wheels .
	$(BIN)/python -m pip install --quiet --target $(LAYER)/python --platform manylinux2014_aarch64 \
		--implementation cp --python-version 3.13 --only-binary=:all: .build/wheels/neural_memory-*.whl
	rm -rf $(LAYER)/python/functions $(LAYER)/python/bin

synth: build  ## the cloud assembly in cdk.out (offline; cdk-nag fails the synth on any open finding)
	$(BIN)/python -m infra.app

deploy: build  ## cdk deploy (needs AWS credentials and a bootstrapped account): make deploy STAGE=prod
	npx --yes aws-cdk@2 deploy --context stage=$(STAGE) --require-approval never

destroy:
	npx --yes aws-cdk@2 destroy --context stage=$(STAGE)

format: dev
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: dev  ## search latency at 10k and 100k observations, and handler cold import
	$(BIN)/python -m bench.search_latency

openapi: dev  ## write the merged OpenAPI document
	$(BIN)/neural-memory openapi > docs/openapi.json

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
