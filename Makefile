# The README's two commands: `make demo` (the main job) and `make test`.
# `make setup` takes a fresh machine to a working .venv; run again with nothing changed,
# it finishes in seconds (a stamp file records the last successful set-up).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.setup-stamp
# The CPU build of PyTorch that this machine kind provides; installed before the package
# because a bare torch requirement would pull several GB of CUDA packages.
TORCH  := torch==2.13.0
# Debian packages the toolkit needs at run time (installed only when missing).
APT_PACKAGES :=

.PHONY: setup test lint typecheck pytest demo clean

setup: $(STAMP)

$(STAMP): pyproject.toml Makefile
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q "$(TORCH)"
	$(BIN)/pip install -q -e ".[dev]"
	touch $(STAMP)

test: setup lint typecheck pytest

lint: setup
	$(BIN)/ruff check clir_toolkit tests

typecheck: setup
	$(BIN)/mypy

pytest: setup
	$(BIN)/pytest -q

demo: setup
	$(BIN)/clir demo

clean:
	rm -rf $(VENV) build *.egg-info
