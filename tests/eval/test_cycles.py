"""Cycles of clear wins in a head-to-head table."""

from __future__ import annotations

import numpy as np

from trapy_rl.eval.cycles import clear_wins, find_cycles
from trapy_rl.eval.stats import wilson_interval


def table(results: dict[tuple[int, int], int], m: int, games: int = 40) -> np.ndarray:
    """[M, M] wins from {(i, j): wins of i against j} (j gets the rest)."""
    wins = np.zeros((m, m), dtype=np.int64)
    for (i, j), won in results.items():
        wins[i, j], wins[j, i] = won, games - won
    return wins


def test_a_planted_cycle_is_found_once() -> None:
    wins = table({(0, 1): 30, (1, 2): 31, (2, 0): 29, (0, 3): 39, (1, 3): 39, (2, 3): 39}, 4)
    assert find_cycles(["a", "b", "c", "d"], wins) == [("a", "b", "c")]


def test_a_transitive_table_has_no_cycle() -> None:
    wins = table({(0, 1): 30, (1, 2): 31, (0, 2): 35}, 3)
    assert find_cycles(["a", "b", "c"], wins) == []


def test_an_unclear_match_breaks_the_cycle() -> None:
    """26 of 40 is a 65% score whose interval still reaches below 1/2: not a clear win."""
    assert wilson_interval(26, 40)[0] < 0.5 < wilson_interval(27, 40)[0]
    wins = table({(0, 1): 30, (1, 2): 31, (2, 0): 26}, 3)
    assert find_cycles(["a", "b", "c"], wins) == []
    assert clear_wins(table({(0, 1): 27}, 2)).tolist() == [[False, True], [False, False]]
    assert not clear_wins(np.zeros((2, 2), dtype=np.int64)).any()  # no games, no verdict
