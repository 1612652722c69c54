"""OpenSpiel's own AlphaZero trains on trap_y: the run that docs/interfaces.md shows, word for word;
and, with --runslow, the peer benchmark of benchmarks/peers/openspiel_alphazero.py on side 3.

The run is a separate Python process: OpenSpiel's ``alpha_zero`` module sets the process's
multiprocessing start method to ``spawn`` and patches it for good when imported, which must not
reach the other tests of the worker. The learner runs in that process and its one actor in a
process it spawns, which receives the game by pickle.
"""

import json
import os
import re
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

from trapy_rl.game import Board, GameState

ROOT = Path(__file__).resolve().parents[2]
NEEDED = ("pyspiel", "jax", "flax", "optax", "chex", "orbax.checkpoint")

pytestmark = pytest.mark.skipif(
    any(find_spec(module.split(".")[0]) is None for module in NEEDED),
    reason="needs the alphazero extra (pip install 'trapy-rl[alphazero]')",
)


def python(*args: str, cwd: Path, timeout: float) -> subprocess.CompletedProcess:
    """``python ARGS`` in its own process, warnings off; it must succeed."""
    done = subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


def docs_alphazero_run() -> str:
    """The Python block of docs/interfaces.md that calls ``alpha_zero.alpha_zero``."""
    text = (ROOT / "docs" / "interfaces.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    runs = [block for block in blocks if "alpha_zero.alpha_zero(config)" in block]
    assert len(runs) == 1, "docs/interfaces.md shows one AlphaZero run"
    return runs[0]


@pytest.mark.slow  # ~30 s of OpenSpiel's training
def test_openspiel_alphazero_trains_on_trap_y(tmp_path):
    script = tmp_path / "train_alphazero.py"
    script.write_text(docs_alphazero_run())
    python(script.name, cwd=tmp_path, timeout=600)
    run = tmp_path / "az-trap-y"
    config = json.loads((run / "config.json").read_text())
    assert config["game"] == "trap_y(side=3,layout=hwc,turn_plane=true)"
    # OpenSpiel fills the network's shapes in from the game: channels last, the turn plane last.
    assert config["observation_shape"] == [3, 5, 10] and config["output_size"] == 13

    # Two learner steps, each on fresh positions, each saving a checkpoint.
    steps = [json.loads(line) for line in (run / "learner.jsonl").read_text().splitlines()]
    assert [step["step"] for step in steps] == [1, 2]
    assert 0 < steps[0]["total_states"] < steps[1]["total_states"]
    assert all(step["loss"]["policy"] > 0 for step in steps)
    assert (run / "checkpoint-1").is_dir() and (run / "checkpoint-2").is_dir()

    # The actor's games are legal Trap Y games whose returns are the engine's winner. Whether the
    # actor also loads checkpoint 1 is a race it may lose on a busy machine: it reads only the
    # last message between games, and the learner may have every state for step 2 queued already.
    actor_log = (run / "log-actor-0.txt").read_text()
    board = Board(3)
    games = re.findall(r"Game \d+: Returns: (\S+) (\S+); Actions: (.*)", actor_log)
    assert games
    for blue, yellow, actions in games:
        state = GameState(board)
        for name in actions.split():
            state.play(state.check_move(board.parse_action(name)))
        assert state.is_over
        assert (float(blue), float(yellow)) == ((1.0, -1.0) if state.winner == 1 else (-1.0, 1.0))

    # The learner's last checkpoint loads into a net built from the run's shapes and plays.
    done = python("-c", LOAD_AND_PLAY, str(ROOT), str(run), cwd=tmp_path, timeout=300)
    assert done.stdout.split() == ["played", "2"]


LOAD_AND_PLAY = """
import sys
from pathlib import Path

sys.path.insert(0, str(Path(sys.argv[1]) / "benchmarks" / "peers"))
import openspiel_alphazero as peer

from trapy_rl.agents import parse_agent
from trapy_rl.eval.arena import play_match
from trapy_rl.game import Board

board = Board(3)
learned = peer.agent(Path(sys.argv[2]), 2, simulations=4)
result = play_match(learned, parse_agent("random", board=board, seed=0), num_games=2, board=board,
                    seed=0)
print("played", result.games)
"""


PEER_CHECK = """
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(sys.argv[1]) / "benchmarks" / "peers"))
from open_spiel.python.algorithms.alpha_zero import model_nnx

eager = model_nnx.Model.inference  # before the benchmark replaces it
import openspiel_alphazero as peer

from trapy_rl.eval.arena import play_match
from trapy_rl.agents import parse_agent
from trapy_rl.game import Board

if __name__ == "__main__":
    run = Path(sys.argv[2])
    last = peer.train(run, cpu_minutes=0.1, side=3, replay_buffer_size=256)
    assert last["step"] >= 1 and last["positions"] > 0 and last["cpu_seconds"] > 0
    peer_agent = peer.agent(run, last["step"], simulations=8)
    model = peer_agent.bots[0].evaluator._model
    state = peer_agent.game.new_initial_state()
    rng = np.random.default_rng(0)
    while not state.is_terminal():  # the jitted inference is OpenSpiel's, to float precision
        obs, mask = np.asarray(state.observation_tensor()), np.asarray(state.legal_actions_mask())
        value, policy = eager(model, obs, mask)
        jit_value, jit_policy = peer.jitted_inference(model, obs, mask)
        assert np.allclose(value, jit_value, atol=1e-5)
        assert np.allclose(policy, jit_policy, atol=1e-6)
        state.apply_action(int(rng.choice(state.legal_actions())))
    board = Board(3)
    result = play_match(peer_agent, parse_agent("random", board=board, seed=0), num_games=2,
                        board=board, seed=0)
    assert result.games == 2
    print("ok", last)
"""


@pytest.mark.slow
def test_the_peer_benchmark_trains_counts_and_plays(tmp_path):
    """benchmarks/peers/openspiel_alphazero.py on side 3: it stops once its budget is spent, says
    what it counted, its inference is OpenSpiel's, and a checkpoint plays in the arena."""
    script = tmp_path / "peer_check.py"
    script.write_text(PEER_CHECK)
    python(script.name, str(ROOT), str(tmp_path / "run"), cwd=tmp_path, timeout=900)
    budget = [json.loads(line) for line in (tmp_path / "run" / "budget.jsonl").open()]
    # 0.1 CPU-minutes is spent before the first step ends (start-up alone costs more): one step.
    assert len(budget) == 1 and budget[0]["cpu_seconds"] >= 6
    rated = rate_openspiel(
        f"agents=[openspiel-az:{tmp_path / 'run'}:{budget[0]['step']}:8]",
        "baselines=[random]",
        "mode=baselines",
        "games=2",
        "side=3",
        f"out={tmp_path / 'eval'}",
    )
    assert rated.returncode == 0, rated.stdout[-3000:] + rated.stderr[-3000:]
    ratings = json.loads((tmp_path / "eval" / "ratings.json").read_text())
    assert f"openspiel-az:{tmp_path / 'run'}:1:8" in json.dumps(ratings)


def rate_openspiel(*overrides: str) -> subprocess.CompletedProcess:
    """``python -m benchmarks.peers.rate_openspiel OVERRIDES`` from the repository root."""
    return subprocess.run(
        [sys.executable, "-m", "benchmarks.peers.rate_openspiel", *overrides],
        cwd=ROOT,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_an_openspiel_az_spec_without_its_checkpoint_is_one_line(tmp_path):
    """The peer's agent kind names the missing checkpoint in one line, as every spec does."""
    (tmp_path / "config.json").write_text("{}")
    done = rate_openspiel(
        f"agents=[openspiel-az:{tmp_path}:7:200]",
        "baselines=[random]",
        "mode=baselines",
        f"out={tmp_path / 'eval'}",
    )
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert lines == [
        f"trapy-eval: error: agent spec 'openspiel-az:{tmp_path}:7:200': {tmp_path} has no "
        "checkpoint of step 7"
    ]
