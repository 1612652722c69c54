"""scripts/swap_plane_map.py's premise: after c, swap the mover sees exactly the swap decision
after c, but for the swap plane; the script's encoding shows it that decision."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from trapy_rl.game import BatchGame, Board, GameState, encode_planes
from trapy_rl.game.planes import PLANE_NAMES

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "swap_plane_map.py"
SWAP = PLANE_NAMES.index("swap_allowed")


def load_script():
    spec = importlib.util.spec_from_file_location("swap_plane_map", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_position_after_the_swap_is_shown_as_the_swap_decision():
    board = Board(4)
    cell = 5
    decision, swapped, later = GameState(board), GameState(board), GameState(board)
    decision.play(cell)
    for state, moves in ((swapped, [cell, board.swap_action]), (later, [cell, 7])):
        for move in moves:
            state.play(move)
    batch = BatchGame.from_states([decision, swapped, later])
    plain = encode_planes(batch)
    others = [i for i in range(len(PLANE_NAMES)) if i != SWAP]
    np.testing.assert_array_equal(plain[0, others], plain[1, others])  # all but the swap plane
    assert plain[0, SWAP].any() and not plain[1, SWAP].any()
    shown = load_script().planes_with_swap_shown(batch)
    np.testing.assert_array_equal(shown[1], plain[0])  # after c, swap: the decision's planes
    np.testing.assert_array_equal(shown[[0, 2]], plain[[0, 2]])  # the others: unchanged
