"""How the search chooses: priors from logits, PUCT selection, root noise, and the move to play.

Legend: m rows (tree nodes or games), A actions. Values are in [-1, 1] for the player to move.

PUCT (AlphaZero): at a node with visit count N (which counts the node's own evaluation, so
N >= 1 and the prior matters from the first choice on), choose among the legal actions

    argmax_a  Q(a) + c_puct * P(a) * sqrt(N) / (1 + n(a))

where n(a) is the child's visit count and Q(a) its mean value for the player to move at the
node. First-play urgency: an unvisited child gets Q = the node's own mean value (its evaluation
and everything backed up through it so far) minus ``fpu_reduction`` (0 by default), as mctx's
parent-value transform does. Ties go to the lowest action index, so the search is deterministic
without root noise.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "add_dirichlet_noise",
    "mask_logits",
    "normalize_logits",
    "select_actions",
    "select_opening_actions",
    "select_puct",
    "softmax_priors",
]


def mask_logits(logits: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """The logits of the legal actions, -inf at the illegal ones, checked.

    A legal action's -inf logit becomes the lowest float32, so it stays legal (prior 0).

    Args:
        logits: [m, A] float, any value at illegal actions.
        legal: [m, A] bool, at least one legal action per row.

    Returns:
        [m, A] float32.

    Raises:
        ValueError: a row whose legal logits are all -inf, or hold a NaN or +inf.
    """
    if logits.shape != legal.shape:
        raise ValueError(f"logits of shape {logits.shape} do not match legal {legal.shape}")
    lowest = np.finfo(np.float32).min
    masked = np.maximum(logits.astype(np.float32, copy=False), lowest)
    np.copyto(masked, np.float32(-np.inf), where=~legal)
    peak = masked.max(axis=1)
    bad = ~np.isfinite(peak) | (peak == lowest)
    if bad.any():
        rows = np.flatnonzero(bad)[:5].tolist()
        raise ValueError(
            "evaluator logits have no finite maximum over the legal actions (all -inf, "
            f"or a NaN or +inf among them) in rows {rows}"
        )
    return masked


def normalize_logits(masked: np.ndarray, *, illegal_value: float = 0.0) -> np.ndarray:
    """The softmax of each row of `mask_logits`'s output over its finite entries.

    Args:
        masked: [m, A] float32, -inf exactly at the illegal actions.
        illegal_value: what the illegal actions get (the search stores -inf there).

    Returns:
        [m, A] float32, each row's legal entries summing to 1.
    """
    priors = masked - masked.max(axis=1, keepdims=True)
    np.exp(priors, out=priors)
    priors /= priors.sum(axis=1, keepdims=True)  # each sum >= 1: the peak contributes 1
    if illegal_value != 0.0:
        np.copyto(priors, np.float32(illegal_value), where=masked == -np.inf)
    return priors


def softmax_priors(
    logits: np.ndarray, legal: np.ndarray, *, illegal_value: float = 0.0
) -> np.ndarray:
    """The softmax of ``logits`` over the legal actions of each row.

    Args:
        logits: [m, A] float, any value at illegal actions (they are masked here).
        legal: [m, A] bool, at least one legal action per row.
        illegal_value: what the illegal actions get.

    Returns:
        [m, A] float32, each row's legal entries summing to 1.

    Raises:
        ValueError: a row whose legal logits are all -inf, or hold a NaN or +inf.
    """
    return normalize_logits(mask_logits(logits, legal), illegal_value=illegal_value)


def select_puct(
    priors: np.ndarray,
    edge_visits: np.ndarray,
    edge_q: np.ndarray,
    node_visits: np.ndarray,
    node_value_sums: np.ndarray,
    *,
    c_puct: float,
    fpu_reduction: float = 0.0,
) -> np.ndarray:
    """The PUCT choice at m nodes (see the module docstring for the formula).

    Computed in float32 (several times faster than float64 here) as
    ``(P(a) * float32(c_puct * sqrt(N))) / (n(a) + 1) + Q(a)``, with Q(a) the first-play
    urgency ``float32(mean value - fpu_reduction)`` for unvisited children; the reference
    search repeats these roundings, so both break ties identically.

    Args:
        priors: [m, A] float32, -inf at illegal actions (at least one legal action per row).
        edge_visits: [m, A] float32, n(a).
        edge_q: [m, A] float32, Q(a) of the visited children (node's view), 0 elsewhere.
        node_visits: [m] int or float, N >= 1.
        node_value_sums: [m] float64, node's view.

    Returns:
        [m] intp, the chosen actions.
    """
    fpu = (node_value_sums / node_visits - fpu_reduction).astype(np.float32)  # [m]
    scale = (c_puct * np.sqrt(node_visits)).astype(np.float32)  # [m]
    score = priors * scale[:, None]
    score /= edge_visits + 1
    score += edge_q
    # Unvisited children: Q is the first-play urgency (0 + fpu; visited ones add 0).
    score += (edge_visits == 0) * fpu[:, None]
    return score.argmax(axis=1)


def add_dirichlet_noise(
    priors: np.ndarray,
    legal: np.ndarray,
    rng: np.random.Generator,
    *,
    dirichlet_alpha: float,
    dirichlet_fraction: float,
) -> np.ndarray:
    """Mix Dirichlet(alpha) noise over the legal actions into each row of ``priors``.

    Args:
        priors: [m, A] float32.
        legal: [m, A] bool.

    Returns:
        [m, A] float32, ``(1 - fraction) * priors + fraction * noise``, 0 at illegal actions.
    """
    if dirichlet_alpha <= 0:
        raise ValueError(f"dirichlet_alpha must be > 0, got {dirichlet_alpha}")
    if not 0 <= dirichlet_fraction <= 1:
        raise ValueError(f"dirichlet_fraction must be in [0, 1], got {dirichlet_fraction}")
    # A Dirichlet sample is a vector of independent Gamma(alpha) draws, normalised.
    gamma = rng.standard_gamma(dirichlet_alpha, size=priors.shape)
    gamma[~legal] = 0.0
    total = gamma.sum(axis=1, keepdims=True)
    # Tiny alphas can underflow every draw of a row; fall back to a uniform noise there.
    empty = total[:, 0] <= 0
    if empty.any():
        gamma[empty] = legal[empty]
        total[empty] = legal[empty].sum(axis=1, keepdims=True)
    noise = gamma / total
    mixed = (1.0 - dirichlet_fraction) * priors + dirichlet_fraction * noise
    return np.where(legal, mixed, 0.0).astype(np.float32)


def select_actions(
    visit_counts: np.ndarray, temperature: float, rng: np.random.Generator
) -> np.ndarray:
    """Turn root visit counts into moves.

    Temperature 0 plays the most visited action, breaking ties uniformly at random; a
    temperature tau > 0 samples with probabilities proportional to ``counts ** (1 / tau)``.

    Args:
        visit_counts: [m, A] int (or float), every row with at least one visit.
        temperature: tau >= 0.
        rng: the random generator to draw from.

    Returns:
        [m] int64 actions.
    """
    counts = np.asarray(visit_counts, dtype=np.float64)
    if counts.ndim != 2:
        raise ValueError(f"visit_counts must be [m, A], got shape {counts.shape}")
    if temperature < 0 or not np.isfinite(temperature):
        raise ValueError(f"temperature must be finite and >= 0, got {temperature}")
    if (counts < 0).any():
        raise ValueError("visit_counts must be >= 0")
    empty = counts.max(axis=1, initial=0.0) <= 0
    if empty.any():
        rows = np.flatnonzero(empty)[:5].tolist()
        raise ValueError(f"visit_counts rows {rows} have no visits to choose from")
    if temperature == 0:
        best = counts == counts.max(axis=1, keepdims=True)
        noise = rng.random(counts.shape)
        return np.where(best, noise, -1.0).argmax(axis=1).astype(np.int64)
    with np.errstate(divide="ignore"):
        logits = np.log(counts) / temperature
    weights = np.exp(logits - logits.max(axis=1, keepdims=True))
    cumulative = np.cumsum(weights, axis=1)
    threshold = rng.random(len(counts))[:, None] * cumulative[:, -1:]
    return (cumulative > threshold).argmax(axis=1).astype(np.int64)


def select_opening_actions(
    visit_counts: np.ndarray,
    move_counts: np.ndarray,
    temperature_moves: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Self-play's move choice: temperature 1 (a draw in proportion to the visit counts) for
    the first ``temperature_moves`` moves of a game, the most visited action after them.

    Args:
        visit_counts: [m, A] root visit counts (`select_actions`).
        move_counts: [m] moves played so far in each row's game (the swap counts as one).
        temperature_moves: the moves drawn at temperature 1 (0: none).
        rng: the random generator to draw from.

    Returns:
        [m] int64 actions.
    """
    sampled = np.asarray(move_counts) < temperature_moves
    actions = np.empty(len(visit_counts), dtype=np.int64)
    for tau, rows in ((1.0, np.flatnonzero(sampled)), (0.0, np.flatnonzero(~sampled))):
        if len(rows):
            actions[rows] = select_actions(visit_counts[rows], tau, rng)
    return actions
