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
	$(PY) -m pip install -q -e ".[dev,pettingzoo,openspiel,alphazero,peers,onnx,web,ray]"
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

# The default run: Trap Y (side 10), 8 minutes of training clock, then the closing matches
# against random and uct:1000; about 15 minutes on 2 cores. make train ARGS="seed=1 minutes=30"
ARGS ?=
train: venv
	$(VENV)/bin/trapy-train $(ARGS)

# Trap Y (side 10) with the CPU recipe (experiment=trapy_cpu) for two hours of training clock,
# a checkpoint every 150 iterations kept; then every checkpoint rated against uct:1000 (the
# Elo-against-minutes curve, about 4 minutes a checkpoint), the last one on the whole side-10
# pool (uct:5000 included), and the last one against the net of the earlier recipe trained for
# the same two hours (REFERENCE): 100 games from random first stones, colours exchanged.
# BENCHMARKS.md has the figures. Another seed: make long-run ARGS="seed=1" LONG_RUN=outputs/long-run-1
LONG_RUN ?= outputs/long-run
LONG_RUN_MINUTES ?= 120
REFERENCE ?= benchmarks/reference/side10_today_120min.pt
long-run: venv
	$(VENV)/bin/trapy-train experiment=trapy_cpu minutes=$(LONG_RUN_MINUTES) $(ARGS) hydra.run.dir=$(LONG_RUN)
	$(VENV)/bin/trapy-eval run=$(LONG_RUN) mode=benchmark every_member=true "pool_members=[uct:1000]" \
		num_simulations=200 games=40 out=$(LONG_RUN)/curve
	$(VENV)/bin/trapy-eval run=$(LONG_RUN) mode=benchmark "checkpoints=[-1]" \
		num_simulations=200 games=40 out=$(LONG_RUN)/final
	$(VENV)/bin/trapy-eval "agents=[mcts:$(LONG_RUN)/checkpoints/latest.pt:200,mcts:$(REFERENCE):200]" \
		games=100 starts=false openings=1 "baselines=[]" out=$(LONG_RUN)/vs_reference

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
	$(VENV)/bin/lint-imports

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
