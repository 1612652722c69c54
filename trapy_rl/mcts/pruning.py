"""Forced playouts and policy target pruning at a self-play root (KataGo: Wu 2019,
"Accelerating Self-Play Learning in Go", arXiv:1902.10565, section 3.1; in KataGo's code
``rootDesiredPerChildVisitsCoeff`` and ``getReducedPlaySelectionVisits``).

Legend: m roots, A actions. P is the root's prior as the search used it (with its Dirichlet
noise), N(c) the visit count of child c, N the root's own visit count (its evaluation
included, as in `trapy_rl.mcts.policies.select_puct`).

*Forced playouts*: a child c of the root that has had a playout but fewer than

    n_forced(c) = sqrt(k * P(c) * sum_c' N(c'))          (k = 2 in the paper)

is chosen at the root before the PUCT rule is asked (among several such children, the lowest
action). A move the noise lifted keeps getting playouts in proportion to the square root of
the search's, so a move the net undervalues can show what it is worth. The search compares
squares, ``N(c)**2 < k * P(c) * sum``, in float64.

*Policy target pruning*: the forced playouts would teach the net its own noise. After the
search, c* the most visited child (the lowest action among equals) keeps its count; every other
child c loses visits one at a time, at most n_forced(c) (its final value), as long as its PUCT
value with the fewer visits stays below c*'s with the final counts,

    PUCT(c, n) = Q(c) + c_puct * P(c) * sqrt(N) / (1 + n);

a child left with 1 visit or fewer is dropped. The policy target is what remains, normalised.
(KataGo's code today takes the whole surplus, without the n_forced cap; the paper's rule is
the one here.) `trapy_rl.mcts.reference.ReferenceSearch.pruned_policy` writes the same rule
out child by child; `prune_policy_target` is the batched one, in float64 with the same
expressions, and the tests hold the two equal.

>>> priors = np.array([[0.5, 0.3, 0.2]], np.float32)
>>> forced_children(priors, np.array([[8, 1, 0]], np.float32), forced_playouts=2.0)
array([[False,  True, False]])
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["check_forced_playouts", "forced_children", "prune_policy_target"]


def check_forced_playouts(forced_playouts: float) -> float:
    """``forced_playouts`` (k) as a float, or a one-line ValueError unless finite and >= 0."""
    k = forced_playouts
    if isinstance(k, bool) or not isinstance(k, (int, float, np.number)) or not math.isfinite(k):
        raise ValueError(f"forced_playouts must be a finite number >= 0, got {k!r}")
    if k < 0:
        raise ValueError(f"forced_playouts must be >= 0 (0: off; KataGo's k is 2), got {k!r}")
    return float(k)


def forced_children(
    priors: np.ndarray, visit_counts: np.ndarray, *, forced_playouts: float
) -> np.ndarray:
    """The root children below their forced playouts.

    Args:
        priors: [m, A] float32, the root priors the search uses (-inf or 0 at illegal actions).
        visit_counts: [m, A] float32 or int, N(c).
        forced_playouts: k > 0.

    Returns:
        [m, A] bool, ``N(c) >= 1 and N(c)**2 < k * P(c) * sum_c' N(c')``.
    """
    counts = visit_counts.astype(np.float64)
    total = counts.sum(axis=1, keepdims=True)
    p = np.maximum(priors, 0.0).astype(np.float64)
    return (counts >= 1) & (counts * counts < forced_playouts * p * total)


def prune_policy_target(
    priors: np.ndarray,
    visit_counts: np.ndarray,
    q_values: np.ndarray,
    node_visits: np.ndarray,
    *,
    c_puct: float,
    forced_playouts: float,
) -> np.ndarray:
    """The policy targets of m roots after policy target pruning (see the module docstring).

    Args:
        priors: [m, A] float32, the root priors the search used (-inf or 0 at illegal actions).
        visit_counts: [m, A] float32 or int, N(c).
        q_values: [m, A] float32, Q(c) for the player to move at the root (visited children).
        node_visits: [m] int, N, the roots' visit counts.
        c_puct: the search's PUCT constant.
        forced_playouts: k > 0.

    Returns:
        [m, A] float32, the pruned counts normalised (a row without visits stays zero).
    """
    counts = visit_counts.astype(np.float64)
    rows = np.arange(len(counts))
    p = np.maximum(priors, 0.0).astype(np.float64)
    q = q_values.astype(np.float64)
    scale = c_puct * p * np.sqrt(np.asarray(node_visits, dtype=np.float64))[:, None]
    best = counts.argmax(axis=1)  # [m], the lowest action among equals
    best_puct = (q + scale / (1 + counts))[rows, best][:, None]  # [m, 1]
    budget = forced_playouts * p * counts.sum(axis=1, keepdims=True)  # n_forced(c) ** 2
    others = counts > 0
    others[rows, best] = False
    pruned = counts.copy()
    # Take one visit more at each pass from the children whose every earlier pass held.
    going, d = others, 1
    while going.any():
        with np.errstate(divide="ignore", invalid="ignore"):  # rows not going: any value
            still_below = q + scale / (1 + counts - d) < best_puct
        going = going & (d * d <= budget) & (counts >= d) & still_below
        pruned[going] = counts[going] - d
        d += 1
    pruned[others & (pruned <= 1)] = 0.0
    total = pruned.sum(axis=1, keepdims=True)
    target = np.zeros_like(pruned)
    np.divide(pruned, total, out=target, where=total > 0)
    return target.astype(np.float32)
