"""Opening values: the exact representation, the estimators, the table, the cache."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from opening_oracle import exact_stone_values, mover_wins
from tiny import TINY_NET, write_tiny_checkpoint

import trapy_rl.analysis.openings as openings
from trapy_rl.agents import RandomAgent, RolloutEvaluator, RolloutMCTSAgent
from trapy_rl.analysis import (
    TABLE_COLUMNS,
    PlayoutJob,
    estimate_openings,
    mirror_average,
    mirror_pool,
    net_values,
    opening_table,
    play_from,
    playout_counts,
    refine_fairest,
    rollout_counts,
    search_values,
    swapped_openings,
)
from trapy_rl.analysis.openings import _unpool, read_opening_table, write_opening_table
from trapy_rl.eval import wilson_interval
from trapy_rl.game import BatchGame, Board
from trapy_rl.game.state import BLUE, YELLOW
from trapy_rl.mcts import SearchSettings
from trapy_rl.nn import NetEvaluator, PolicyValueNet


# ---------------------------------------------------------------------- the positions
@pytest.mark.parametrize("side", [2, 3, 5])
def test_swapped_openings_are_a_lone_yellow_stone_with_blue_to_move(side):
    board = Board(side)
    batch = swapped_openings(board)
    k = board.num_cells
    assert batch.num_games == k
    np.testing.assert_array_equal(batch.stones, np.eye(k, dtype=np.int8) * YELLOW)
    assert (batch.to_move == BLUE).all() and (batch.winner == 0).all()
    assert not batch.swap_allowed.any()
    assert not batch.legal_mask()[:, board.swap_action].any()


def test_the_swapped_position_is_the_lone_stone_with_colours_exchanged():
    # v(c) computed directly from "blue on c, yellow to move, no swap" (unreachable) equals
    # 1 - P(blue to move wins | c, swap), computed from the reachable position.
    board = Board(2)
    direct = exact_stone_values(board)
    batch = swapped_openings(board)
    via_swap = np.array(
        [0.0 if mover_wins(tuple(map(int, s)), BLUE, board) else 1.0 for s in batch.stones]
    )
    np.testing.assert_array_equal(direct, via_swap)
    assert set(direct) == {0.0, 1.0}  # side 2 has openings of both kinds


def test_search_agrees_with_the_exact_values_on_side_2():
    board = Board(2)
    exact = exact_stone_values(board)
    v = search_values(
        RolloutEvaluator(4, seed=0), board, settings=SearchSettings(num_simulations=400)
    )
    np.testing.assert_array_equal(v > 0.5, exact > 0.5)
    assert np.abs(v - exact).max() < 0.1


@pytest.mark.slow
def test_search_agrees_with_the_exact_values_on_side_3():
    board = Board(3)
    exact = exact_stone_values(board)  # about 15 s of brute force
    v = search_values(
        RolloutEvaluator(16, seed=0), board, settings=SearchSettings(num_simulations=20000)
    )
    np.testing.assert_array_equal(v > 0.5, exact > 0.5)


# ---------------------------------------------------------------------- the estimators
class CellValueEvaluator:
    """Value for the player to move = a known number per stone cell; counts its calls."""

    def __init__(self, board: Board, values: np.ndarray):
        self.board, self.values, self.calls = board, values, 0

    def __call__(self, batch: BatchGame, games: np.ndarray):
        self.calls += 1
        cells = np.argmax(batch.stones[games] != 0, axis=1)
        logits = np.where(batch.legal_mask()[games], 0.0, -np.inf).astype(np.float32)
        return logits, self.values[cells].astype(np.float32)


def test_net_values_turn_the_movers_value_into_the_stone_value_in_one_call():
    board = Board(4)
    mover = np.linspace(-1, 1, board.num_cells)
    evaluator = CellValueEvaluator(board, mover)
    v = net_values(evaluator, board)
    assert evaluator.calls == 1
    np.testing.assert_allclose(v, (1 - mover) / 2, atol=1e-6)


def test_mirror_averaged_net_values_agree_on_mirror_cells():
    torch.manual_seed(0)
    board = Board(4)
    net = PolicyValueNet(TINY_NET)
    evaluator = NetEvaluator(net, device="cpu")
    plain = net_values(evaluator, board)
    v = net_values(evaluator, board, mirror=True)
    np.testing.assert_array_equal(v, v[board.mirror_cells])
    np.testing.assert_allclose(v, (plain + plain[board.mirror_cells]) / 2)
    assert ((v >= 0) & (v <= 1)).all()


def test_mirror_pool_is_symmetric_and_keeps_axis_cells():
    board = Board(3)
    rng = np.random.default_rng(0)
    games = rng.integers(10, 20, board.num_cells)
    wins = rng.integers(0, 10, board.num_cells)
    pooled_wins, pooled_games = mirror_pool(wins, games, board)
    np.testing.assert_array_equal(pooled_wins, pooled_wins[board.mirror_cells])
    np.testing.assert_array_equal(pooled_games, pooled_games[board.mirror_cells])
    axis = board.mirror_cells == np.arange(board.num_cells)
    np.testing.assert_array_equal(pooled_games[axis], games[axis])
    np.testing.assert_array_equal(pooled_games[~axis], (games + games[board.mirror_cells])[~axis])
    np.testing.assert_allclose(mirror_average(np.arange(12.0), board)[axis], np.arange(12.0)[axis])


def test_rollout_counts_match_a_slow_playout_loop():
    # Each playout is a random fill; the slow version plays random games with GameState.
    board = Board(2)
    wins, games = rollout_counts(board, num_rollouts=4000, seed=1)
    assert (games == 4000).all()
    rng = np.random.default_rng(2)
    slow = np.zeros(board.num_cells)
    for cell in range(board.num_cells):
        for _ in range(250):
            state = swapped_openings(board).to_state(cell)
            while not state.is_over:
                state.play(int(rng.choice(state.legal_actions())))
            slow[cell] += state.winner == YELLOW  # the stone's owner
    # 250 slow games per cell: a 4.5-sigma band around the fast estimate.
    sigma = np.sqrt(0.25 / 250 + 0.25 / 4000)
    assert np.abs(slow / 250 - wins / games).max() < 4.5 * sigma


class RecordingAgent:
    """Plays the first empty cell; records the players it was asked to move for."""

    def __init__(self, name: str):
        self.name, self.players, self.resets = name, set(), 0

    def reset(self, games):
        self.resets += 1

    def act(self, batch, games):
        self.players |= set(batch.to_move[games].tolist())
        return np.argmax(batch.legal_mask()[games, :-1], axis=1).astype(np.int64)


def test_play_from_gives_the_first_agent_the_player_to_move():
    board = Board(3)
    positions = swapped_openings(board)
    first, second = RecordingAgent("first"), RecordingAgent("second")
    winners = play_from(positions, first, second)
    assert first.players == {BLUE} and second.players == {YELLOW}
    assert first.resets == second.resets == 1
    assert (positions.winner != 0).all()
    for game in range(positions.num_games):  # the games are legal and their winners right
        assert positions.to_state(game).winner == winners[game]


def test_play_from_plays_only_the_chosen_games_and_rejects_finished_ones():
    board = Board(3)
    positions = swapped_openings(board)
    winners = play_from(positions, RandomAgent(seed=0), RandomAgent(seed=1), games=[0, 3])
    assert (winners[[0, 3]] != 0).all() and (np.delete(winners, [0, 3]) == 0).all()
    assert (positions.move_count[[1, 2]] == 2).all()
    with pytest.raises(ValueError, match="already over"):
        play_from(positions, RandomAgent(seed=0), RandomAgent(seed=1), games=[0])


def test_playout_counts_with_random_agents_match_random_fills():
    board = Board(2)
    wins, games = playout_counts(
        RandomAgent(seed=0), RandomAgent(seed=1), board, num_games=1500, batch_size=1000
    )
    fill_wins, fill_games = rollout_counts(board, num_rollouts=1500, seed=3)
    sigma = np.sqrt(0.5 / 1500)
    assert np.abs(wins / games - fill_wins / fill_games).max() < 4.5 * sigma


# ---------------------------------------------------------------------- the table
def test_the_table_has_its_columns_and_k_rows_with_the_swap_arithmetic():
    board = Board(3)
    v = np.array([0.5, 0.9, 0.2, 0.45, 0.55, 0.6, 0.1, 0.52, 0.48, 0.7, 0.3, 0.0])
    table = opening_table(v, board)
    assert tuple(table.columns) == TABLE_COLUMNS and len(table) == board.num_cells
    assert table["cell"].tolist() == list(range(board.num_cells))
    assert table["name"].tolist() == list(board.names)
    assert table["swap"].tolist() == [x > 0.5 for x in v]  # 0.5 exactly: no swap
    np.testing.assert_allclose(table["blue_chance"], [min(x, 1 - x) for x in v])
    # Fairest first; |v - 0.5| ties (0.45/0.55, 0.48/0.52) go to the smaller cell index.
    ranked = table.sort_values("rank")["name"].tolist()
    assert ranked[:5] == [board.names[c] for c in (0, 7, 8, 3, 4)]
    assert sorted(table["rank"]) == list(range(1, board.num_cells + 1))
    assert table[["low", "high"]].isna().all().all()


def test_count_estimators_carry_wilson_intervals():
    table = estimate_openings(side=3, estimator="rollout", playouts=300, cache_dir=None)
    assert (table["low"] <= table["v"]).all() and (table["v"] <= table["high"]).all()
    assert (table["high"] - table["low"] < 0.2).all()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"estimator": "nett"}, "estimator must be one of"),
        ({"estimator": "net"}, "needs a checkpoint"),
        ({"search": "many"}, "search must be"),
        ({"estimator": "playout", "agent": "random,x"}, "not of the form key=value"),
        ({"side": 1}, "board side"),
    ],
)
def test_bad_settings_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        estimate_openings(cache_dir=None, **{"side": 3, **kwargs})


def test_bad_arrays_are_named():
    board = Board(3)
    with pytest.raises(ValueError, match=r"v must have shape \(12,\)"):
        opening_table(np.zeros(5), board)
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        opening_table(np.full(12, 1.5), board)


# ---------------------------------------------------------------------- the cache
class CountingRolloutEvaluator(RolloutEvaluator):
    calls = 0

    def __call__(self, batch, games):
        type(self).calls += 1
        return super().__call__(batch, games)


def test_cache_hits_return_the_same_values_without_recomputing(tmp_path, monkeypatch):
    monkeypatch.setattr(openings, "RolloutEvaluator", CountingRolloutEvaluator)
    settings = dict(
        side=3,
        estimator="search",
        search=SearchSettings(num_simulations=30),
        rollouts=2,
        cache_dir=tmp_path,
    )
    first = estimate_openings(**settings)
    calls = CountingRolloutEvaluator.calls
    assert calls > 0 and not first.attrs["cached"]
    second = estimate_openings(**settings)
    assert CountingRolloutEvaluator.calls == calls  # nothing recomputed
    assert second.attrs["cached"] and second.attrs["key"] == first.attrs["key"]
    pd.testing.assert_frame_equal(first, second)  # bit for bit
    assert len(list(tmp_path.glob("*.csv"))) == 1
    # Another seed or setting is another entry; settings the estimator ignores are not.
    estimate_openings(**{**settings, "seed": 1})
    assert CountingRolloutEvaluator.calls > calls
    estimate_openings(**{**settings, "seed": 1, "playouts": 7})
    assert len(list(tmp_path.glob("*.csv"))) == 2


def test_cache_keys_distinguish_estimators_and_mirror(tmp_path):
    a = estimate_openings(side=2, estimator="rollout", playouts=50, cache_dir=tmp_path)
    b = estimate_openings(
        side=2, estimator="rollout", playouts=50, mirror=False, cache_dir=tmp_path
    )
    c = estimate_openings(side=2, estimator="playout", playouts=20, cache_dir=tmp_path)
    assert not (a.attrs["cached"] or b.attrs["cached"] or c.attrs["cached"])
    assert len(list(tmp_path.glob("*.csv"))) == 3


# ---------------------------------------------------------------------- checkpoints
def test_checkpoint_estimators_key_the_cache_on_the_files_content(tmp_path):
    path = write_tiny_checkpoint(tmp_path / "net.pt", side=3, seed=0)
    settings = dict(side=3, checkpoint=path, cache_dir=tmp_path / "cache")
    net = estimate_openings(estimator="net", **settings)
    np.testing.assert_array_equal(net["v"], net["v"].to_numpy()[Board(3).mirror_cells])
    assert estimate_openings(estimator="net", **settings).attrs["cached"]
    search = estimate_openings(
        estimator="search", search=SearchSettings(num_simulations=8), **settings
    )
    assert "rollouts" not in search.attrs["key"] and "checkpoint" in search.attrs["key"]
    write_tiny_checkpoint(path, side=3, seed=1)  # other weights under the same name
    again = estimate_openings(estimator="net", **settings)
    assert not again.attrs["cached"] and not np.allclose(again["v"], net["v"])
    games = estimate_openings(estimator="playout", agent=f"net:{path}", playouts=4, **settings)
    assert games.attrs["key"]["agent"]["sha256"] == again.attrs["key"]["checkpoint"]["sha256"]
    with pytest.raises(Exception, match="side"):
        estimate_openings(estimator="net", side=4, checkpoint=path, cache_dir=None)


def test_playout_counts_take_a_number_of_games_per_cell():
    board = Board(3)
    counts = np.arange(board.num_cells) % 3  # 0, 1 or 2 games; 0 skips the cell
    wins, games = playout_counts(
        RandomAgent(seed=0), RandomAgent(seed=1), board, num_games=counts, batch_size=5
    )
    np.testing.assert_array_equal(games, counts)
    assert ((0 <= wins) & (wins <= games)).all()
    with pytest.raises(ValueError, match="num_games must be >= 0"):
        playout_counts(RandomAgent(), RandomAgent(), board, num_games=counts - 1)


@pytest.mark.parametrize("mirror", [True, False])
def test_refinement_narrows_the_fairest_intervals_and_leaves_the_rest(mirror):
    """After `refine_fairest`, the cells nearest 1/2 by the final (pooled) estimate have
    intervals no wider than asked; the other cells keep the games they had."""
    board = Board(3)
    owner, mover = RolloutMCTSAgent(SearchSettings(num_simulations=6), seed=0), RandomAgent(seed=1)
    wins, games = playout_counts(owner, mover, board, num_games=6)

    def play(num_games):
        return playout_counts(owner, mover, board, num_games=num_games)

    new_wins, new_games = refine_fairest(
        play, board, wins, games, fairest=3, half_width=0.1, mirror=mirror
    )
    assert (new_games >= games).all() and (new_wins >= wins).all()
    pooled_wins, pooled_games = (
        mirror_pool(new_wins, new_games, board)
        if mirror
        else (
            new_wins,
            new_games,
        )
    )
    v = pooled_wins / pooled_games
    nearest = np.lexsort((np.arange(board.num_cells), np.abs(v - 0.5)))[:3]
    for cell in nearest:
        low, high = wilson_interval(int(pooled_wins[cell]), int(pooled_games[cell]))
        assert (high - low) / 2 <= 0.1
    grown = np.flatnonzero(new_games > games)
    assert 0 < len(grown) <= (6 if mirror else 3) + 3  # a few cells, not all of them
    if mirror:  # a pair's games are split between its two cells
        pairs = board.mirror_cells[grown]
        assert np.isin(pairs, grown).all()
    _, same_games = refine_fairest(play, board, wins, games, fairest=0, half_width=0.1)
    np.testing.assert_array_equal(same_games, games)


def test_the_playout_estimator_refines_and_counts_its_games(tmp_path):
    table = estimate_openings(
        side=3,
        estimator="playout",
        agent="uct:6",
        opponent="random",
        playouts=4,
        refine_fairest=2,
        half_width=0.12,
        cache_dir=tmp_path,
    )
    fairest = table.sort_values("rank").head(2)
    assert ((fairest["high"] - fairest["low"]) / 2 <= 0.12).all()
    assert table["games"].min() >= 4 and table["games"].max() > 8
    assert table.attrs["key"]["refine_fairest"] == 2
    with pytest.raises(ValueError, match="half_width must be a number in"):
        estimate_openings(side=3, estimator="playout", half_width=0.7, cache_dir=None)
    with pytest.raises(ValueError, match="refine_fairest must be an integer"):
        estimate_openings(side=3, estimator="playout", refine_fairest=-1, cache_dir=None)


def test_a_table_written_before_the_games_column_still_reads(tmp_path):
    board = Board(3)
    table = opening_table(np.linspace(0, 1, board.num_cells), board, games=np.full(12, 7))
    path = tmp_path / "old.csv"
    table.drop(columns="games").to_csv(path, index=False)
    read_board, old = read_opening_table(path)
    assert read_board.side == 3 and (old["games"] == 0).all()
    table.to_csv(path, index=False)
    _, new = read_opening_table(path)
    assert (new["games"] == 7).all()
    table.assign(games=-1).to_csv(path, index=False)
    with pytest.raises(ValueError, match="games must be counts"):
        read_opening_table(path)


def test_an_extended_map_keeps_its_games_and_adds_a_sitting_of_new_ones(tmp_path):
    board = Board(3)
    common = dict(side=3, estimator="playout", agent="uct:6", opponent="random", refine_fairest=0)
    first = estimate_openings(playouts=4, cache_dir=None, **common)
    _, path = write_opening_table(first, tmp_path / "first")
    more = estimate_openings(playouts=6, extend=path, cache_dir=tmp_path / "cache", **common)
    # the new games are the map's next sitting: the same job, seeds of its own
    wins, games = mirror_pool(*PlayoutJob("uct:6", "random", board, seed=0, sitting=1)(6), board)
    np.testing.assert_array_equal(more["games"], first["games"] + games)
    np.testing.assert_allclose(more["v"] * more["games"], first["v"] * first["games"] + wins)
    key = more.attrs["key"]
    assert key["sitting"] == 1 and key["extends"]["settings"] == first.attrs["key"]
    again = estimate_openings(playouts=6, extend=path, cache_dir=tmp_path / "cache", **common)
    assert again.attrs["cached"] and again.equals(more)
    # a map extended twice: sitting 2, its history in the key, the fairest refined
    _, path = write_opening_table(more, tmp_path / "more")
    third = estimate_openings(
        playouts=2, extend=path, cache_dir=None, **{**common, "refine_fairest": 2}
    )
    assert third.attrs["key"]["sitting"] == 2
    assert third.attrs["key"]["extends"]["settings"]["extends"]["settings"] == first.attrs["key"]
    assert (third["games"] >= more["games"] + 2).all()


def test_only_a_map_of_the_same_agents_is_extended(tmp_path):
    common = dict(side=3, estimator="playout", opponent="random", refine_fairest=0, cache_dir=None)
    first = estimate_openings(agent="uct:6", playouts=2, **common)
    _, path = write_opening_table(first, tmp_path / "first")
    with pytest.raises(ValueError, match=r"its agent is .*only a map of the same agents"):
        estimate_openings(agent="uct:5", playouts=2, extend=path, **common)
    with pytest.raises(ValueError, match="only a playout map gets more games"):
        estimate_openings(side=3, estimator="rollout", playouts=2, extend=path, cache_dir=None)
    with pytest.raises(ValueError, match="no such file"):
        estimate_openings(agent="uct:6", playouts=2, extend=tmp_path / "none.json", **common)
    path.write_text('{"settings": {"estimator": "playout"}, "rows": [1, 2]}')
    with pytest.raises(ValueError, match="not an opening table"):
        estimate_openings(agent="uct:6", playouts=2, extend=path, **common)
    rollout = estimate_openings(side=3, estimator="rollout", playouts=2, cache_dir=None)
    _, path = write_opening_table(rollout, tmp_path / "rollout")
    with pytest.raises(ValueError, match="not a playout map"):
        estimate_openings(agent="uct:6", playouts=2, extend=path, **common)


def test_unpooled_counts_pool_back_to_the_table_and_every_cell_has_games():
    board = Board(4)
    rng = np.random.default_rng(3)
    games = rng.integers(1, 40, board.num_cells)
    wins = rng.integers(0, games + 1)
    wins, games = mirror_pool(wins, games, board)
    own_wins, own_games = _unpool(wins, games, board)
    assert (own_games >= 1).all() and ((0 <= own_wins) & (own_wins <= own_games)).all()
    np.testing.assert_array_equal(mirror_pool(own_wins, own_games, board)[0], wins)
    np.testing.assert_array_equal(mirror_pool(own_wins, own_games, board)[1], games)
