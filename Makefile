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

.PHONY: run test bench lint format screenshot setup model clean

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

run: setup
	$(BIN)/maskscope gui

test: setup
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
screenshot: setup
	xvfb-run -a -s "-screen 0 1600x1000x24" $(BIN)/maskscope gui \
		--schema resources/examples/currency.schema.json \
		--prompt-file resources/examples/currency.prompt.txt \
		--autorun --screenshot docs/screenshot.png --quit-after-run

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache *.egg-info
