# Maskscope: `make run` opens the window, `make test` runs the suite. Both set everything up first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
GPU    ?= cpu

# llama.cpp is compiled with Maskscope's own CPU flags (engine/llama_build/flags.py: a portable
# x86-64-v3 baseline, never AMX) and kept in Maskscope's wheel cache, keyed by those flags; GPU
# picks a backend to add (cpu, cuda, metal, vulkan).
STAMP := $(VENV)/.installed-$(GPU)

# Qt's X11 (xcb) platform plugin loads these; minimal Debian/Ubuntu systems may lack some.
QT_XCB_DEBS := libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0 \
	libxkbcommon-x11-0 libxcb-shape0 libxcb-xinerama0 libxcb-randr0 libxcb-xkb1 libegl1

.PHONY: run test test-fast soak bench bench-cpu fidelity lint format screenshot setup model sysdeps \
	xgrammar \
	rebuild-llama package package-test clean

setup: $(STAMP) model llama-converter

# XGrammar (maskscope[xgrammar]) needs torch. Its CPU build: pip finds 2.13.0 on this
# project's machines' disk; elsewhere give PIP_TORCH="torch --index-url
# https://download.pytorch.org/whl/cpu", or plain PyPI brings a CUDA build of several GB.
PIP_TORCH ?= torch==2.13.0
XGRAMMAR_STAMP := $(VENV)/.installed-xgrammar
xgrammar: $(XGRAMMAR_STAMP)
$(XGRAMMAR_STAMP): $(STAMP)
	$(BIN)/python -m pip install --progress-bar off $(PIP_TORCH)
	$(BIN)/python -m pip install --progress-bar off -e '.[dev,xgrammar]'
	touch $@

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip wheel platformdirs

# llama-cpp-python first, so that installing Maskscope never compiles pip's default build.
$(STAMP): pyproject.toml engine/llama_build/flags.py | $(BIN)/python
	$(BIN)/python -m engine.llama_build.wheels --gpu $(GPU) --if-missing
	$(BIN)/python -m pip install --progress-bar off -e '.[dev]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

# `maskscope setup` proves the build in a child process (exit 3: it crashed). Then the build is
# compiled once more with the safe flags, bypassing every cache, and proved again.
model: $(STAMP)
	@$(BIN)/maskscope setup || { rc=$$?; [ $$rc -eq 3 ] || exit $$rc; \
		echo ">> The llama.cpp build crashed its check: rebuilding it once with portable flags"; \
		$(MAKE) --no-print-directory rebuild-llama && $(BIN)/maskscope setup; }

rebuild-llama: | $(BIN)/python
	$(BIN)/python -m engine.llama_build.wheels --gpu $(GPU) --rebuild

# llama.cpp's own JSON-Schema converter, the C++ one llama-server runs, compiled from the same
# sdist into a small command that the `llamacpp` compiler runs (engine/llama_build/converter.py;
# about 30 s the first time, then cached). Without it that compiler falls back to
# llama-cpp-python's Python port, which differs, and says so.
.PHONY: llama-converter
llama-converter: $(STAMP)
	$(BIN)/python -m engine.llama_build.converter

# llama.cpp's own server (issue 24), compiled from the llama.cpp inside llama-cpp-python's sdist
# with the wheel's flags, without its web UI, and cached like the wheel (about 10 minutes the
# first time); a cached one is only run once (--version) to prove it. The tests start it.
.PHONY: llama-server
llama-server: $(STAMP)
	$(BIN)/python -m engine.llama_build.server --gpu $(GPU)

# Each bundled suite here, on llama-server with the tested GBNF, and on llama-server with its
# own json_schema converter, as a table and where they part (docs/suites-and-export.md); about 3 minutes.
.PHONY: server-comparison
server-comparison: setup llama-server
	$(BIN)/python -m tests.server_comparison

# promptfoo (issue 24), which the tests run on an exported bundle's promptfooconfig.yaml as it
# ships: the version and tree tools/promptfoo/package-lock.json pins, put in build/node by npm
# (node 20.20 or later; 0.122 wants node 22). About 1 minute and 1.4 GB, most of it optional
# agent SDKs the bundle never loads; they stay, as --omit=optional also drops libsql's native
# build, which promptfoo's results store needs.
PROMPTFOO_DIR := build/node
PROMPTFOO_STAMP := $(PROMPTFOO_DIR)/.installed
.PHONY: promptfoo
promptfoo: $(PROMPTFOO_STAMP)
$(PROMPTFOO_STAMP): tools/promptfoo/package.json tools/promptfoo/package-lock.json
	mkdir -p $(PROMPTFOO_DIR)
	cp tools/promptfoo/package.json tools/promptfoo/package-lock.json $(PROMPTFOO_DIR)/
	npm ci --prefix $(PROMPTFOO_DIR) --no-audit --no-fund --loglevel=error
	touch $@

run: setup sysdeps
	$(BIN)/maskscope gui

# Installs the window's system libraries with apt where they are missing (root or sudo);
# elsewhere it only names them. Tests run offscreen and need only Chromium, which renders the
# HTML report in its test (skipped, with the reason, where it cannot be installed).
sysdeps:
	@if command -v dpkg-query >/dev/null 2>&1; then \
		missing=""; \
		for p in $(QT_XCB_DEBS) $(EXTRA_DEBS); do \
			dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
		done; \
		if [ -n "$$missing" ]; then \
			echo ">> Installing system packages:$$missing"; \
			if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
			$$SUDO apt-get install -y $$missing || { $$SUDO apt-get update && $$SUDO apt-get install -y $$missing; } \
				|| echo ">> Could not install:$$missing. The window may not open without them."; \
		fi; \
	fi

test: EXTRA_DEBS = chromium desktop-file-utils
test: setup xgrammar sysdeps llama-server promptfoo
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q --durations=25

test-fast: setup xgrammar promptfoo
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -m "not slow and not soak"

# Minutes of back-to-back runs: memory and open files must stay flat (issue 13); long runs in
# a real X session (Xvfb, openbox) under tooltips, scrolling and clicks never crash (issue 22).
soak: EXTRA_DEBS = xvfb openbox xdotool
soak: setup sysdeps
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -s -m soak

bench: setup xgrammar
	QT_QPA_PLATFORM=offscreen $(BIN)/maskscope bench

# The forward pass of each candidate CPU build, side by side (compiles the missing ones first).
bench-cpu: setup
	$(BIN)/python -m engine.llama_build.bench

# What each grammar enforces (issue 9): every compiler on every backend it runs on, over the
# MaskBench dev schemas and the JSON Schema Test Suite (draft2020-12). The table goes to the
# terminal, one JSON line per schema to $(FIDELITY_OUT) (`maskscope check --summary` reads it
# back). DATA=DIR for other data, JOBS=N worker processes.
DATA ?= ../shared/data
JOBS ?= 2
FIDELITY_OUT ?= build/fidelity.jsonl
FIDELITY_FILES = $(wildcard $(DATA)/maskbench-dev/*.json) \
	$(wildcard $(DATA)/json-schema-test-suite/draft2020-12/*.json)
# Every pair on Gemma 3's vocabulary, one backend at a time, but the outlines pair:
# outlines-core's Index walks every token from every state of the regex, 0.25 s to minutes a
# schema over Gemma's 262,144 tokens. It runs over a random-weight model's 32,000-token
# SentencePiece vocabulary (tests/tiny_models.py; no space prefix, as Gemma's), still
# outlines-core's own Index and Guide: a text passes exactly when its bytes match the regex,
# whichever tokens spell it. A schema whose regex and Index take longer than
# OUTLINES_TIMEOUT did not compile (a finding, not a crash).
FIDELITY_BACKENDS = $(shell $(BIN)/python -c \
	"from engine.settings import BACKENDS; print(*(b for b in BACKENDS if b != 'outlines'))")
OUTLINES_VOCAB ?= llama-spm-bare
OUTLINES_TIMEOUT ?= 60
fidelity: setup xgrammar
	@if [ -z "$(strip $(FIDELITY_FILES))" ]; then \
		echo "make fidelity: no data: expected $(DATA)/maskbench-dev/*.json and" \
			"$(DATA)/json-schema-test-suite/draft2020-12/*.json (give DATA=DIR)" >&2; exit 2; fi
	@for d in maskbench-dev json-schema-test-suite/draft2020-12; do \
		[ -d "$(DATA)/$$d" ] || echo ">> $(DATA)/$$d is missing: its rows are left out"; done
	@mkdir -p $(dir $(FIDELITY_OUT))
	@echo ">> maskscope check --summary on $(words $(FIDELITY_FILES)) files, $(JOBS) workers"
	@: > $(FIDELITY_OUT)
	@for b in $(FIDELITY_BACKENDS); do \
		$(BIN)/maskscope check --summary --json --jobs $(JOBS) --backend $$b $(FIDELITY_FILES) \
			>> $(FIDELITY_OUT) || exit $$?; done
	@echo ">> the outlines pair on $(OUTLINES_VOCAB)'s 32,000 tokens, $(OUTLINES_TIMEOUT) s a schema"
	@$(BIN)/maskscope check --summary --json --jobs $(JOBS) --compiler outlines --backend outlines \
		--timeout $(OUTLINES_TIMEOUT) --model "$$($(BIN)/python -c \
		'from tests.tiny_models import tiny_model; print(tiny_model("$(OUTLINES_VOCAB)"))')" \
		$(FIDELITY_FILES) >> $(FIDELITY_OUT)
	@echo ">> one line per schema in $(FIDELITY_OUT); all pairs together:"
	@$(BIN)/maskscope check --summary $(FIDELITY_OUT)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# A real screenshot of a finished run, for the README (needs Debian's xvfb).
screenshot: EXTRA_DEBS = xvfb xauth
screenshot: setup sysdeps
	xvfb-run -a -s "-screen 0 1600x1000x24" $(BIN)/maskscope gui \
		--schema resources/examples/currency.schema.json \
		--prompt-file resources/examples/currency.prompt.txt \
		--autorun --screenshot docs/screenshot.png --quit-after-run

# The standalone app (issue 14): one folder, dist/maskscope/, made by PyInstaller from
# packaging/maskscope.spec out of this venv, so with the same llama.cpp build `make setup` proved.
# BUNDLE_MODEL=1 puts the default model inside too (240 MB more). packaging/README.md has more.
BUNDLE_MODEL ?= 0
package: setup $(VENV)/.installed-package
	MASKSCOPE_BUNDLE_MODEL=$(BUNDLE_MODEL) $(BIN)/pyinstaller --noconfirm --log-level WARN \
		--distpath dist --workpath build/pyinstaller packaging/maskscope.spec
	cp packaging/maskscope.desktop packaging/install-desktop-entry.sh dist/maskscope/
	@echo ">> dist/maskscope/maskscope: $$(du -sh dist/maskscope | cut -f1)"

$(VENV)/.installed-package: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --progress-bar off -e '.[dev,package]'
	touch $@

# The built app started outside the venv (`env -i`): it runs an example to the end and quits.
package-test: package
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -m package tests/packaging

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache *.egg-info build dist
