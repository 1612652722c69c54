"""The summary of an opening table, and its pictures."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest

from trapy_rl.analysis import (
    draw_opening_map,
    draw_ranking,
    near_long_edge_middle,
    opening_table,
    ranking_text,
    summarize,
)
from trapy_rl.analysis.summary import hex_distance
from trapy_rl.game import Board

matplotlib.use("Agg")


def test_near_the_middle_of_the_long_edge_by_brute_force():
    board = Board(10)
    middle = board.parse_action("j1")
    # Breadth-first search over the neighbour lists: the slow, obvious hex distance.
    distance = np.full(board.num_cells, -1)
    distance[middle], frontier = 0, [middle]
    while frontier:
        following = []
        for cell in frontier:
            for n in board.neighbors[cell]:
                if n >= 0 and distance[n] < 0:
                    distance[n] = distance[cell] + 1
                    following.append(n)
        frontier = following
    np.testing.assert_array_equal(hex_distance(board, middle), distance)
    assert near_long_edge_middle(board).sum() == 12
    small = Board(3)  # radius 1 around c1: b1, c1, d1 and b2, c2 above
    names = [small.names[c] for c in np.flatnonzero(near_long_edge_middle(small))]
    assert names == ["b1", "c1", "d1", "b2", "c2"]
    with pytest.raises(ValueError, match="radius"):
        near_long_edge_middle(board, radius=-1)


def test_summary_of_a_table_with_a_strong_middle():
    board = Board(10)
    near = near_long_edge_middle(board)
    v = np.where(near, 0.8, 0.4)
    v[board.parse_action("a10")] = 0.5
    v[board.parse_action("j1")] = 0.9
    summary = summarize(opening_table(v, board), board, fairest=3)
    assert summary.strongest == ("j1", 0.9)
    assert summary.fairest[0] == ("a10", 0.5)
    assert summary.swap_share == pytest.approx(12 / 145)
    assert summary.strongest_near == 12 and summary.middle == "j1" and summary.radius == 2
    assert summary.near_mean > 0.8 > 0.4 == pytest.approx(summary.elsewhere_mean, abs=0.001)
    assert summary.p_value < 1e-6
    text = str(summary)
    assert "j1" in text and "supports the claim" in text and "8.3%" in text


def test_summary_of_a_flat_table_has_no_test():
    board = Board(3)
    summary = summarize(opening_table(np.full(12, 0.5), board), board)
    assert np.isnan(summary.p_value) and summary.swap_share == 0.0
    with pytest.raises(ValueError, match="12 rows"):
        summarize(opening_table(np.full(12, 0.5), board).head(3), board)


def test_pictures_and_ranking_text(tmp_path):
    board = Board(4)
    rng = np.random.default_rng(0)
    v = rng.uniform(0.3, 0.7, board.num_cells)
    low, high = v - 0.05, v + 0.05
    table = opening_table(v, board, low=low, high=high)
    fig = draw_opening_map(table, board)
    fig.savefig(tmp_path / "map.png")
    fig = draw_ranking(table, top=8)
    fig.savefig(tmp_path / "ranking.png")
    assert (tmp_path / "map.png").stat().st_size > 10_000
    assert (tmp_path / "ranking.png").stat().st_size > 5_000
    lines = ranking_text(table, top=8).splitlines()
    assert len(lines) == 9 and lines[1].split()[1] == table.sort_values("rank")["name"].iloc[0]
    no_interval = ranking_text(opening_table(v, board), top=2)
    assert "[" not in no_interval
