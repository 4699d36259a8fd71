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

.PHONY: demo data test test-soak lint setup setup-dev ui docs site browser latex postgres nginx server clean

$(BIN)/python:
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "attnref needs Python >= 3.11"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip $(QUIET_PIP)

# torch first, by tools/install_torch.py's plan (PyPI's Linux torch is the CUDA build, GBs of
# NVIDIA libraries even without a GPU): the build TORCH_INDEX chooses, else the torch 2.13.0
# that pip's configuration finds locally, else on Linux without an NVIDIA GPU the CPU build
# from https://download.pytorch.org/whl/cpu, else PyPI's default (CPU on macOS and Windows,
# CUDA on Linux with an NVIDIA GPU). TORCH_INDEX: an index URL, e.g.
# `make demo TORCH_INDEX=https://download.pytorch.org/whl/cu128`, or `pypi` for PyPI's default
# build; empty: the plan decides. Another build in an existing .venv: `make clean` first.
TORCH_INDEX ?=
$(VENV)/.torch: | $(BIN)/python
	$(BIN)/python tools/install_torch.py --version 2.13.0 --index '$(TORCH_INDEX)' --quiet \
		$(QUIET_PIP)
	@touch $@

$(VENV)/.installed: pyproject.toml $(VENV)/.torch
	$(QUIET_EDITABLE) $(BIN)/python -m pip install --quiet -e . $(QUIET_PIP)
	@touch $@

# the contributor's set-up: attnref with its dev and server extras, and beside it the book's
# package (book/: attnref_book and the book's build tools, never in attnref's wheel)
$(VENV)/.installed-dev: pyproject.toml book/pyproject.toml $(VENV)/.torch
	$(QUIET_EDITABLE) $(BIN)/python -m pip install --quiet -e ".[dev,server]" -e ./book \
		$(QUIET_PIP)
	@touch $@ $(VENV)/.installed

setup: $(VENV)/.installed
setup-dev: $(VENV)/.installed-dev

## demo: set up .venv and run the main job on the embedded defaults: the worked example, then
## the Q02/Q03 ablation (the README's Quickstart gives how long it took) into sqlite:///mlflow.db, and Q03's answer
## DEMO_OPTS: options of `attnref ablation` (see its --help), e.g. a quick demo:
##   make demo DEMO_OPTS="--quick --max-steps 20 --eval-interval 10"
DEMO_OPTS ?=
demo: $(VENV)/.installed
	$(BIN)/attnref explain --example life-is-awesome
	$(BIN)/attnref ablation $(DEMO_OPTS)
	$(BIN)/attnref report --output q03-report.md
	@echo "Q03, answered from the runs: q03-report.md"
	@echo "Browse the runs: make ui  (then open $$($(BIN)/python tools/ui_link.py mlflow.db))"

## data: Tiny Shakespeare into the user cache ($$XDG_CACHE_HOME/attnref/), once, verified by
## its sha256 (attnref and the tests find it there; the tests never download it); where
## ATTNREF_DATA is set (../shared's copy), it says where that copy is
data: $(VENV)/.installed
	$(BIN)/python tools/get_data.py

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

# make test's system tools are Debian's packages, each target below installing its PACKAGES
# with apt-get (through $(SUDO), only when not root) where its PROBE (a shell test) says they
# are missing. Where apt-get is not on the PATH (macOS, a non-Debian Linux) make stops with one
# line that names WHAT to install, not a shell error. The probes' paths are variables, so that
# tests/test_make_system.py can point them elsewhere.
CHROMIUM ?= /usr/lib/chromium/chromium
PG_CTL ?= /usr/lib/postgresql/*/bin/pg_ctl
NGINX ?= /usr/sbin/nginx
debian_packages = $(if $(shell { $(PROBE); } > /dev/null 2>&1 && echo here),@:,$(if \
	$(shell command -v apt-get),$(apt_get_install),$(no_apt_get)))
apt_get_install = @echo "installing $(PACKAGES) (Debian packages) for $(FOR)"; \
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	$(SUDO) env DEBIAN_FRONTEND=noninteractive $(APT_ENV) apt-get install -y -qq \
		--no-install-recommends $(PACKAGES) > /dev/null
no_apt_get = $(error make $@: missing $(WHAT), for $(FOR) (Debian's packages: $(PACKAGES)), \
	and no apt-get on the PATH: install what is missing with your system's package manager; \
	make test needs Debian's apt-get (make demo needs none of them))

## browser: Debian's chromium + chromium-driver (for the book's browser test), if missing
browser: PROBE = [ -x $(CHROMEDRIVER) ] && [ -x $(CHROMIUM) ]
browser: PACKAGES = chromium chromium-driver
browser: WHAT = Chromium and its chromedriver
browser: FOR = the book's browser test
browser:
	$(debian_packages)

## latex: Debian's TeX Live for the LaTeX compile test, if pdflatex is missing: pdflatex,
## article, amsmath, amssymb (texlive-latex-base) and the T2A Cyrillic fonts (texlive-lang-cyrillic)
latex: PROBE = command -v pdflatex && kpsewhich t2aenc.def
latex: PACKAGES = texlive-latex-base texlive-lang-cyrillic
latex: WHAT = pdflatex with the T2A Cyrillic fonts
latex: FOR = the LaTeX compile test
latex:
	$(debian_packages)

## postgres: Debian's postgresql (initdb, pg_ctl) for the class server and its tests, if missing
postgres: PROBE = ls $(PG_CTL)
postgres: PACKAGES = postgresql
postgres: WHAT = PostgreSQL's server (initdb, pg_ctl)
postgres: FOR = the class server and its tests
postgres:
	$(debian_packages)

## nginx: Debian's nginx, the class server's edge (TLS, timeouts, limits per address), if
## missing; its service is not started (RUNLEVEL=1: attnref server start runs its own)
nginx: PROBE = [ -x $(NGINX) ] || command -v nginx
nginx: PACKAGES = nginx
nginx: WHAT = nginx
nginx: FOR = the class server's edge
nginx: APT_ENV = RUNLEVEL=1
nginx:
	$(debian_packages)

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
# the system packages first: where they cannot be installed, make says so before building .venv
TEST_DEPS = browser latex postgres nginx $(VENV)/.installed-dev $(KATEX)
test: $(TEST_DEPS) lint
	@# the project's bytecode written once: where PYTHONDONTWRITEBYTECODE is set (this machine
	@# sets it) every attnref the tests start would compile the package again (about 1 s each)
	$(BIN)/python -m compileall -q attention_ref cli book/attnref_book > /dev/null
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile -m "not soak"
	@echo "make test: the soak tests were left out (make test-soak runs them; CI runs both)"

## test-soak: the soak tests alone (every page's layout at two widths, every notebook run, the
## gate's 3,000 fuzzed requests, eight trainings at once, servers restarted mid-run, the class
## server's start/stop/TLS cycle, the MLflow UI in a browser)
test-soak: $(TEST_DEPS)
	$(BIN)/python -m compileall -q attention_ref cli book/attnref_book > /dev/null
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile -m soak

clean:
	rm -rf $(VENV) build site docs/assets/katex *.egg-info .pytest_cache .ruff_cache .hypothesis
