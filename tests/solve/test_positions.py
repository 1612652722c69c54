"""Solved test sets: every answer checked against plain minimax, and the shipped files read back."""

from __future__ import annotations

import json

import pytest
from brute_force import BruteForce

from trapy_rl.game import Board
from trapy_rl.solve import Solver
from trapy_rl.solve.positions import (
    draw_positions,
    load_test_set,
    make_test_set,
    read_test_set,
    solve_moves,
    write_test_set,
)


@pytest.mark.parametrize(("side", "empty"), [(3, 6), (3, 9), (4, 11)])
def test_every_winning_move_is_what_minimax_says(side, empty):
    board = Board(side)
    solver, oracle = Solver(board), BruteForce()
    for state in draw_positions(board, 12, empty, seed=side * 100 + empty):
        solved = solve_moves(solver, state)
        assert solved.win == oracle.wins(state)
        wins = tuple(a for a in state.legal_actions() if oracle.move_wins(state, a))
        assert solved.winning == wins


def test_positions_have_the_empty_cells_asked_for_and_are_distinct():
    board = Board(4)
    states = draw_positions(board, 30, 14, seed=1)
    assert all(int((s.stones == 0).sum()) == 14 and not s.is_over for s in states)
    keys = {(s.stones.tobytes(), s.to_move, s.swap_allowed) for s in states}
    assert len(keys) == 30
    with pytest.raises(ValueError, match="empty must be from 1 to 21"):
        draw_positions(board, 1, 22, seed=0)


def test_a_test_set_reads_back_as_written(tmp_path):
    made = make_test_set(3, 8, 7, seed=2)
    write_test_set(made, tmp_path / "set.json")
    read = read_test_set(tmp_path / "set.json")
    assert read.positions == made.positions and read.side == 3
    assert read.provenance["command"].startswith("python -m trapy_rl.solve.positions --side 3")


def test_a_damaged_file_is_refused_naming_it(tmp_path):
    made = make_test_set(3, 4, 7, seed=3)
    path = tmp_path / "set.json"
    write_test_set(made, path)
    data = json.loads(path.read_text())
    won = next(p for p in data["positions"] if p["win"])
    won["winning"] = [next(m for m in data["positions"][0]["moves"])]  # an occupied cell
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"set\.json: position .*does not fit"):
        read_test_set(path)
    path.write_text("{")
    with pytest.raises(ValueError, match="not a JSON file"):
        read_test_set(path)


@pytest.mark.parametrize("side", [4, 5])
def test_the_shipped_sets_hold_unfinished_positions_with_both_answers(side):
    test_set = load_test_set(side)
    assert len(test_set.positions) == 300
    won = sum(p.win for p in test_set.positions)
    assert 50 < won < 250  # both kinds, to score value signs and won positions kept
    assert test_set.provenance["command"].startswith("python -m trapy_rl.solve.positions")


@pytest.mark.slow  # minimax from 14 empty cells: minutes (the generator is checked above)
def test_shipped_side4_answers_agree_with_minimax():
    test_set, oracle = load_test_set(4), BruteForce()
    for position in test_set.positions[:40]:
        state = position.state(test_set.board)
        assert position.win == oracle.wins(state)
        assert position.winning == tuple(
            a for a in state.legal_actions() if oracle.move_wins(state, a)
        )


def test_no_set_for_an_unsolved_side():
    with pytest.raises(ValueError, match="no solved positions are shipped for side 10"):
        load_test_set(10)
