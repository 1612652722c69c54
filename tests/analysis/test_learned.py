"""Maps against the exact values and against each other (`trapy_rl.analysis.learned`)."""

from __future__ import annotations

import numpy as np
import pytest

from trapy_rl.analysis import opening_table
from trapy_rl.analysis.learned import arbitrate, exact_swap_agreement, seed_agreement
from trapy_rl.game import Board
from trapy_rl.solve.openings import exact_values, load_openings


def test_a_map_is_scored_against_v_star():
    board = Board(4)
    v_star = exact_values(load_openings(4))
    perfect = opening_table(np.where(v_star == 1.0, 0.9, 0.1), board)
    scored = exact_swap_agreement(perfect, v_star, board)
    assert scored["agree"] == scored["solved"] == board.num_cells and not scored["wrong"]
    # One cell (and its mirror) on the wrong side of 1/2: two disagreements, named.
    wrong = np.where(v_star == 1.0, 0.9, 0.1)
    b3, f3 = board.parse_action("b3"), board.parse_action("d3")
    wrong[[b3, f3]] = 0.4
    scored = exact_swap_agreement(opening_table(wrong, board), v_star, board)
    assert scored["agree"] == board.num_cells - 2
    assert sorted(name for name, *_ in scored["wrong"]) == ["b3", "d3"]
    # Unsolved cells do not count.
    v_star[b3] = np.nan
    assert exact_swap_agreement(opening_table(wrong, board), v_star, board)["solved"] == 21


def test_identical_maps_agree_fully_and_a_flipped_cell_is_named():
    board = Board(4)
    base = np.linspace(0.05, 0.95, board.num_cells)
    v = np.stack([base, base, base.copy()])
    v[2, board.parse_action("a1")] = 1 - v[2, board.parse_action("a1")]
    result = seed_agreement(v, board)
    assert [row.label for row in result.rows] == ["A against B", "A against C", "B against C"]
    assert result.rows[0].agreement.spearman == pytest.approx(1.0)
    assert result.min_pair < 1.0 and result.opposite == ("a1",)
    assert result.halves == ()


def test_four_maps_are_also_split_into_every_pair_of_halves_once():
    board = Board(4)
    rng = np.random.default_rng(0)
    v = rng.random((4, board.num_cells))
    result = seed_agreement(v, board)
    assert len(result.pairs) == 6
    assert [row.label for row in result.halves] == [
        "A+B against C+D",
        "A+C against B+D",
        "A+D against B+C",
    ]
    # A half's map is the mean of its maps.
    row = result.halves[0]
    mean = opening_table(v[[0, 1]].mean(axis=0), board)["v"].to_numpy()
    other = opening_table(v[[2, 3]].mean(axis=0), board)["v"].to_numpy()
    from scipy.stats import spearmanr

    assert row.agreement.spearman == pytest.approx(spearmanr(mean, other)[0])
    assert "| A+B against C+D |" in result.table()


def test_bad_shapes_are_refused():
    board = Board(4)
    with pytest.raises(ValueError, match=r"maps must have shape \(n, 22\)"):
        seed_agreement(np.zeros((3, 5)), board)
    with pytest.raises(ValueError, match="2 to 26 maps, got 1"):
        seed_agreement(np.zeros((1, 22)), board)


def test_arbitration_between_perfect_players_plays_out_the_exact_value():
    """Two solvers, each owning the stone against the other: the owner wins every game of a
    cell won for the stone (v* = 1) and none of a lost one, pooled with the mirror cell."""
    board = Board(4)
    v_star = exact_values(load_openings(4))
    won = int(np.flatnonzero(v_star == 1.0)[0])
    lost = int(np.flatnonzero(v_star == 0.0)[0])
    agents = ["solver", "solver,table_bits=16"]
    wins, games = arbitrate(agents, board, [won, lost], games=1)
    asked = games > 0
    assert asked[won] and asked[lost] and asked.sum() <= 4  # the two cells and their mirrors
    assert games[won] == games[lost] == 2  # two ordered pairs, a game each
    assert np.array_equal(wins[asked], games[asked] * v_star[asked])
    with pytest.raises(ValueError, match="two agents or more"):
        arbitrate(["solver"], board, [won], games=1)
