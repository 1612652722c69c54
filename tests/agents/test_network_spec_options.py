"""The network agents' spec options of the one-game search: leaves and onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from trapy_rl.agents.kinds import parse_agent
from trapy_rl.game import BatchGame, Board
from trapy_rl.nn.folded import FoldedNet
from trapy_rl.nn.ort_net import OrtNet


def test_leaves_and_onnxruntime_options():
    pytest.importorskip("onnxruntime")
    board = Board(10)
    default = parse_agent("mcts:pretrained:32", board=board, seed=0)
    assert default.settings.leaves == 0 and default.settings.leaves_per_game(1) == 16
    assert default.settings.virtual == "visits"
    assert isinstance(default.evaluator.forward, OrtNet)  # auto: ONNX Runtime when installed
    chosen = parse_agent("mcts:pretrained:32,leaves=4,onnxruntime=false", board=board, seed=0)
    assert chosen.settings.leaves == 4
    assert isinstance(chosen.evaluator.forward, FoldedNet)
    batch = BatchGame(1, board)
    batch.step(np.array([40]))
    for agent in (default, chosen):
        action = int(agent.act(batch, np.array([0]))[0])
        assert batch.legal_mask()[0, action]
    with pytest.raises(ValueError, match="onnxruntime='maybe' is not true, false or auto"):
        parse_agent("net:pretrained,onnxruntime=maybe", board=board)
    with pytest.raises(ValueError, match="leaves must be >= 0"):
        parse_agent("mcts:pretrained:32,leaves=-2", board=board)
