# attnref: two commands on a fresh clone — `make demo` and `make test`.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
.DEFAULT_GOAL := demo

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# pip's notes about the machine's extra package indexes are noise in the logs
QUIET_PIP = 2>&1 | { grep -v '^WARNING: Location' || true; }
# setuptools' "Editable installation" notice (an InformationOnly warning of the build backend,
# printed for every flat-layout editable install) is noise too: filtered by its message
QUIET_EDITABLE = PYTHONWARNINGS='ignore:Editable installation'

# Tiny Shakespeare: the copy in ../shared where the clone has one beside it (this project's
# CI, whose tests never download); elsewhere nothing is set and attnref finds it as on a user's
# machine: --data, $ATTNREF_DATA, the user cache, else one verified download.
SHARED_DATA := $(abspath ../shared/data/tinyshakespeare/input.txt)
ifeq ($(origin ATTNREF_DATA),undefined)
ifneq ($(wildcard $(SHARED_DATA)),)
ATTNREF_DATA := $(SHARED_DATA)
export ATTNREF_DATA
endif
endif

# KaTeX for the book, vendored from the npm registry (no npm needed), pinned by version and
# the registry's sha512 integrity of the tarball
KATEX_VERSION := 0.16.47
KATEX_INTEGRITY := sha512-Eeo8Ys1doU1z+x8AZsPpQu+p/QcZBI5PeOo7QGQdy2x2m0MU/hYagBbGOmXwr5KVbEfVuWv9LpnQWeehogurjg==
KATEX := docs/assets/katex/VENDORED.json
# headless Chromium for the book's browser test: Debian's packages
CHROMEDRIVER ?= /usr/bin/chromedriver
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# mkdocs-material's end-of-life banner is noise in the logs
export NO_MKDOCS_2_WARNING := 1

.PHONY: demo test test-soak lint setup setup-dev ui docs site browser latex postgres nginx server clean

$(BIN)/python:
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "attnref needs Python >= 3.11"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip $(QUIET_PIP)

# torch first, pinned to the CPU build: an unpinned torch would pull GBs of CUDA packages.
$(VENV)/.torch: | $(BIN)/python
	$(BIN)/python -m pip install --quiet torch==2.13.0 $(QUIET_PIP)
	@touch $@

$(VENV)/.installed: pyproject.toml $(VENV)/.torch
	$(QUIET_EDITABLE) $(BIN)/python -m pip install --quiet -e . $(QUIET_PIP)
	@touch $@

$(VENV)/.installed-dev: pyproject.toml $(VENV)/.torch
	$(QUIET_EDITABLE) $(BIN)/python -m pip install --quiet -e ".[dev,docs,server]" $(QUIET_PIP)
	@touch $@ $(VENV)/.installed

setup: $(VENV)/.installed
setup-dev: $(VENV)/.installed-dev

## demo: set up .venv and run the main job on the embedded defaults: the worked example, then
## the Q02/Q03 ablation (about 20 minutes on 2 CPU cores) into sqlite:///mlflow.db, and Q03's answer
demo: $(VENV)/.installed
	$(BIN)/attnref explain --example life-is-awesome
	$(BIN)/attnref ablation
	$(BIN)/attnref report --output q03-report.md
	@echo "Q03, answered from the runs: q03-report.md"
	@echo "Browse the runs: make ui  (then open $$($(BIN)/python tools/ui_link.py mlflow.db))"

## ui: the MLflow UI over the embedded store, opened on the runs (MLflow 3 opens its GenAI home
## unless the link asks for the runs: tools/ui_link.py prints that link)
ui: $(VENV)/.installed
	@echo "open the runs: $$($(BIN)/python tools/ui_link.py mlflow.db http://127.0.0.1:5000)"
	$(BIN)/mlflow ui --backend-store-uri sqlite:///mlflow.db --host 127.0.0.1 --port 5000

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

$(KATEX): tools/vendor_katex.py | $(BIN)/python
	$(BIN)/python tools/vendor_katex.py docs/assets/katex --version $(KATEX_VERSION) \
		--integrity '$(KATEX_INTEGRITY)'

## browser: Debian's chromium + chromium-driver (for the book's browser test), if missing
browser:
	@if [ -x $(CHROMEDRIVER) ] && [ -x /usr/lib/chromium/chromium ]; then :; else \
		echo "installing chromium and chromium-driver (Debian packages) for the browser test"; \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			chromium chromium-driver > /dev/null; fi

## latex: Debian's TeX Live for the LaTeX compile test, if pdflatex is missing: pdflatex,
## article, amsmath, amssymb (texlive-latex-base) and the T2A Cyrillic fonts (texlive-lang-cyrillic)
latex:
	@if command -v pdflatex > /dev/null && kpsewhich t2aenc.def > /dev/null; then :; else \
		echo "installing texlive-latex-base and texlive-lang-cyrillic (Debian packages) for the LaTeX test"; \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			texlive-latex-base texlive-lang-cyrillic > /dev/null; fi

## postgres: Debian's postgresql (initdb, pg_ctl) for the class server and its tests, if missing
postgres:
	@if ls /usr/lib/postgresql/*/bin/pg_ctl > /dev/null 2>&1; then :; else \
		echo "installing postgresql (Debian package) for the class server's tests"; \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			postgresql > /dev/null; fi

## nginx: Debian's nginx, the class server's edge (TLS, timeouts, limits per address), if
## missing; its service is not started (attnref server start runs its own)
nginx:
	@if [ -x /usr/sbin/nginx ] || command -v nginx > /dev/null; then :; else \
		echo "installing nginx (Debian package) for the class server's edge"; \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 apt-get install -y -qq \
			--no-install-recommends nginx > /dev/null; fi

## server: the class server in $(CLASS_DIR) (attnref server start; the admin password comes
## from $$ATTNREF_ADMIN_PASSWORD; it prints the link to the runs); Ctrl-C, or
## `attnref server stop $(CLASS_DIR)`, stops it and its PostgreSQL. SERVER_OPTS: e.g. --tls
CLASS_DIR ?= class-server
server: $(VENV)/.installed-dev postgres nginx
	$(BIN)/attnref server start $(CLASS_DIR) $(SERVER_OPTS)

## site: build the book strictly into site/
site: $(VENV)/.installed-dev $(KATEX)
	$(BIN)/mkdocs build --strict

## docs: serve the book on http://127.0.0.1:8000 (rebuilds on change)
docs: $(VENV)/.installed-dev $(KATEX)
	$(BIN)/mkdocs serve -a 127.0.0.1:8000

## test: set up .venv with the dev extras and run the suite (the book's strict build and
## browser check and the pdflatex compile of `explain --format latex` included) on
## TEST_WORKERS pytest-xdist workers (one per CPU core; a test file stays on one worker, so its
## module's server or site is started once), less the soak tests (marked `soak`: breadth,
## volume and restarts, each over a minute, run by `make test-soak` and by CI), to stay under
## 20 minutes on a 2-core machine
TEST_WORKERS ?= auto
TEST_DEPS = $(VENV)/.installed-dev $(KATEX) browser latex postgres nginx
test: $(TEST_DEPS) lint
	@# the project's bytecode written once: where PYTHONDONTWRITEBYTECODE is set (this machine
	@# sets it) every attnref the tests start would compile the package again (about 1 s each)
	$(BIN)/python -m compileall -q attention_ref cli > /dev/null
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile -m "not soak"
	@echo "make test: the soak tests were left out (make test-soak runs them; CI runs both)"

## test-soak: the soak tests alone (every page's layout at two widths, every notebook run, the
## gate's 3,000 fuzzed requests, eight trainings at once, servers restarted mid-run, the class
## server's start/stop/TLS cycle, the MLflow UI in a browser)
test-soak: $(TEST_DEPS)
	$(BIN)/python -m compileall -q attention_ref cli > /dev/null
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile -m soak

clean:
	rm -rf $(VENV) build site docs/assets/katex *.egg-info .pytest_cache .ruff_cache .hypothesis
