# attnref: two commands on a fresh clone — `make demo` and `make test`.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
.DEFAULT_GOAL := demo

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# pip's notes about the machine's extra package indexes are noise in the logs
QUIET_PIP = 2>&1 | { grep -v '^WARNING: Location' || true; }

# Tiny Shakespeare for the experiments and the tests: a local copy, never downloaded in tests.
ATTNREF_DATA ?= $(abspath ../shared/data/tinyshakespeare/input.txt)
export ATTNREF_DATA

.PHONY: demo test lint setup setup-dev ui clean

$(BIN)/python:
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "attnref needs Python >= 3.11"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip $(QUIET_PIP)

# torch first, pinned to the CPU build: an unpinned torch would pull GBs of CUDA packages.
$(VENV)/.torch: | $(BIN)/python
	$(BIN)/python -m pip install --quiet torch==2.13.0 $(QUIET_PIP)
	@touch $@

$(VENV)/.installed: pyproject.toml $(VENV)/.torch
	$(BIN)/python -m pip install --quiet -e . $(QUIET_PIP)
	@touch $@

$(VENV)/.installed-dev: pyproject.toml $(VENV)/.torch
	$(BIN)/python -m pip install --quiet -e ".[dev]" $(QUIET_PIP)
	@touch $@ $(VENV)/.installed

setup: $(VENV)/.installed
setup-dev: $(VENV)/.installed-dev

## demo: set up .venv and run the main job on the embedded defaults: the worked example, then
## the Q02/Q03 ablation (about 10 minutes on 2 CPU cores) into sqlite:///mlflow.db, and Q03's answer
demo: $(VENV)/.installed
	$(BIN)/attnref explain --example life-is-awesome
	$(BIN)/attnref ablation
	$(BIN)/attnref report --output q03-report.md
	@echo "Q03, answered from the runs: q03-report.md"
	@echo "Browse the runs: make ui  (mlflow ui --backend-store-uri sqlite:///mlflow.db, http://127.0.0.1:5000)"

## ui: the MLflow UI over the embedded store
ui: $(VENV)/.installed
	$(BIN)/mlflow ui --backend-store-uri sqlite:///mlflow.db --host 127.0.0.1 --port 5000

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

## test: set up .venv with the dev extras and run the whole suite
test: $(VENV)/.installed-dev lint
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache .hypothesis
