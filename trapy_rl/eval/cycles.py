"""Non-transitivity: cycles of wins (A beats B beats C beats A) that the intervals confirm, and
the spread between agents' head-to-head ratings and their ratings against a fixed pool.

Checkpoints of one run learn lines that the next checkpoint exploits, so a ranking from
head-to-head matches can be circular. A cycle counts only when every one of its matches is won
beyond the 95% Wilson interval: the winner's interval of its win rate lies above 1/2.

Shapes: M agents.

>>> wins = np.array([[0, 30, 5], [10, 0, 32], [35, 8, 0]])  # of 40 games each
>>> find_cycles(["a", "b", "c"], wins)
[('a', 'b', 'c')]
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from trapy_rl.eval.elo import EloRatings
from trapy_rl.eval.stats import wilson_interval

__all__ = ["clear_wins", "find_cycles", "head_to_head_spread"]


def clear_wins(wins: np.ndarray) -> np.ndarray:
    """[M, M] bool: i beat j beyond the interval (the low end of i's win rate above 1/2).

    Args:
        wins: [M, M] int, wins[i, j] = games i won against j.
    """
    wins = np.asarray(wins, dtype=np.int64)
    m = len(wins)
    beaten = np.zeros((m, m), dtype=bool)
    for i, j in itertools.permutations(range(m), 2):
        games = int(wins[i, j] + wins[j, i])
        if games:
            beaten[i, j] = wilson_interval(int(wins[i, j]), games)[0] > 0.5
    return beaten


def find_cycles(names: Sequence[str], wins: np.ndarray) -> list[tuple[str, str, str]]:
    """Every three-agent cycle of clear wins, each once, starting at its earliest agent.

    Args:
        names: [M] the agents.
        wins: [M, M] int, wins[i, j] = games i won against j.

    Returns:
        (a, b, c) where a clearly beat b, b clearly beat c and c clearly beat a.
    """
    beaten = clear_wins(wins)
    cycles = []
    for i, j, k in itertools.permutations(range(len(names)), 3):
        if i < j and i < k and beaten[i, j] and beaten[j, k] and beaten[k, i]:
            cycles.append((names[i], names[j], names[k]))
    return cycles


def head_to_head_spread(
    pooled: EloRatings, head_to_head: EloRatings
) -> dict[str, tuple[float, float]]:
    """Each agent's pool rating beside its head-to-head rating.

    The head-to-head fit has its own anchor; it is shifted so that the agents' mean equals
    their mean pool rating, so the differences show how far the matches among the agents
    disagree with the pool, not where the anchor happened to be.

    Args:
        pooled: ratings against a pool (`trapy_rl.eval.pool.rate_against_pool`).
        head_to_head: ratings of (some of) the same agents from their matches among
            themselves.

    Returns:
        {spec: (pool Elo, head-to-head Elo shifted)} for the agents in both.
    """
    common = [name for name in head_to_head.names if name in pooled.names]
    pool_elo = np.array([pooled.ratings[pooled.names.index(n)] for n in common])
    h2h_elo = np.array([head_to_head.ratings[head_to_head.names.index(n)] for n in common])
    shifted = h2h_elo - h2h_elo.mean() + pool_elo.mean()
    return {n: (float(p), float(h)) for n, p, h in zip(common, pool_elo, shifted)}
