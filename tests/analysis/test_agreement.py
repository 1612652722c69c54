"""Two opening maps compared: rank correlation, sure swap decisions, the cells they differ on."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from trapy_rl.analysis.agreement import (
    compare_maps,
    corrected_pearson,
    sampling_ceiling,
    sure_of_decision,
)
from trapy_rl.analysis.openings import opening_table
from trapy_rl.game import Board


def test_a_map_agrees_with_itself():
    board = Board(3)
    v = np.linspace(0.05, 0.95, board.num_cells)
    table = opening_table(v, board)
    agreement = compare_maps(table, table)
    assert agreement.spearman == pytest.approx(1.0) and agreement.mean_abs_difference == 0
    assert agreement.sure_in_both == board.num_cells == agreement.same_decision
    assert agreement.disagree == () and agreement.sure_in_one == ()
    assert "100.0%" in str(agreement)


def test_only_intervals_clear_of_one_half_are_sure():
    board = Board(2)
    v = np.array([0.3, 0.45, 0.6, 0.55, 0.9])
    low = np.array([0.2, 0.40, 0.5, 0.51, 0.8])
    high = np.array([0.4, 0.55, 0.7, 0.60, 0.95])
    table = opening_table(v, board, low=low, high=high)
    # 0.45 [0.40, 0.55] straddles 1/2; 0.6 [0.5, 0.7] touches it: neither is sure.
    np.testing.assert_array_equal(sure_of_decision(table), [True, False, False, True, True])


def test_opposite_sure_decisions_are_named_and_unsure_cells_are_not_counted():
    board = Board(2)
    a = opening_table(
        np.array([0.2, 0.7, 0.48, 0.9, 0.6]),
        board,
        low=np.array([0.1, 0.6, 0.40, 0.85, 0.55]),
        high=np.array([0.3, 0.8, 0.56, 0.95, 0.65]),
    )
    b = opening_table(np.array([0.25, 0.3, 0.52, 0.8, 0.7]), board)  # no intervals: all sure
    agreement = compare_maps(a, b)
    assert agreement.sure_in_both == 4 and agreement.same_decision == 3
    assert agreement.decision_agreement == pytest.approx(0.75)
    assert agreement.disagree == ("b1",) and agreement.sure_in_one == ("c1",)


def test_the_fairest_cells_shared_are_counted_as_sets_of_the_cells_nearest_one_half():
    """Against a count by hand of each map's `fairest` cells nearest 1/2 (ties by index)."""
    board = Board(4)
    rng = np.random.default_rng(3)
    for _ in range(20):
        va, vb = rng.random(board.num_cells), rng.random(board.num_cells)
        a, b = opening_table(va, board), opening_table(vb, board)
        for fairest in (0, 1, 5, 10, board.num_cells, 100):
            n = min(fairest, board.num_cells)
            near_a = sorted(range(board.num_cells), key=lambda c: (abs(va[c] - 0.5), c))[:n]
            near_b = sorted(range(board.num_cells), key=lambda c: (abs(vb[c] - 0.5), c))[:n]
            agreement = compare_maps(a, b, fairest=fairest)
            assert agreement.fairest == n
            assert agreement.fairest_shared == len(set(near_a) & set(near_b))
    with pytest.raises(ValueError, match="fairest must be >= 0"):
        compare_maps(a, b, fairest=-1)


def test_maps_of_other_boards_are_refused():
    with pytest.raises(ValueError, match="not of the same board"):
        compare_maps(
            opening_table(np.full(5, 0.5), Board(2)), opening_table(np.full(12, 0.5), Board(3))
        )


def test_the_sampling_ceiling_is_near_one_with_many_games_and_low_with_few():
    """Two maps drawn from one truth: with 10,000 games a cell and values 0.05 apart their
    order is the truth's (rho above 0.99); with one game a cell it is mostly noise."""
    board = Board(4)
    k = board.num_cells
    v = np.linspace(0.1, 0.9, k)
    many = np.full(k, 10_000)
    truth = opening_table(v, board, games=many)
    rhos = sampling_ceiling(truth, many, many, draws=50)
    assert rhos.shape == (50,) and rhos.min() > 0.99
    one = np.ones(k, dtype=np.int64)
    assert sampling_ceiling(truth, one, one, draws=50).mean() < 0.7
    with pytest.raises(ValueError, match="played counts"):
        sampling_ceiling(opening_table(v, board), many, many)


def _drawn_map(chance: np.ndarray, games: int, rng: np.random.Generator) -> pd.DataFrame:
    """A played map's columns with ``games`` games a cell drawn from ``chance`` ([K] float)."""
    wins = rng.binomial(games, chance)
    names = [f"cell{k}" for k in range(len(chance))]
    return pd.DataFrame({"name": names, "v": wins / games, "games": games})


def test_the_corrected_pearson_recovers_the_correlation_of_the_true_chances():
    """Two agents' true chances correlate at a known r; 24 games a cell pull the measured r
    well below it, and the correction for attenuation brings it back (3,000 cells, so that
    the estimate is tight)."""
    rng = np.random.default_rng(0)
    z1, z2 = rng.standard_normal((2, 3000))
    p_a = 0.5 + 0.3 * np.tanh(z1)
    p_b = 0.5 + 0.3 * np.tanh(0.8 * z1 + 0.6 * z2)
    true_r = np.corrcoef(p_a, p_b)[0, 1]
    a, b = _drawn_map(p_a, 24, rng), _drawn_map(p_b, 24, rng)
    result = corrected_pearson(a, b, draws=200)
    assert result.pearson < true_r - 0.1
    assert result.corrected == pytest.approx(true_r, abs=0.03)
    assert result.low < true_r < result.high
    assert 0.5 < result.reliability_a < 0.9 and 0.5 < result.reliability_b < 0.9
    assert "corrected for sampling" in str(result)


def test_the_corrected_pearson_counts_a_mirror_pair_once():
    """On a mirrored map the two cells of a pair hold one estimate: the correlation is that of
    the pairs (and the axis cells), as if each had been listed once."""
    board = Board(4)
    rng = np.random.default_rng(1)
    units = np.minimum(np.arange(board.num_cells), board.mirror_cells)
    chance = rng.uniform(0.1, 0.9, board.num_cells)[units]
    a, b = (_drawn_map(chance, 40, rng) for _ in range(2))
    for t in (a, b):  # pooled counts: both cells of a pair show the pair's estimate
        t["v"] = t["v"].to_numpy()[units]
    once = np.unique(units)
    mirrored = corrected_pearson(a, b, board.mirror_cells, draws=20)
    listed_once = corrected_pearson(a.iloc[once], b.iloc[once], draws=20)
    assert mirrored.pearson == pytest.approx(listed_once.pearson)
    assert mirrored.corrected == pytest.approx(listed_once.corrected)


def test_the_corrected_pearson_refuses_other_boards_and_single_games():
    rng = np.random.default_rng(2)
    a = _drawn_map(np.full(10, 0.5), 8, rng)
    with pytest.raises(ValueError, match="same board"):
        corrected_pearson(a, a.iloc[:9])
    one = a.assign(games=1)
    with pytest.raises(ValueError, match="at least 2 played games"):
        corrected_pearson(one, one)


def test_a_map_that_is_all_noise_has_no_corrected_pearson():
    """Every cell at 1/2: the maps' spread is binomial noise alone (reliability near 0 or
    below), and the correction, which would divide by it, is NaN rather than a wild number."""
    rng = np.random.default_rng(3)
    a, b = (_drawn_map(np.full(60, 0.5), 4, rng) for _ in range(2))
    result = corrected_pearson(a, b, draws=50)
    assert result.reliability_a < 0.2 and np.isnan(result.corrected)
    flat = a.assign(v=0.5)
    assert np.isnan(corrected_pearson(flat, b, draws=5).reliability_a)
