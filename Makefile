# The two commands of the README: `make book` (the main job) and `make test`.
# Both create .venv and install the package with the extras they need.
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

.PHONY: book test venv clean

# uv resolves to the same versions as pip and installs in about half the time (a fresh test
# environment: 72 s against 135 s); pip takes over where uv cannot be installed or reach the index.
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet uv || $(BIN)/pip install --quiet --upgrade pip

# A stamp per extra: reinstall only when pyproject.toml (or this file) changes. The installed
# modules are compiled to bytecode once, here: where PYTHONDONTWRITEBYTECODE is set, every
# process would otherwise compile TensorFlow's 3,000 modules again (`import tensorflow` 14.4 s,
# 5.0 s compiled, on an AMD EPYC of family 25), every test that starts one and every chapter's
# kernel included. pip compiles by default.
$(VENV)/.installed-%: pyproject.toml Makefile | $(BIN)/python
	$(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python -e ".[$*]" \
	    || $(BIN)/pip install --quiet -e ".[$*]"
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null 2>&1 || true
	touch $@

venv: $(VENV)/.installed-test $(VENV)/.installed-book

# Two workers on two cores: one thread each for OpenMP (scikit-learn, BLAS) and TensorFlow, which
# otherwise spin against each other (the same tests took about 15 % longer).
test: $(VENV)/.installed-test
	OMP_NUM_THREADS=1 TF_NUM_INTRAOP_THREADS=1 TF_NUM_INTEROP_THREADS=1 \
	    $(BIN)/python -m pytest -q -n 2 --dist loadfile

# One TensorFlow thread, as the tests have: the chapters' small runs then give the same bits on
# any number of cores (a digits fit's can change with the thread count, benchmarks/README.md).
book: $(VENV)/.installed-book
	TF_NUM_INTRAOP_THREADS=1 $(BIN)/jupyter-book build . -W --keep-going

clean:
	rm -rf _build .pytest_cache
