"""`replicate_playout_map`: two played maps of one truth, against a direct simulation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr

from trapy_rl.analysis.openings import opening_table
from trapy_rl.analysis.replication import playout_method, replicate_playout_map
from trapy_rl.eval.stats import wilson_interval
from trapy_rl.game import Board


def _truth(board: Board, seed: int = 3):
    v = np.random.default_rng(seed).random(board.num_cells)
    v = (v + v[board.mirror_cells]) / 2  # a truth of a mirrored map is symmetric
    return opening_table(v, board)


@pytest.mark.parametrize("fair, playouts", [(False, 6), (True, 2)])
def test_without_refinement_it_is_two_binomial_maps_pooled_with_the_mirror(fair, playouts):
    """The same draws by hand: each map binomial(playouts) a cell, counts pooled with the
    mirror cell's, compared by rho, by the fairest cells (nearest 1/2, ties by cell), and by
    cells sure in both (Wilson intervals clear of 1/2) with opposite decisions (a fair truth
    with 2 games a cell gives some: 4 of 4 and 0 of 4 are sure)."""
    board, fairest = Board(4), 5
    truth = opening_table(np.full(board.num_cells, 0.5), board) if fair else _truth(board)
    chance, mirror = truth["v"].to_numpy(), board.mirror_cells
    result = replicate_playout_map(
        truth, board, playouts=playouts, refine_fairest=0, fairest=fairest, draws=30, seed=7
    )
    rng = np.random.default_rng(7)
    k = board.num_cells
    opposites = 0
    for i in range(30):
        maps = []
        for _ in range(2):
            wins = rng.binomial(np.full(k, playouts), chance)
            off_axis = mirror != np.arange(k)
            pooled = np.where(off_axis, wins + wins[mirror], wins)
            games = np.where(off_axis, 2 * playouts, playouts)
            maps.append((pooled, games))
        (wa, ga), (wb, gb) = maps
        va, vb = wa / ga, wb / gb
        assert result.spearman[i] == pytest.approx(spearmanr(va, vb)[0])
        near = [
            set(sorted(range(k), key=lambda c: (abs(v[c] - 0.5), c))[:fairest]) for v in (va, vb)
        ]
        assert result.fairest_shared[i] == len(near[0] & near[1])
        assert result.games[i] == k * playouts
        sure = [
            np.array([not (lo <= 0.5 <= hi) for lo, hi in map(wilson_interval, w, g)])
            for w, g in maps
        ]
        opposite = sure[0] & sure[1] & ((va > 0.5) != (vb > 0.5))
        assert result.opposite[i] == opposite.sum()
        opposites += opposite.sum()
    assert (opposites > 0) == fair


def test_many_games_reach_every_bar_and_few_do_not():
    board = Board(5)
    pair = np.minimum(np.arange(board.num_cells), board.mirror_cells)
    pairs = np.unique(pair)
    v = np.linspace(0.02, 0.98, len(pairs))[np.searchsorted(pairs, pair)]  # apart, mirrored
    truth = opening_table(v, board)
    many = replicate_playout_map(truth, board, playouts=20_000, refine_fairest=0, draws=20)
    assert many.meets(spearman=0.99, fairest_shared=many.fairest - 2).all()
    few = replicate_playout_map(truth, board, playouts=1, refine_fairest=0, draws=20)
    assert not few.meets(spearman=0.95, fairest_shared=15).any()
    assert "games a map" in str(few)


def test_refinement_plays_more_games_from_the_fairest_cells():
    board = Board(5)
    truth = _truth(board)
    plain = replicate_playout_map(truth, board, playouts=16, refine_fairest=0, draws=5)
    refined = replicate_playout_map(
        truth, board, playouts=16, refine_fairest=8, half_width=0.1, draws=5
    )
    assert (plain.games == 16 * board.num_cells).all()
    assert (refined.games > plain.games).all()


def test_bad_truths_and_settings_are_refused():
    board = Board(4)
    with pytest.raises(ValueError, match="not an opening table of this board"):
        replicate_playout_map(_truth(Board(3)), board, playouts=4)
    with pytest.raises(ValueError, match="playouts must be an integer >= 1"):
        replicate_playout_map(_truth(board), board, playouts=0)
    with pytest.raises(ValueError, match="half_width"):
        replicate_playout_map(_truth(board), board, playouts=4, half_width=0.7)


def test_playout_method_adds_the_first_games_of_every_sitting():
    first = {"playouts": 128, "refine_fairest": 20, "half_width": 0.05, "mirror": True}
    later = {"playouts": 64, "refine_fairest": 10, "half_width": 0.04, "mirror": True}
    key = {**later, "extends": {"settings": first, "counts": "0" * 16}}
    assert playout_method(first) == first
    assert playout_method(key) == {**later, "playouts": 192}
