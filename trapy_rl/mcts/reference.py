"""A slow, plain PUCT search of one game: the oracle the batched search is tested against.

One `GameState`, a dict of nodes keyed by the path of actions from the root, Python loops and
Python floats. It follows the rules of `trapy_rl.mcts.policies` (formula, first-play urgency,
ties to the lowest action) and of `trapy_rl.mcts.search` (the root's evaluation is its first
visit, terminal positions score -1 for the player to move) without sharing their code, except
for `softmax_priors`, so that both searches start from bit-identical priors.

With ``leaves`` L > 1 (`SearchSettings.leaves_per_game` of one game) each step makes up to L
descents before it evaluates their new leaves, each pending descent counting on the edges
and nodes of its path as a visit of unchanged value (``virtual="visits"``) or as a lost one
(``virtual="loss"``), a descent that reaches a leaf claimed in the step ending the step's
descents; then the leaves are expanded and backed up
in the order of the descents. That is the rule of `trapy_rl.mcts.kernels`, written out here.

With ``forced_playouts`` k > 0 the root takes the rules of `trapy_rl.mcts.pruning`, written
out here child by child: a child below its forced playouts comes first (its pending descents
counted as visits), and `pruned_policy` is the pruned policy target.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from trapy_rl.game.batch import BatchGame
from trapy_rl.game.state import GameState
from trapy_rl.mcts.gumbel import considered_visit_sequence
from trapy_rl.mcts.policies import softmax_priors
from trapy_rl.mcts.settings import SearchSettings

__all__ = ["ReferenceSearch"]

_TINY = float(np.finfo(np.float32).tiny)


@dataclass
class _Node:
    terminal: bool
    priors: dict[int, float]  # legal action -> prior (empty at a terminal node)
    visits: int = 0
    value_sum: float = 0.0  # for the player to move at this node
    child_visits: dict[int, int] = field(default_factory=dict)
    child_value_sums: dict[int, float] = field(default_factory=dict)  # this node's view


class ReferenceSearch:
    """PUCT search of a single game, with the same public behaviour as `MCTS` for one game.

    With ``settings.search == "gumbel"`` the root follows `trapy_rl.mcts.gumbel` (written out
    here with Python loops and floats, sharing only the halving schedule), given the Gumbel
    noise of each action; the tree starts afresh at every `search`.

    Args:
        evaluator: called as ``evaluator(BatchGame.from_states([state]), np.array([0]))``.
        settings: as in `MCTS`, but no Dirichlet noise, and `search` takes its number of
            simulations.
    """

    def __init__(self, evaluator, *, settings: SearchSettings | None = None):
        settings = settings or SearchSettings()
        self.evaluator = evaluator
        self.settings = settings
        self.c_puct = settings.c_puct
        self.fpu_reduction = settings.fpu_reduction
        self.nodes: dict[tuple[int, ...], _Node] = {}
        self._root_value = 0.0  # the evaluator's value of the root
        self._gumbel: dict[int, float] = {}
        self._considered: list[int] = []
        self._schedule: tuple[int, ...] = ()
        self._forced_playouts = 0.0  # k of the search under way

    def _new_node(self, state: GameState) -> tuple[_Node, float]:
        """The node of ``state`` and its value for the player to move."""
        if state.is_over:
            return _Node(terminal=True, priors={}), -1.0
        logits, values = self.evaluator(BatchGame.from_states([state]), np.array([0]))
        legal = state.legal_mask()
        priors = softmax_priors(np.asarray(logits)[:1], legal[None])[0]
        node = _Node(terminal=False, priors={a: float(priors[a]) for a in state.legal_actions()})
        return node, float(values[0])

    def _forced_root_action(self, virtual: dict, claimed: set) -> int | None:
        """The lowest root action whose child has had a playout but fewer than its forced
        playouts, sqrt(k * P(c) * sum of the children's visits), pending descents counted as
        visits; None if there is none."""
        root = self.nodes[()]
        visits = {}
        for action in root.priors:
            pending = virtual.get((action,), 0) + ((action,) in claimed)
            visits[action] = root.child_visits.get(action, 0) + pending
        total = sum(visits.values())
        for action in sorted(root.priors):
            n = visits[action]
            if root.child_visits.get(action, 0) >= 1 and n * n < (
                self._forced_playouts * float(np.float32(root.priors[action])) * total
            ):
                return action
        return None

    def _select(self, node: _Node, path: tuple[int, ...], virtual: dict, claimed: set) -> int:
        if not path and self._forced_playouts > 0:
            forced = self._forced_root_action(virtual, claimed)
            if forced is not None:
                return forced
        # The batched search scores in float32; the same roundings here give the same ties.
        f32 = np.float32
        scale = f32(self.c_puct * math.sqrt(node.visits + virtual.get(path, 0)))
        fpu = f32(node.value_sum / node.visits - self.fpu_reduction)
        best_action, best_score = -1, -math.inf
        for action in sorted(node.priors):
            n = node.child_visits.get(action, 0)
            child = (*path, action)
            pending = virtual.get(child, 0) + (child in claimed)
            if pending == 0:
                q = f32(node.child_value_sums[action] / n) if n > 0 else fpu
                score = f32(node.priors[action]) * scale / f32(n + 1) + q
            else:  # n + pending visits, of the edge's present value or lost (-1 each)
                loaded = f32(n + pending)
                if self.settings.virtual == "loss":
                    sums = node.child_value_sums[action] if n > 0 else 0.0
                    q = f32((sums - pending) / float(loaded))
                else:
                    q = f32(node.child_value_sums[action] / n) if n > 0 else fpu
                score = f32(node.priors[action]) * scale / (loaded + f32(1)) + q
            if score > best_score:
                best_action, best_score = action, score
        return best_action

    def search(
        self,
        state: GameState,
        num_simulations: int,
        gumbel_noise: np.ndarray | None = None,
        forced_playouts: float = 0.0,
    ) -> None:
        """Run ``num_simulations`` simulations from ``state`` (the root of the kept tree).

        Args:
            state: the root position.
            num_simulations: simulations to run.
            gumbel_noise: gumbel search only: [A] the root's Gumbel noise (default none).
            forced_playouts: k of the forced playouts at the root (puct only); 0: none.
        """
        self._forced_playouts = float(forced_playouts)
        use_gumbel = self.settings.search == "gumbel"
        if use_gumbel:
            self.nodes = {}
        if () not in self.nodes:
            root, value = self._new_node(state)
            root.visits, root.value_sum = 1, value
            self.nodes[()] = root
            self._root_value = value
        if use_gumbel:
            self._start_gumbel(gumbel_noise, num_simulations)
        leaves = self.settings.leaves_per_game(1)
        done = 0
        while done < num_simulations:
            # Descend up to `leaves` times; the pending descents count as `virtual` says.
            virtual: dict[tuple[int, ...], int] = {}  # path -> pending descents through it
            claimed: set[tuple[int, ...]] = set()  # new leaves of this step
            root_pending: dict[int, int] = {}  # gumbel: root action -> pending descents
            paths = []
            for j in range(min(leaves, num_simulations - done)):
                path: tuple[int, ...] = ()
                node = self.nodes[()]
                while True:
                    if use_gumbel and not path:
                        wanted = self._schedule[done + j]
                        action = self._gumbel_root_action(wanted, root_pending)
                    else:
                        action = self._select(node, path, virtual, claimed)
                    path = (*path, action)
                    if path in claimed or path not in self.nodes:
                        break
                    node = self.nodes[path]
                    if node.terminal:
                        break
                if path in claimed:
                    break  # a collision: the next descents would repeat it
                existing = len(path) if path in self.nodes else len(path) - 1
                for depth in range(existing + 1):
                    virtual[path[:depth]] = virtual.get(path[:depth], 0) + 1
                if path not in self.nodes:
                    claimed.add(path)
                root_pending[path[0]] = root_pending.get(path[0], 0) + 1
                paths.append(path)
            # Evaluate the new leaves, then back each path up in order.
            for path in paths:
                if path in claimed:
                    position = state.copy()
                    for action in path:
                        position.play(action)
                    node, value = self._new_node(position)
                    self.nodes[path] = node
                else:  # a terminal node: the player to move there has lost
                    value = -1.0
                self._backup(path, value)
            done += len(paths)

    def _backup(self, path: tuple[int, ...], value: float) -> None:
        """Back up from the leaf at ``path``: its value, then the sign flips at every ply up."""
        for depth in range(len(path), -1, -1):
            here = self.nodes[path[:depth]]
            here.visits += 1
            here.value_sum += value
            if depth < len(path):
                action = path[depth]
                here.child_visits[action] = here.child_visits.get(action, 0) + 1
                here.child_value_sums[action] = here.child_value_sums.get(action, 0.0) + value
            value = -value

    # ------------------------------------------------------------------ the gumbel root
    def _start_gumbel(self, noise: np.ndarray | None, num_simulations: int) -> None:
        root = self.nodes[()]
        self._gumbel = {a: 0.0 if noise is None else float(noise[a]) for a in root.priors}
        k = min(self.settings.max_considered, len(root.priors))
        ranked = sorted(root.priors, key=lambda a: (-(self._gumbel[a] + self._logit(a)), a))
        self._considered = sorted(ranked[:k])
        self._schedule = considered_visit_sequence(k, num_simulations)

    def _logit(self, action: int) -> float:
        return math.log(max(float(np.float32(self.nodes[()].priors[action])), _TINY))

    def _sigma(self) -> dict[int, float]:
        """sigma(completed, rescaled q) of every legal root action."""
        root = self.nodes[()]
        visits = {a: root.child_visits.get(a, 0) for a in root.priors}
        q = {a: float(np.float32(root.child_value_sums[a] / n)) for a, n in visits.items() if n}
        total = sum(visits.values())
        weights = {a: max(float(np.float32(root.priors[a])), _TINY) for a in q}
        weighted = sum(weights[a] * q[a] for a in q) / sum(weights.values()) if q else 0.0
        mixed = (self._root_value + total * weighted) / (total + 1)
        completed = {a: q.get(a, mixed) for a in root.priors}
        low, high = min(completed.values()), max(completed.values())
        scale = (self.settings.c_visit + max(visits.values())) * self.settings.c_scale
        return {a: scale * (c - low) / max(high - low, 1e-8) for a, c in completed.items()}

    def _gumbel_root_action(self, considered_visit: int, pending: dict | None = None) -> int:
        """The best considered action with ``considered_visit`` visits, the ``pending``
        descents of the step (action -> count) counted among them."""
        root, sigma = self.nodes[()], self._sigma()
        pending = pending or {}
        best_action, best_score = -1, -math.inf
        for a in self._considered:
            if root.child_visits.get(a, 0) + pending.get(a, 0) != considered_visit:
                continue
            score = max(-1e9, self._gumbel[a] + self._logit(a) + sigma[a])
            if score > best_score:
                best_action, best_score = a, score
        return best_action

    def improved_policy(self, num_actions: int) -> np.ndarray:
        """[A] the gumbel search's policy target, softmax(logits + sigma) over legal actions."""
        sigma = self._sigma()
        scores = {a: self._logit(a) + sigma[a] for a in sigma}
        peak = max(scores.values())
        weights = {a: math.exp(v - peak) for a, v in scores.items()}
        total = sum(weights.values())
        policy = np.zeros(num_actions)
        for a, w in weights.items():
            policy[a] = w / total
        return policy

    def selected_action(self) -> int:
        """The gumbel search's move: the best considered action among the most visited."""
        root = self.nodes[()]
        most = max(root.child_visits.get(a, 0) for a in self._considered)
        return self._gumbel_root_action(most)

    # ------------------------------------------------------------------ policy target pruning
    def pruned_policy(self, num_actions: int, forced_playouts: float) -> np.ndarray:
        """[A] the policy target after policy target pruning with k = ``forced_playouts``.

        c* the most visited root child (the lowest action among equals) keeps its visits;
        every other child gives up visits one at a time, at most n_forced(c), while its PUCT
        value with the fewer visits stays below c*'s, and is dropped if 1 visit or fewer
        remain; the rest normalised.
        """
        root = self.nodes[()]
        counts = {a: n for a, n in root.child_visits.items() if n > 0}
        total = sum(counts.values())
        sqrt_n = math.sqrt(root.visits)

        def puct(action: int, n: int) -> float:
            q = float(np.float32(root.child_value_sums[action] / root.child_visits[action]))
            prior = float(np.float32(root.priors[action]))
            return q + self.c_puct * prior * sqrt_n / (1 + n)

        best = min(counts, key=lambda a: (-counts[a], a))
        best_puct = puct(best, counts[best])
        pruned = {best: counts[best]}
        for action, n in counts.items():
            if action == best:
                continue
            forced_squared = forced_playouts * float(np.float32(root.priors[action])) * total
            taken = 0
            while (
                taken + 1 <= n
                and (taken + 1) ** 2 <= forced_squared
                and puct(action, n - taken - 1) < best_puct
            ):
                taken += 1
            if n - taken > 1:
                pruned[action] = n - taken
        policy = np.zeros(num_actions)
        kept = sum(pruned.values())
        for action, n in pruned.items():
            policy[action] = n / kept
        return policy

    def advance(self, action: int) -> None:
        """Keep the subtree of ``action`` as the new tree (nothing if it was not expanded)."""
        child = self.nodes.get((action,))
        if child is None or child.terminal:
            self.nodes = {}
            return
        self.nodes = {path[1:]: node for path, node in self.nodes.items() if path[:1] == (action,)}

    def visit_counts(self, num_actions: int) -> np.ndarray:
        """[A] int, the visits of the root's children."""
        counts = np.zeros(num_actions, dtype=np.int64)
        for action, n in self.nodes[()].child_visits.items():
            counts[action] = n
        return counts

    def root_value(self) -> float:
        root = self.nodes[()]
        return root.value_sum / root.visits
