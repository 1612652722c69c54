# Set-up and the two main jobs. Both create or reuse .venv and install from this repo's files.
#   make test                      the fast suite (slow experiments: make test-slow)
#   make train                     a short real training run of the default config
#   make test TORCH=torch==2.14.1  another torch build
PYTHON ?= python3
VENV ?= .venv
TORCH ?= torch==2.13.0
PY := $(VENV)/bin/python
# The stamp names the torch requirement, so changing TORCH reinstalls.
STAMP := $(VENV)/.installed-$(shell printf '%s' '$(TORCH)' | cksum | cut -d' ' -f1)

.PHONY: venv test test-slow train bench lint clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# The torch pin first: a bare 'torch' requirement would pull a multi-GB CUDA build.
	$(PY) -m pip install -q "$(TORCH)"
	$(PY) -m pip install -q -e ".[dev]"
	rm -f $(VENV)/.installed-*
	touch $@

test: venv
	$(PY) -m pytest -n 2

test-slow: venv
	$(PY) -m pytest -n 2 --runslow

train: venv
	$(VENV)/bin/trapy-train

bench: venv
	$(PY) scripts/bench.py

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
