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

.PHONY: dev browser claude-code screenshots serve demo-reset test lint typecheck unit integration infra-tests format bench bench-scale bench-concurrency openapi build lock synth deploy destroy clean

SERVE_STAMP := $(VENV)/.serve-stamp

# Serving needs the local and mcp extras only: no test tools, no CDK (the dev and infra groups are
# most of a full .venv). pip prints what it collects and installs: a first install is never silent.
# --no-compile: Python writes the bytecode of what serving imports when it first does (100 MB less).
$(SERVE_STAMP): pyproject.toml
	@test -x $(BIN)/python || { echo "creating $(VENV)"; $(PYTHON) -m venv $(VENV); }
	@echo "installing what serving needs into $(VENV) (the local model, the server, mcp)"
	$(BIN)/python -m pip install --upgrade --progress-bar on "pip>=25.1"
	$(BIN)/python -m pip install --progress-bar on --no-compile -e '.[local,mcp]'
	@touch $(SERVE_STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || { echo "creating $(VENV)"; $(PYTHON) -m venv $(VENV); }
	@echo "installing everything into $(VENV): the extras, the dev tools and the CDK (infra)"
	$(BIN)/python -m pip install --upgrade --progress-bar on "pip>=25.1"
	$(BIN)/python -m pip install --progress-bar on -e '.[server,local,mcp]' --group dev --group infra
	@touch $(STAMP) $(SERVE_STAMP)

dev: $(STAMP)  ## create .venv and install the project with its server, local and mcp extras and dev tools

serve: $(SERVE_STAMP)  ## start the local API on http://$(HOST):$(PORT) with a demo workspace and sample data (loaded once)
	$(BIN)/neural-memory serve --host $(HOST) --port $(PORT) --data-dir $(DATA)

demo-reset: $(SERVE_STAMP)  ## start the local API and load the sample data into the demo workspace again
	$(BIN)/neural-memory serve --host $(HOST) --port $(PORT) --data-dir $(DATA) --reload-samples

test: dev lint typecheck browser claude-code  ## lint, type-check and run every test
	$(BIN)/python -m pytest

# The console's browser tests drive the system Chromium (Playwright's own browser download is not
# needed). Installed from Debian's archive when missing and run as root (as CI is); otherwise say
# so: the browser tests then skip locally and fail with CI=true.
browser:  ## the system Chromium for the console's browser tests (Debian package `chromium`)
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	{ if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; \
	  else echo "no Chromium: install Debian's chromium package (sudo apt-get install chromium) to run tests/browser"; fi; }

# The real Claude Code CLI for tests/multiprocess/test_claude_code.py, from npm as a user installs it,
# pinned (2.1.197: the newest release whose engines accept node 20), into .tools/ (not on PATH).
CLAUDE_CODE_VERSION := 2.1.197
CLAUDE_CODE := .tools/claude-code/node_modules/.bin/claude
claude-code:  ## the pinned Claude Code CLI (npm) in .tools/claude-code for the agent hook tests
	@$(CLAUDE_CODE) --version 2>/dev/null | grep -q '^$(CLAUDE_CODE_VERSION) ' || \
	{ command -v npm >/dev/null 2>&1 || { echo "no npm: install node >= 20 to run tests/multiprocess/test_claude_code.py"; exit 0; }; \
	  npm install --prefix .tools/claude-code --no-save --no-audit --no-fund @anthropic-ai/claude-code@$(CLAUDE_CODE_VERSION); }

screenshots: dev browser  ## the console's screenshots in docs/console/ (1440 px and 390 px)
	$(BIN)/python -m tests.browser.screenshots docs/console

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

build: dev  ## the Lambda layer from requirements/layer.txt (locked, hashed) into $(LAYER): arm64 / cp313, no Docker
	$(BIN)/python -m infra.layer_build --target lambda --out $(LAYER)

lock: dev  ## rewrite the hashes of requirements/*.txt after a pin changes
	$(BIN)/python -m infra.layer_build lock

synth: build  ## the cloud assembly in cdk.out (offline; cdk-nag fails the synth on any open finding)
	$(BIN)/python -m infra.app

deploy: build  ## cdk deploy (needs AWS credentials and a bootstrapped account): make deploy STAGE=prod
	npx --yes aws-cdk@2 deploy --context stage=$(STAGE) --require-approval never

destroy:
	npx --yes aws-cdk@2 destroy --context stage=$(STAGE)

format: dev
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: dev  ## search latency at 10k and 100k observations, and every handler's cold import from the layer
	$(BIN)/python -m bench.search_latency
	$(BIN)/python -m bench.cold_import

bench-scale: dev  ## a million observations: latency, restart, memory, recall (builds .bench-data/ once, ~5 min)
	$(BIN)/python -m bench.scale --size 1000000

bench-concurrency: dev  ## eight clients over HTTP against a real serve at 100k (6 searching, 2 ingesting)
	$(BIN)/python -m bench.concurrency --size 100000 --data-dir .bench-data/c100k

openapi: dev  ## write the merged OpenAPI document
	$(BIN)/neural-memory openapi > docs/openapi.json

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
