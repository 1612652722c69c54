"""scripts/after_swap.py: games from a few first moves after the swap or at the decision."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from tiny import write_tiny_checkpoint

from trapy_rl.game import YELLOW, Board, GameState

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture
def after_swap():
    spec = importlib.util.spec_from_file_location("after_swap", SCRIPTS / "after_swap.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_two_positions_and_the_owner_s_wins(after_swap, tmp_path, monkeypatch):
    board = Board(3)
    net = write_tiny_checkpoint(tmp_path / "net.pt", side=3, seed=0)
    spec = f"mcts:{net}:2,noise=true,temperature_moves=12"
    cells = np.array([0, 0, 4, 4, 4])
    seen = []
    real_play_from = after_swap.play_from

    def watching(games, first, second):
        seen.append((games.stones.copy(), games.to_move.copy(), games.swap_allowed.copy()))
        return real_play_from(games, first, second)

    monkeypatch.setattr(after_swap, "play_from", watching)
    wins = after_swap.owner_wins(spec, spec, board, cells, decision=True, seed=0)
    stones, to_move, swap_allowed = seen[0]
    for game, cell in enumerate(cells):  # a lone blue stone on the cell, yellow to move
        expected = GameState(board)
        expected.play(int(cell))
        np.testing.assert_array_equal(stones[game], expected.stones)
        assert to_move[game] == YELLOW and swap_allowed[game]
    assert wins.shape == (board.num_cells,) and wins[0] <= 2 and wins[4] <= 3
    assert wins.sum() == wins[[0, 4]].sum()
    after = after_swap.owner_wins(spec, spec, board, cells, decision=False, seed=0)
    assert after.sum() == after[[0, 4]].sum() and after[0] <= 2 and after[4] <= 3


def test_the_script_prints_each_cell_and_refuses_an_unknown_one(after_swap, tmp_path, capsys):
    net = write_tiny_checkpoint(tmp_path / "net.pt", side=3, seed=0)
    after_swap.main([str(net), "--side", "3", "--cells", "a1", "b2", "--games", "2",
                     "--simulations", "2"])  # fmt: skip
    out = capsys.readouterr().out
    assert "after the swap, 2 games a cell:" in out and "  a1: " in out and "  b2: " in out
    assert "the owner won " in out and "/4 = " in out
    with pytest.raises(SystemExit):
        after_swap.main([str(net), "--side", "3", "--cells", "zz"])
    assert "no cell 'zz'" in capsys.readouterr().err
