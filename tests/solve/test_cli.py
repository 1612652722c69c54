"""``trapy-solve``: one line out, a winning move that wins; bad input refused in one line."""

from __future__ import annotations

import numpy as np
import pytest
from brute_force import BruteForce, late_positions

from trapy_rl.game import Board, GameState
from trapy_rl.launch import COMMANDS
from trapy_rl.solve import Solver
from trapy_rl.solve.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_:
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


def test_value_and_a_winning_move(capsys) -> None:
    code, out, err = run(capsys, "--side", "4", "b2", "swap", "c3")
    assert code == 0 and err == ""
    assert out.startswith("side 4, after b2 swap c3: yellow to move wins with ")
    move = out.split(" wins with ")[1].split()[0]
    state = GameState.from_moves(["b2", "swap", "c3", move], Board(4))
    assert not Solver(Board(4)).solve(state).win  # blue, to move after it, loses


def test_lost_positions_and_the_empty_board(capsys) -> None:
    code, out, _ = run(capsys, "--side", "3")
    assert code == 0 and out.startswith("side 3, empty board: blue to move loses")
    code, out, _ = run(capsys, "--side", "2", "b1")
    assert out.startswith("side 2, after b1: yellow to move wins with swap")
    code, out, _ = run(capsys, "--side", "3", "c1", "a1", "c2", "a2", "c3")
    assert code == 0 and out.rstrip().endswith("blue has won")


def test_late_side6_positions_agree_with_brute_force(capsys) -> None:
    brute = BruteForce()
    verdicts = []
    for state in late_positions(Board(6), 4, 11, np.random.default_rng(61)):
        code, out, _ = run(capsys, "--side", "6", *state.move_names())
        assert code == 0, out
        verdicts.append(" wins with " in out)
        assert verdicts[-1] == brute.wins(state), (state.move_names(), out)
        if verdicts[-1]:
            move = out.split(" wins with ")[1].split()[0]
            assert brute.move_wins(state, state.board.parse_action(move)), (out, move)
    assert len(set(verdicts)) == 2, verdicts  # won and lost positions both met


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--side", "4", "z9"], "move 1: 'z9' is not a cell of the side-4 board"),
        (["--side", "4", "b2", "b2"], "move 2: b2: the cell is occupied by blue"),
        (["--side", "4", "b2", "c3", "swap"], "move 3: swap: not allowed now"),
        (["--side", "7", "b2"], "side 7 is not solved here: trapy-solve takes sides 2 to 6"),
        (["--side", "6", "d3", "--max-nodes", "1000"], "not proven within 1,000 positions"),
        (["--side", "1"], "side 1 is not solved here"),
        (["--side", "5", "c3", "--max-nodes", "100"], "not proven within 100 positions"),
        (["--max-nodes", "0"], "--max-nodes must be"),
        (["--max-nodes", "inf"], "--max-nodes must be"),
        (["--max-nodes", "nan"], "--max-nodes must be"),
        (["--max-nodes", "1e400"], "--max-nodes must be"),
        (["--max-nodes", str(2**63)], "--max-nodes must be"),
        (["--max-nodes", "2.5"], "--max-nodes must be"),
        (["--max-nodes", "many"], "--max-nodes must be"),
        (["--side", "abc"], "--side"),
        (["--method", "guess"], "--method"),
    ],
)
def test_bad_input_is_one_line(capsys, argv: list[str], message: str) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    (first,) = err.splitlines()
    assert first.startswith("trapy-solve: error: ") and message in first, err
    assert "Traceback" not in err


def test_a_budget_past_what_the_search_counts_is_refused_by_the_api() -> None:
    state = GameState(Board(3))
    for budget in (2**63, -1, 0):
        with pytest.raises(ValueError, match="max_nodes"):
            Solver(Board(3)).solve(state, max_nodes=budget)


def test_runs_through_the_launcher() -> None:
    assert COMMANDS["trapy-solve"] == "trapy_rl.solve.cli"
