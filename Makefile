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
# Debian packages the toolkit reads at run time (installed only when missing): the man pages
# of the test collections, FreeDict dictionaries, WordNet, Apertium, and the gettext
# catalogs of the parallel text.
MANPAGES := manpages manpages-dev manpages-fr manpages-fr-dev manpages-de manpages-de-dev \
            manpages-es manpages-es-dev manpages-it manpages-it-dev manpages-ru manpages-ru-dev \
            manpages-ja manpages-ja-dev manpages-zh
FREEDICT := dict-freedict-eng-fra dict-freedict-fra-eng dict-freedict-eng-deu \
            dict-freedict-eng-spa dict-freedict-eng-ita dict-freedict-eng-rus dict-freedict-eng-jpn
CATALOGS := gcc-12-locales util-linux-locales e2fsprogs-l10n debconf-i18n gdbm-l10n
# The JDK's javac compiles the toolkit's one Java class (clir_toolkit/java/HitReader.java), which
# reads a search's hits six times faster than Anserini's class (an optimisation only).
APT_PACKAGES := $(MANPAGES) $(FREEDICT) $(CATALOGS) wordnet-base wordnet-sense-index \
                apertium apertium-eng-spa openjdk-17-jdk-headless

.PHONY: setup test lint typecheck pytest fuzz demo clean

setup: $(STAMP)
	@# The toolkit's bytecode, compiled once here: where Python may not write it at run time
	@# (PYTHONDONTWRITEBYTECODE=1, as on this project's machines and in many container images),
	@# every command would otherwise compile its ~60 modules again (about 60 ms a command).
	@# Seconds when nothing changed; run again after pulling new code.
	$(BIN)/python -m compileall -q clir_toolkit

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
	@# The toolkit's Java class (HitReader), then Java's class archive: every command that searches
	@# or indexes then starts in half the time (optimisations only: without them, as before).
	$(BIN)/clir resource java --quiet || echo "note: no Java class archive; Java starts slower"
	touch $(STAMP)

test: setup lint typecheck pytest

lint: setup
	$(BIN)/ruff check clir_toolkit tests
	$(BIN)/lint-imports

typecheck: setup
	$(BIN)/mypy

pytest: setup
	$(BIN)/pytest -q

# The fuzz tests with many random examples (the hypothesis profile "fuzz" of tests/conftest.py;
# `make test` runs them with few). conftest.py skips the tests that would start after its
# time budget (CLIR_FUZZ_BUDGET_S, 8 minutes) so that the run ends by itself, with a pass, within
# 10 minutes; `timeout` is only the backstop should one test run far longer than its share.
fuzz: setup
	HYPOTHESIS_PROFILE=fuzz timeout 600 $(BIN)/pytest -q tests/test_fuzz*.py

demo: setup
	$(BIN)/clir demo

clean:
	rm -rf $(VENV) build *.egg-info
