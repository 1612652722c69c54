"""One game, one move: how fast an agent answers, before and after, and the net per batch size.

    python scripts/bench.py onegame                      # against the default baseline
    python scripts/bench.py onegame --baseline 5c9f303   # any commit
    TRAPY_BENCH_BASELINE=HEAD~3 python scripts/bench.py onegame --quick

The baseline's code runs from a temporary ``git worktree`` of that commit, the current code
from this checkout, each agent in its own fresh process (``python -c``, the tree first on
``sys.path``; the probe checks which ``trapy_rl`` it imported). The two alternate, round after
round, so that both see the same machine. Each process builds the agent from its spec, moves
once to warm up (loading the net, compiling kernels), then answers one side-10 position after
another (``PLIES`` random moves in, seeded), one move each; the figure is the median over every
timed move of all rounds, as simulations per second, and the ratio is of median seconds a move.
torch runs on one thread in every process (ONNX Runtime and numba use one anyway): on a
machine whose cores are busy, torch's default of one thread per core spends a move spinning
(the baseline's ``mcts:pretrained:200`` took 40 s a move so, against 1.5 s on one thread: the
net rows show why), which would flatter the ratio; one thread is the baseline's best setting.

The net rows time the shipped net alone, in this process, at the batch sizes one game's search
sends: torch's folded forward on 1 and 2 threads and ONNX Runtime on one.

Default baseline: 5c9f303, the commit before the compiled, leaf-parallel search.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "5c9f303"
PLIES = 10

# Runs inside the tree under test: only the public API both old and new code have.
PROBE = r"""
import json, sys, time
import numpy as np
spec, plies, positions, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
if threads != "default":
    import torch
    torch.set_num_threads(int(threads))
import trapy_rl
from trapy_rl.agents.kinds import parse_agent
from trapy_rl.game import BatchGame, Board
from trapy_rl.game.sampling import random_legal_actions

board = Board(10)

def position(seed):
    rng = np.random.default_rng(seed)
    while True:
        batch = BatchGame(1, board)
        for _ in range(plies):
            batch.step(random_legal_actions(batch.legal_mask(), rng))
        if not batch.is_over.any():
            return batch

agent = parse_agent(spec, board=board, seed=0)
games = np.array([0])
agent.act(position(10_000), games)  # warm-up: the net, compiled kernels, allocations
times = []
for seed in range(positions):
    batch = position(seed)
    start = time.perf_counter()
    agent.act(batch, games)
    times.append(time.perf_counter() - start)
print(json.dumps({"times": times, "module": trapy_rl.__file__}))
"""


def probe(tree: Path, spec: str, *, positions: int, threads: str = "1") -> list[float]:
    """Seconds a move of ``spec`` on ``positions`` positions, by the code in ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, "-c", PROBE, spec, str(PLIES), str(positions), threads]
    done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{spec} in {tree} failed:\n{done.stderr[-2000:]}")
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    if not Path(answer["module"]).resolve().is_relative_to(tree.resolve()):
        raise RuntimeError(f"the probe imported {answer['module']}, not the tree {tree}")
    return answer["times"]


@contextlib.contextmanager
def worktree(ref: str) -> Iterator[Path]:
    """A temporary detached ``git worktree`` of ``ref``, removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="trapy-baseline-"))
    git = ["git", "-C", str(ROOT)]
    subprocess.run([*git, "worktree", "add", "--detach", str(folder), ref], check=True,
                   capture_output=True)  # fmt: skip
    try:
        yield folder
    finally:
        subprocess.run([*git, "worktree", "remove", "--force", str(folder)], check=False,
                       capture_output=True)  # fmt: skip


def commit_of(ref: str) -> str:
    done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", ref],
                          check=True, capture_output=True, text=True)  # fmt: skip
    return done.stdout.strip()


def simulations(spec: str) -> int:
    """The simulations a move of ``mcts:PATH:N[,...]`` or ``uct:N[,...]``."""
    return int(spec.split(",")[0].rsplit(":", 1)[1])


def move_rows(*, quick: bool, baseline: str) -> list[dict]:
    """Before and after, alternating; the after variants show where the gain comes from."""
    net_sims, uct_sims = (200, 1000) if quick else (800, 5000)
    cases = [f"mcts:pretrained:{net_sims}", f"uct:{uct_sims}"]
    variants = [
        f"mcts:pretrained:{net_sims}",
        f"mcts:pretrained:{net_sims},leaves=1",
        f"mcts:pretrained:{net_sims},onnxruntime=false",
        f"uct:{uct_sims}",
        f"uct:{uct_sims},leaves=1",
    ]
    if quick:
        variants = [variants[0], variants[3]]
    rounds, positions = (1, 2) if quick else (2, 2)
    before: dict[str, list[float]] = {spec: [] for spec in cases}
    after: dict[str, list[float]] = {spec: [] for spec in variants}
    label = commit_of(baseline)
    with worktree(baseline) as old:
        for _ in range(rounds):
            for spec in cases:
                before[spec] += probe(old, spec, positions=positions)
            for spec in variants:
                after[spec] += probe(ROOT, spec, positions=positions)
    rows = []
    note = f"side 10, {PLIES} plies in, median of {rounds * positions} moves"
    for spec, times in after.items():
        median = statistics.median(times)
        rate = simulations(spec) / median
        rows.append(_row(f"one game, {spec}, now", rate, "sims/s", f"{median:.3f} s; {note}"))
    for spec, times in before.items():
        median = statistics.median(times)
        rate = simulations(spec) / median
        rows.append(
            _row(f"one game, {spec}, before ({label})", rate, "sims/s", f"{median:.3f} s; {note}")
        )
        ratio = median / statistics.median(after[spec])
        rows.append(_row(f"one game, {spec}: before ({label}) / now", ratio, "x", "median s"))
    return rows


def _row(name: str, value: float, unit: str, note: str) -> dict:
    return {"name": name, "value": value, "unit": unit, "note": note}


def net_rows(*, quick: bool) -> list[dict]:
    """The shipped net's positions per second at the batch sizes of one game's search."""
    import torch

    from trapy_rl.game import BatchGame, Board
    from trapy_rl.game.sampling import random_legal_actions
    from trapy_rl.nn import NetEvaluator
    from trapy_rl.nn.checkpoint import load_network
    from trapy_rl.pretrained import pretrained_file

    net, _ = load_network(pretrained_file("pretrained"), device=torch.device("cpu"))
    rng = np.random.default_rng(0)
    batch = BatchGame(64, Board(10))
    for _ in range(PLIES):
        batch.step(random_legal_actions(batch.legal_mask(), rng))
    paths = {"torch folded": NetEvaluator(net, device="cpu")}
    try:
        paths["onnxruntime"] = NetEvaluator(net, device="cpu", onnxruntime=True)
    except ValueError:  # the [onnx] extra is not installed
        pass
    sizes = (1, 16, 64) if quick else (1, 4, 8, 16, 32, 64)
    threads_before = torch.get_num_threads()
    rows = []
    try:
        for name, evaluator in paths.items():
            for threads in (1, 2) if name.startswith("torch") else (1,):
                torch.set_num_threads(threads)
                for n in sizes:
                    games = np.arange(n)
                    evaluator(batch, games)
                    calls = max(3, (100 if quick else 400) // n)
                    rates = []
                    for _ in range(3 if quick else 5):
                        start = time.perf_counter()
                        for _ in range(calls):
                            evaluator(batch, games)
                        rates.append(n * calls / (time.perf_counter() - start))
                    label = f"net, {name}, {threads} thread(s), batch {n}"
                    rate = statistics.median(rates)
                    rows.append(_row(label, rate, "positions/s", "the shipped net, with planes"))
    finally:
        torch.set_num_threads(threads_before)
    return rows


def run(quick: bool) -> list[dict]:
    baseline = os.environ.get("TRAPY_BENCH_BASELINE", BASELINE)
    return move_rows(quick=quick, baseline=baseline) + net_rows(quick=quick)
