"""The net exported to ONNX: the same outputs as torch, an agent that searches with it without
importing torch, and one-line errors."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from tiny import tiny_payload, write_tiny_checkpoint

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from trapy_rl.game import BatchGame, Board
from trapy_rl.game.planes import encode_planes
from trapy_rl.game.sampling import random_legal_actions
from trapy_rl.nn.onnx import OnnxEvaluator, export_onnx, main
from trapy_rl.train.checkpoint import save_checkpoint

SIDE = 5


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("onnx")
    checkpoint = write_tiny_checkpoint(folder / "net.pt", side=SIDE, seed=3)
    return checkpoint, export_onnx(checkpoint, folder / "net.onnx")


def positions(n: int, seed: int) -> BatchGame:
    rng = np.random.default_rng(seed)
    batch = BatchGame(n, side=SIDE)
    for _ in range(int(rng.integers(0, 12))):
        batch.step(random_legal_actions(batch.legal_mask(), rng))
    return batch


def test_outputs_equal_torch_within_1e4_at_every_batch_size(exported):
    from trapy_rl.nn import NetEvaluator
    from trapy_rl.nn.checkpoint import load_network

    checkpoint, model = exported
    torch_evaluator = NetEvaluator(load_network(checkpoint)[0], device="cpu")
    onnx_evaluator = OnnxEvaluator(model)
    assert onnx_evaluator.side == SIDE
    for n, seed in ((1, 0), (7, 1), (64, 2)):
        batch = positions(n, seed)
        games = np.arange(n)
        logits, values = onnx_evaluator(batch, games)
        expected_logits, expected_values = torch_evaluator(batch, games)
        legal = batch.legal_mask()
        np.testing.assert_array_equal(np.isneginf(logits), ~legal)
        np.testing.assert_allclose(logits[legal], expected_logits[legal], atol=1e-4, rtol=0)
        np.testing.assert_allclose(values, expected_values, atol=1e-4, rtol=0)
        planes_logits, _ = onnx_evaluator.evaluate_planes(encode_planes(batch), legal)
        np.testing.assert_array_equal(planes_logits, logits)


def test_the_onnx_agent_searches_without_importing_torch(exported):
    _, model = exported
    code = f"""
import sys
from trapy_rl.agents import parse_agent
from trapy_rl.eval import play_match
from trapy_rl.game import Board
board = Board({SIDE})
agent = parse_agent("onnx:{model}:16", board=board, seed=0)
match = play_match(agent, parse_agent("random", board=board, seed=1), num_games=2, board=board)
assert match.games == 2
assert "torch" not in sys.modules, "torch was imported"
print("ok", match.wins)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok")


def test_bad_models_and_sides_are_refused_in_one_line(exported, tmp_path):
    from trapy_rl.agents import parse_agent

    _, model = exported
    with pytest.raises(ValueError, match=r"exported for the side-5 board.*side 4"):
        parse_agent(f"onnx:{model}:8", board=Board(4))
    damaged = tmp_path / "bad.onnx"
    damaged.write_bytes(model.read_bytes()[:200])
    with pytest.raises(ValueError, match=r"bad\.onnx: not a readable ONNX model"):
        OnnxEvaluator(damaged)
    with pytest.raises(ValueError, match=r"nothing\.onnx: no such ONNX model file"):
        OnnxEvaluator(tmp_path / "nothing.onnx")


def test_trapy_export_command_line(exported, tmp_path, capsys):
    checkpoint, _ = exported
    assert main([str(checkpoint), str(tmp_path / "out.onnx")]) == 0
    assert "side 5" in capsys.readouterr().out
    (tmp_path / "bad.pt").write_bytes(b"garbage")
    with pytest.raises(SystemExit) as stop:
        main([str(tmp_path / "bad.pt"), str(tmp_path / "x.onnx")])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "bad.pt" in err and "Traceback" not in err


def test_exported_values_are_clipped_to_one(tmp_path):
    """The `onnx:` agent's values too (ONNX Runtime's tanh overshoots 1 a little below 9)."""
    payload = tiny_payload(side=SIDE, seed=3)
    state = payload["model"]["state"]
    state["value_mlp.2.weight"].zero_()
    state["value_mlp.2.bias"].fill_(8.99994)
    confident = save_checkpoint(tmp_path / "confident.pt", payload)
    evaluator = OnnxEvaluator(export_onnx(confident, tmp_path / "confident.onnx"))
    _, values = evaluator(positions(4, seed=1), np.arange(4))
    assert (np.abs(values) <= 1.0).all() and values.min() > 0.99
