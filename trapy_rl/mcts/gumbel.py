"""Gumbel root search (Danihelka et al. 2022, "Policy improvement by planning with Gumbel").

Legend: n games, A actions. Values are for the player to move at the root, in [-1, 1].

At the root of each game the search samples k actions without replacement by the Gumbel-top-k
trick (the k largest ``g(a) + logits(a)``, g standard Gumbel noise; with no noise, the k most
probable), then spends its simulations on them by *sequential halving*: rounds in which every
remaining action gets the same number of visits, after each of which the better half (by
``g + logits + sigma(q)``) stays. `considered_visit_sequence` lays out that schedule as the
visit count the action of each simulation must have, and `root_scores` picks among the actions
that have it, so the whole schedule runs one simulation at a time. Below the root the usual
PUCT selection applies.

The played action is the best remaining one, ``argmax g + logits + sigma(q)`` among the most
visited; the policy target is the *improved policy* ``softmax(logits + sigma(completed q))``:
Q-values of the visited actions and, for the others, the mixed value (the root's own value
mixed with the prior-weighted mean of the visited Q-values), rescaled to [0, 1] over the legal
actions, then scaled by ``sigma(q) = (c_visit + max visits) * c_scale * q``. Even with a
handful of simulations acting on it improves the policy in expectation, which plain visit
counts do not.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from trapy_rl.mcts.settings import SearchSettings
    from trapy_rl.mcts.tree import Tree

__all__ = [
    "GumbelRoot",
    "completed_q",
    "considered_visit_sequence",
    "improved_policy",
    "root_scores",
    "sigma",
    "top_k_mask",
]

_LOW_SCORE = -1e9  # floor of a legal action's score, so -inf means illegal or not its turn


@functools.cache
def considered_visit_sequence(num_considered: int, num_simulations: int) -> tuple[int, ...]:
    """The visit count the root action of each simulation must have, by sequential halving.

    Rounds: with m actions remaining, each gets ``max(1, floor(n / (ceil(log2 k) * m)))``
    more visits, one per action in turn; then m halves (never below 2).

    Args:
        num_considered: k, actions sampled at the root (1 visits one action throughout).
        num_simulations: n.

    Returns:
        n integers: before simulation i, the chosen action has exactly that many visits.
    """
    if num_considered <= 1:
        return tuple(range(num_simulations))
    rounds = math.ceil(math.log2(num_considered))
    sequence: list[int] = []
    visits = [0] * num_considered
    remaining = num_considered
    while len(sequence) < num_simulations:
        extra = max(1, num_simulations // (rounds * remaining))
        for _ in range(extra):
            sequence.extend(visits[:remaining])
            for i in range(remaining):
                visits[i] += 1
        remaining = max(2, remaining // 2)
    return tuple(sequence[:num_simulations])


def top_k_mask(scores: np.ndarray, legal: np.ndarray, k: int) -> np.ndarray:
    """[n, A] bool: the ``min(k, legal actions)`` legal actions of highest score in each row.

    Args:
        scores: [n, A] float, ``g + logits`` (ties go to the lower action).
        legal: [n, A] bool.
        k: actions to keep at most.
    """
    masked = np.where(legal, scores, -np.inf)
    order = np.argsort(-masked, axis=1, kind="stable")[:, :k]  # [n, k]
    chosen = np.zeros(legal.shape, dtype=bool)
    np.put_along_axis(chosen, order, True, axis=1)
    return chosen & legal


def completed_q(
    q: np.ndarray, visits: np.ndarray, priors: np.ndarray, raw_values: np.ndarray, legal: np.ndarray
) -> np.ndarray:
    """Q-values completed by the mixed value and rescaled to [0, 1] over the legal actions.

    Args:
        q: [n, A] float, the visited actions' mean values (anything elsewhere).
        visits: [n, A] float, the root edges' visit counts.
        priors: [n, A] float, the prior (0 at illegal actions).
        raw_values: [n] float, the evaluator's value of each root.
        legal: [n, A] bool.

    Returns:
        [n, A] float64 in [0, 1] at the legal actions (0 elsewhere).
    """
    visited = visits > 0
    total = visits.sum(axis=1)  # [n]
    weights = np.where(visited, np.maximum(priors, np.finfo(np.float32).tiny), 0.0)
    weight_sums = weights.sum(axis=1)
    weighted_q = (weights * np.where(visited, q, 0.0)).sum(axis=1) / np.maximum(weight_sums, 1e-30)
    mixed = (raw_values + total * weighted_q) / (total + 1.0)  # [n]
    completed = np.where(visited, q, mixed[:, None]).astype(np.float64)
    low = np.where(legal, completed, np.inf).min(axis=1, keepdims=True)
    high = np.where(legal, completed, -np.inf).max(axis=1, keepdims=True)
    rescaled = (completed - low) / np.maximum(high - low, 1e-8)
    return np.where(legal, rescaled, 0.0)


def sigma(completed: np.ndarray, visits: np.ndarray, *, c_visit: float, c_scale: float):
    """``(c_visit + max visits) * c_scale * completed``: [n, A] float64, the Q bonus."""
    return (c_visit + visits.max(axis=1, keepdims=True)) * c_scale * completed


def improved_policy(logits: np.ndarray, bonus: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """``softmax(logits + sigma(completed q))`` over the legal actions: [n, A] float32."""
    scores = np.where(legal, logits + bonus, -np.inf)
    scores -= scores.max(axis=1, keepdims=True)
    weights = np.exp(scores)
    return (weights / weights.sum(axis=1, keepdims=True)).astype(np.float32)


def root_scores(
    gumbel: np.ndarray,
    logits: np.ndarray,
    bonus: np.ndarray,
    visits: np.ndarray,
    considered_visit: np.ndarray,
    considered: np.ndarray,
) -> np.ndarray:
    """The scores whose argmax is the next root action (or, at the end, the one to play).

    Args:
        gumbel: [n, A] float, the root's Gumbel noise (0 without noise).
        logits: [n, A] float, the prior logits (finite at the legal actions).
        bonus: [n, A] float, `sigma` of the completed Q-values.
        visits: [n, A] float, the root edges' visit counts.
        considered_visit: [n] int, the visit count the chosen action must have (the largest
            count, to choose the action to play).
        considered: [n, A] bool, the sampled actions (`top_k_mask`).

    Returns:
        [n, A] float64: -inf except at considered actions with ``considered_visit`` visits.
    """
    base = np.maximum(_LOW_SCORE, gumbel + logits + bonus)
    eligible = considered & (visits == considered_visit[:, None])
    return np.where(eligible, base, -np.inf)


class GumbelRoot:
    """The root side of one gumbel search of the games ``gs`` (see `trapy_rl.mcts.gumbel`).

    Args:
        tree: the search tree; it holds the roots, just expanded (one visit each).
        settings: the search's settings (``max_considered``, ``c_visit``, ``c_scale``).
        rng: draws the Gumbel noise.
        gs: [n] the games.
        priors: [n, A] float32, the root priors, -inf at illegal actions.
        num_simulations: the search's simulations (the halving schedule spans them).
        add_noise: sample Gumbel noise (self-play), else none (agents: deterministic).
    """

    def __init__(
        self,
        tree: Tree,
        settings: SearchSettings,
        rng: np.random.Generator,
        gs: np.ndarray,
        priors: np.ndarray,
        num_simulations: int,
        *,
        add_noise: bool,
    ) -> None:
        self.tree, self.settings, self.gs = tree, settings, gs
        self.legal = priors > -np.inf  # [n, A]
        self.priors = np.where(self.legal, priors, 0.0).astype(np.float64)
        tiny = np.finfo(np.float32).tiny
        self.logits = np.where(self.legal, np.log(np.maximum(self.priors, tiny)), 0.0)
        self.gumbel = rng.gumbel(size=priors.shape) if add_noise else np.zeros(priors.shape)
        self.raw_values = tree.node_value_sums[gs, 0] / tree.node_visits[gs, 0]  # [n]
        k = np.minimum(settings.max_considered, self.legal.sum(axis=1))  # [n]
        self.considered = np.zeros(priors.shape, dtype=bool)
        for size in np.unique(k):
            rows = np.flatnonzero(k == size)
            scores = self.gumbel[rows] + self.logits[rows]
            self.considered[rows] = top_k_mask(scores, self.legal[rows], int(size))
        self.schedule = np.array(  # [n, S] the visits the chosen action needs, per simulation
            [considered_visit_sequence(int(size), num_simulations) for size in k],
            dtype=np.float32,
        ).reshape(len(gs), num_simulations)

    def _bonus(self, visits: np.ndarray, rows: np.ndarray | slice = slice(None)) -> np.ndarray:
        q = self.tree.edge_q[self.gs[rows], 0].astype(np.float64)
        priors, raw_values, legal = self.priors[rows], self.raw_values[rows], self.legal[rows]
        completed = completed_q(q, visits, priors, raw_values, legal)
        settings = self.settings
        return sigma(completed, visits, c_visit=settings.c_visit, c_scale=settings.c_scale)

    def actions(self, i: int) -> np.ndarray:
        """[n] the root actions of simulation ``i`` (in every game)."""
        n = len(self.gs)
        return self.batch_actions(np.full(n, i), np.ones(n, dtype=np.intp))[:, 0]

    def batch_actions(
        self, done: np.ndarray, counts: np.ndarray, *, games: np.ndarray | None = None
    ) -> np.ndarray:
        """The root actions of the next ``counts[i]`` simulations of each game, chosen before
        any of them is backed up (the leaf-parallel search).

        Each choice follows the schedule as if the earlier ones of the step had been made
        already: their actions count as visited, while the Q bonus is that of the visits
        backed up.

        Args:
            done: [r] int, the simulations each game has made (the schedule's position).
            counts: [r] int >= 1, the simulations to choose for.
            games: [r] int, the rows of ``gs`` (default all, in order).

        Returns:
            [r, max(counts)] intp; entries past a game's count are unused.
        """
        rows = np.arange(len(self.gs)) if games is None else np.asarray(games, dtype=np.intp)
        visits = self.tree.edge_visits[self.gs[rows], 0]  # [r, A] float32
        bonus = self._bonus(visits, rows)
        gumbel, logits, considered = self.gumbel[rows], self.logits[rows], self.considered[rows]
        pending = np.zeros_like(visits)
        last = self.schedule.shape[1] - 1
        width = int(counts.max())
        actions = np.zeros((len(rows), width), dtype=np.intp)
        for j in range(width):
            needed = self.schedule[rows, np.minimum(done + j, last)]
            scores = root_scores(gumbel, logits, bonus, visits + pending, needed, considered)
            actions[:, j] = scores.argmax(axis=1)
            active = np.flatnonzero(j < counts)
            pending[active, actions[active, j]] += 1
        return actions

    def finish(self) -> tuple[np.ndarray, np.ndarray]:
        """The improved policy [n, A] float32 and the action to play [n] int64."""
        visits = self.tree.edge_visits[self.gs, 0]
        bonus = self._bonus(visits)
        policy = improved_policy(self.logits, bonus, self.legal)
        most = np.where(self.considered, visits, -1.0).max(axis=1)
        scores = root_scores(self.gumbel, self.logits, bonus, visits, most, self.considered)
        return policy, scores.argmax(axis=1).astype(np.int64)
