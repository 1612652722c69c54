# Set-up and the two main jobs. Both create or reuse .venv and install from this repo's files.
#   make test                      the fast suite (slow experiments: make test-slow)
#   make train                     a short real training run of the default config
#   make long-run                  the documented two-hour run and its strength table
#   make test TORCH=torch==2.14.1  another torch build
PYTHON ?= python3
VENV ?= .venv
TORCH ?= torch==2.13.0
PY := $(VENV)/bin/python
# The stamp names the torch requirement, so changing TORCH reinstalls.
STAMP := $(VENV)/.installed-$(shell printf '%s' '$(TORCH)' | cksum | cut -d' ' -f1)

.PHONY: venv browser test test-slow train long-run ablation bench lint clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# The torch pin first: a bare 'torch' requirement would pull a multi-GB CUDA build.
	$(PY) -m pip install -q "$(TORCH)"
	# The extras of the optional interfaces, whose tests are part of the suite.
	$(PY) -m pip install -q -e ".[dev,pettingzoo,openspiel,onnx,web]"
	rm -f $(VENV)/.installed-*
	touch $@

# The web board's browser tests drive Debian's chromium: installed here where apt-get can (as
# root), else those tests are skipped and say why.
browser:
	@command -v chromium >/dev/null || { command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] \
		&& apt-get install -y -q chromium >/dev/null; } || echo "chromium not installed"

test: venv browser
	$(PY) -m pytest -n 2

test-slow: venv
	$(PY) -m pytest -n 2 --runslow

train: venv
	$(VENV)/bin/trapy-train

# Trap Y (side 10) with today's recipe (experiment=side10) for two hours of training clock, a
# checkpoint every 300 iterations kept; then every checkpoint rated on the side-10 pool's four
# cheaper members (the Elo-against-minutes curve, about 5 minutes a checkpoint) and the last
# one on the whole pool, uct:5000 included. BENCHMARKS.md has the figures.
LONG_RUN ?= outputs/long-run
LONG_RUN_MINUTES ?= 120
long-run: venv
	$(VENV)/bin/trapy-train experiment=side10 iterations=1000000 minutes=$(LONG_RUN_MINUTES) \
		checkpoint.every=300 checkpoint.keep=0 hydra.run.dir=$(LONG_RUN)
	$(VENV)/bin/trapy-eval run=$(LONG_RUN) mode=benchmark "pool_members=[random,uct:30,uct:200,uct:1000]" \
		num_simulations=200 games=40 out=$(LONG_RUN)/curve
	$(VENV)/bin/trapy-eval run=$(LONG_RUN) mode=benchmark "checkpoints=[-1]" \
		num_simulations=200 games=40 out=$(LONG_RUN)/final

# Training settings at equal wall-clock on side 10, two runs at a time, each rated on the
# side-10 pool: ABLATION_MINUTES per run (the table goes to outputs/ablation/ablation.md).
ABLATION_MINUTES ?= 30
ablation: venv
	$(PY) scripts/ablation.py --minutes $(ABLATION_MINUTES)

bench: venv
	$(PY) scripts/bench.py

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
