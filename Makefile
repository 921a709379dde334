# lapse: one front door over CMake (the one build definition).
#
#   make / make build   configure and build into build/ (Ninja if present, else Unix Makefiles)
#   make demo           run examples/c/pipeline.c under lapse and print its report
#   make install        install the lapse command, liblapse (.so, .a), liblapse_mpi, lapse.h
#                       and lapse.pc under PREFIX (default /usr/local) from an existing
#                       build: `make && sudo make install`
#   make test           unit tests (ctest) and the e2e suite, on the normal build and on
#                       an ASan+UBSan build in build-asan/, then the fuzz drivers (bounded): the
#                       .lapse file reader's and the CPython frame walker's
#   make bench          bench/run.sh, if present
#   make clean
#
# Any failure stops make with a non-zero status.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build
# Steps run in the order written; each build is parallel inside CMake.
.NOTPARALLEL:

BUILD_DIR ?= build
ASAN_DIR ?= build-asan
PYTHON ?= python3
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
GENERATOR ?= $(if $(shell command -v ninja 2>/dev/null),Ninja,Unix Makefiles)
CMAKE_ARGS ?=
FUZZ_SECONDS ?= 20
FUZZ_FRAMES_SECONDS ?= 10
DEMO_DIR ?= lapse-runs/demo
# pytest for the e2e suite lives in a venv of its own (no pip install into the system's
# Python, which Debian refuses: PEP 668)
TOOLS_VENV ?= build-py/venv-tools
PYTEST ?= $(TOOLS_VENV)/bin/python -m pytest tests/e2e -q --import-mode=prepend -p no:cacheprovider
CTEST_TIMEOUT ?= 120
CTEST ?= ctest --output-on-failure --no-tests=error --timeout $(CTEST_TIMEOUT)
# UBSan aborts on the first finding (-fno-sanitize-recover); say where it was.
SANITIZER_ENV ?= UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# $(call cmake_build,DIR,EXTRA CMAKE ARGS): configure (choosing the generator only for a
# new build directory; an existing one keeps its own) and build.
define cmake_build
	if [ -f $(1)/CMakeCache.txt ]; then \
	  cmake -S . -B $(1) $(2) $(CMAKE_ARGS); \
	else \
	  cmake -S . -B $(1) -G "$(GENERATOR)" $(2) $(CMAKE_ARGS); \
	fi
	cmake --build $(1) --parallel $(JOBS)
endef

# Every CPython >= 3.11 found (pyenv's, then PATH); the Python tests run on each.
PYTHONS ?= $(shell for v in 3.11 3.12 3.13 3.14; do \
	  for p in $$HOME/.pyenv/versions/$$v*/bin/python$$v $$(command -v python$$v 2>/dev/null); do \
	    [ -x "$$p" ] && { echo "$$p"; break; }; done; done)

PREFIX ?= /usr/local

.PHONY: all build build-asan demo install tools-venv test test-unit test-e2e test-asan test-python fuzz bench clean

all: build

build:
	$(call cmake_build,$(BUILD_DIR),)

build-asan:
	$(call cmake_build,$(ASAN_DIR),-DLAPSE_SANITIZE=ON)

demo: build
	rm -rf $(DEMO_DIR)
	LAPSE_PROFILE=1 LAPSE_RUN_DIR=$(DEMO_DIR) LAPSE_ROLE=driver $(BUILD_DIR)/example_pipeline
	$(BUILD_DIR)/lapse report $(DEMO_DIR)

# From the build that `make` made (as the user; `sudo make install` must not build as
# root into the user's tree). ldconfig when root installs into a system prefix.
install:
	if [ ! -f $(BUILD_DIR)/CMakeCache.txt ]; then echo "make install: run make first"; exit 1; fi
	cmake --install $(BUILD_DIR) --prefix $(PREFIX)
	if [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null 2>&1; then ldconfig; fi

test: test-unit test-e2e test-python test-asan fuzz
	@echo "make test: all passed"

test-unit: tools-venv build
	$(CTEST) --test-dir $(BUILD_DIR)

tools-venv:
	if [ ! -x $(TOOLS_VENV)/bin/python ]; then $(PYTHON) -m venv $(TOOLS_VENV); fi
	$(TOOLS_VENV)/bin/python -m pip install -q --disable-pip-version-check -r requirements-dev.txt

test-e2e: build tools-venv
	LAPSE_BUILD_DIR=$(BUILD_DIR) $(PYTEST)

test-python:
	if [ -z "$(strip $(PYTHONS))" ]; then echo "test-python: no CPython >= 3.11 found"; exit 1; fi
	for py in $(PYTHONS); do bash tests/python/run.sh "$$py"; done

test-asan: build-asan tools-venv
	$(SANITIZER_ENV) $(CTEST) --test-dir $(ASAN_DIR)
	$(SANITIZER_ENV) LAPSE_BUILD_DIR=$(ASAN_DIR) $(PYTEST)

fuzz: build-asan
	if [ -x $(ASAN_DIR)/fuzz_reader ]; then \
	  $(SANITIZER_ENV) $(ASAN_DIR)/fuzz_reader -t $(FUZZ_SECONDS); \
	else \
	  echo "fuzz: $(ASAN_DIR)/fuzz_reader is not built (no tests/fuzz/fuzz_reader.c): skipped"; \
	fi
	$(SANITIZER_ENV) $(ASAN_DIR)/fuzz_frames -t $(FUZZ_FRAMES_SECONDS)

bench: build
	if [ -f bench/run.sh ]; then \
	  bash bench/run.sh; \
	else \
	  echo "bench: no bench/run.sh"; \
	fi

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(DEMO_DIR) build-py
