# Maskscope: `make run` opens the window, `make test` runs the suite. Both set everything up first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
GPU    ?= cpu
LLAMA_CPP_VERSION := 0.3.36

# llama.cpp backends, picked at build time. CPU builds come from pip's wheel cache after the first.
CMAKE_ARGS_cuda   := -DGGML_CUDA=on
CMAKE_ARGS_metal  := -DGGML_METAL=on
CMAKE_ARGS_vulkan := -DGGML_VULKAN=on

STAMP := $(VENV)/.installed-$(GPU)

# Qt's X11 (xcb) platform plugin loads these; minimal Debian/Ubuntu systems may lack some.
QT_XCB_DEBS := libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0 \
	libxkbcommon-x11-0 libxcb-shape0 libxcb-xinerama0 libxcb-randr0 libxcb-xkb1 libegl1

.PHONY: run test bench lint format screenshot setup model sysdeps clean

setup: $(STAMP) model

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip wheel

$(STAMP): pyproject.toml | $(BIN)/python
	@echo ">> Installing Maskscope into $(VENV). The first build of llama-cpp-python compiles llama.cpp (about 5 minutes on 2 cores)."
	CMAKE_BUILD_PARALLEL_LEVEL=$${CMAKE_BUILD_PARALLEL_LEVEL:-$$(nproc 2>/dev/null || echo 2)} \
	$(BIN)/python -m pip install --progress-bar off -e '.[dev]'
ifneq ($(GPU),cpu)
	@echo ">> Rebuilding llama-cpp-python with $(CMAKE_ARGS_$(GPU))"
	CMAKE_ARGS="$(CMAKE_ARGS_$(GPU))" $(BIN)/python -m pip install --progress-bar off \
		--force-reinstall --no-deps --no-cache-dir --no-binary llama-cpp-python \
		llama-cpp-python==$(LLAMA_CPP_VERSION)
endif
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

model: $(STAMP)
	$(BIN)/maskscope setup

run: setup sysdeps
	$(BIN)/maskscope gui

# Installs the window's system libraries with apt where they are missing (root or sudo);
# elsewhere it only names them. Tests run offscreen and do not need them.
sysdeps:
	@if command -v dpkg-query >/dev/null 2>&1; then \
		missing=""; \
		for p in $(QT_XCB_DEBS) $(EXTRA_DEBS); do \
			dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
		done; \
		if [ -n "$$missing" ]; then \
			echo ">> Installing system libraries for Qt:$$missing"; \
			if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
			$$SUDO apt-get install -y $$missing || { $$SUDO apt-get update && $$SUDO apt-get install -y $$missing; } \
				|| echo ">> Could not install:$$missing. The window may not open without them."; \
		fi; \
	fi

test: setup
	$(BIN)/ruff check .
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q

bench: setup
	QT_QPA_PLATFORM=offscreen $(BIN)/maskscope bench

lint: $(STAMP)
	$(BIN)/ruff check .
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

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache *.egg-info
