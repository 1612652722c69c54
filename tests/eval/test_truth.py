"""Scores against the truth: agents that know the answer score full marks, others what they earn."""

from __future__ import annotations

import numpy as np
import pytest

from trapy_rl.agents import parse_agent
from trapy_rl.eval.truth import (
    Share,
    score_agent,
    swap_decisions,
    truth_sides,
    value_signs,
    won_kept,
)
from trapy_rl.game import BatchGame, Board
from trapy_rl.solve.openings import load_openings
from trapy_rl.solve.positions import load_test_set


class Oracle:
    """Plays a winning move from the test set's answers (or the table's second move); values
    each position by its known result. ``wrong`` flips every answer."""

    def __init__(self, test_set, table, *, wrong: bool = False) -> None:
        self.name = "oracle"
        self.wrong = wrong
        board = test_set.board
        self.moves = {}
        self.values = {}
        for position in test_set.positions:
            state = position.state(board)
            key = state.stones.tobytes(), state.to_move
            losing = [a for a in state.legal_actions() if a not in position.winning]
            good = position.winning or losing
            self.moves[key] = (losing or good)[0] if wrong else good[0]
            self.values[key] = 1.0 if position.win != wrong else -1.0
        for name, cell in table["cells"].items():
            stones = np.zeros(board.num_cells, dtype=np.int8)
            stones[board.parse_action(name)] = 1
            swap = cell["stone_wins"] != wrong
            reply = next(c for c in range(board.num_cells) if stones[c] == 0)
            self.moves[stones.tobytes(), 2] = board.swap_action if swap else reply

    def act(self, batch: BatchGame, games: np.ndarray) -> np.ndarray:
        return np.array([self.moves[self._key(batch, g)] for g in games], dtype=np.int64)

    def evaluator(self, batch: BatchGame, games: np.ndarray):
        values = np.array([self.values[self._key(batch, g)] for g in games], dtype=np.float32)
        return np.zeros((len(games), batch.board.num_actions), np.float32), values

    @staticmethod
    def _key(batch, game):
        return batch.stones[game].astype(np.int8).tobytes(), int(batch.to_move[game])


@pytest.fixture(scope="module")
def side4():
    return load_test_set(4), load_openings(4)


def test_an_agent_that_knows_the_answers_scores_every_one(side4):
    test_set, table = side4
    oracle = Oracle(test_set, table)
    won = sum(p.win for p in test_set.positions)
    assert won_kept(oracle, test_set) == Share(won, won)
    assert swap_decisions(oracle, table) == (Share(22, 22), ())
    assert value_signs(oracle.evaluator, test_set) == Share(300, 300)
    score = score_agent(oracle, 4)
    assert score.metrics() == {"truth/won_kept": 1.0, "truth/value_sign": 1.0, "truth/swaps": 1.0}


def test_an_agent_wrong_everywhere_scores_nothing(side4):
    test_set, table = side4
    liar = Oracle(test_set, table, wrong=True)
    # A won position where every legal move wins cannot be lost: those count as kept.
    every_move_wins = sum(
        p.win and len(p.winning) == len(p.state(test_set.board).legal_actions())
        for p in test_set.positions
    )
    assert won_kept(liar, test_set).hits == every_move_wins
    share, wrong = swap_decisions(liar, table)
    assert share == Share(0, 22) and len(wrong) == 22
    assert value_signs(liar.evaluator, test_set) == Share(0, 300)


def test_swapping_always_is_right_exactly_where_the_stone_wins(side4):
    _, table = side4

    class AlwaysSwap:
        name = "swap"

        def act(self, batch, games):
            return np.full(len(games), batch.board.swap_action, dtype=np.int64)

    share, wrong = swap_decisions(AlwaysSwap(), table)
    stone_wins = [n for n, c in table["cells"].items() if c["stone_wins"]]
    assert share.hits == len(stone_wins) == 8
    assert set(wrong) == set(table["cells"]) - set(stone_wins)


def test_a_search_agent_is_scored_on_its_root_values_too():
    board = Board(4)
    score = score_agent(parse_agent("uct:64", board=board, seed=0), 4)
    assert score.value_sign is not None and score.value_sign.total == 300
    assert score.won_kept.rate > 0.6  # rollout search keeps most of side 4's won positions
    random = score_agent(parse_agent("random", board=board, seed=0), 4)
    assert random.value_sign is None  # no value to read
    assert random.won_kept.rate < score.won_kept.rate
    assert "won kept" in str(score) and "swap decisions" in str(score)


def test_an_unsolved_side_is_refused():
    assert truth_sides() == [4, 5]
    with pytest.raises(ValueError, match="side 6: no exact values ship"):
        score_agent(parse_agent("random", board=Board(6)), 6)
