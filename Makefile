# The two commands of the README: `make book` (the main job) and `make test`.
# Both create .venv and install the locked environment into it.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SHARED_DATA := $(abspath ../shared/data)
export DKM_DATA_HOME ?= $(SHARED_DATA)
export PYTHONHASHSEED := 0
export TF_CPP_MIN_LOG_LEVEL := 2
# The package does not use Keras: its tests, their subprocesses and the chapters' kernels start
# TensorFlow without it, as `python -m dkm` does (dkm.cli; about 5 s less per process).
export TF_USE_LEGACY_KERAS := 1

.PHONY: book test venv lock clean

# The environment is requirements.lock: every package `make test` and `make book` install, at the
# exact version the committed records were made with, with its hashes. `make lock` writes it from
# pyproject.toml (keeping the versions it already pins that still satisfy pyproject.toml); the
# README says when to run it and what a new version does to the records.
LOCK := requirements.lock
# uv installs the lock (a fresh environment in about half pip's time); it lives beside the
# environment, not in it, so that the environment holds the lock's packages and no other.
# pip takes over where uv cannot be installed.
UV_VERSION := 0.13.9
UV := $(VENV)/.tools/bin/uv

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(UV): | $(BIN)/python
	$(BIN)/pip install --quiet --target $(VENV)/.tools uv==$(UV_VERSION) || true

# Brings a fresh or an existing .venv to the lock (uv also removes what the lock does not name),
# then installs the package itself, editable, without dependencies. The installed modules are
# compiled to bytecode once, here: where PYTHONDONTWRITEBYTECODE is set, every process would
# otherwise compile TensorFlow's 3,000 modules again (`import tensorflow` 14.4 s, 5.0 s compiled,
# on an AMD EPYC of family 25), every test that starts one and every chapter's kernel included.
$(VENV)/.synced: $(LOCK) pyproject.toml Makefile | $(UV)
	if [ -x $(UV) ]; then \
	    $(UV) pip sync --quiet --compile-bytecode --require-hashes --python $(BIN)/python $(LOCK) \
	    && $(UV) pip install --quiet --compile-bytecode --no-deps --no-build-isolation \
	        --python $(BIN)/python -e . ; \
	else \
	    $(BIN)/pip install --quiet --require-hashes --no-deps -r $(LOCK) \
	    && $(BIN)/pip install --quiet --no-deps --no-build-isolation -e . ; \
	fi
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null 2>&1 || true
	touch $@

venv: $(VENV)/.synced

lock: | $(UV)
	$(UV) pip compile pyproject.toml --extra book --extra test --generate-hashes \
	    --python-version 3.11 --python-platform x86_64-manylinux_2_28 \
	    --custom-compile-command "make lock" --quiet --output-file $(LOCK)

# Two workers on two cores: one thread each for OpenMP (scikit-learn, BLAS) and TensorFlow, which
# otherwise spin against each other (the same tests took about 15 % longer).
test: $(VENV)/.synced
	OMP_NUM_THREADS=1 TF_NUM_INTRAOP_THREADS=1 TF_NUM_INTEROP_THREADS=1 \
	    $(BIN)/python -m pytest -q -n 2 --dist loadfile

# One TensorFlow thread, as the tests have: the chapters' small runs then give the same bits on
# any number of cores (a digits fit's can change with the thread count, benchmarks/logs/reproducible-arithmetic.md).
book: $(VENV)/.synced
	TF_NUM_INTRAOP_THREADS=1 $(BIN)/jupyter-book build . -W --keep-going

clean:
	rm -rf _build .pytest_cache
