"""A slow, plain PUCT search of one game: the oracle the batched search is tested against.

One `GameState`, a dict of nodes keyed by the path of actions from the root, Python loops and
Python floats. It follows the rules of `trapy_rl.mcts.policies` (formula, first-play urgency,
ties to the lowest action) and of `trapy_rl.mcts.search` (the root's evaluation is its first
visit, terminal positions score -1 for the player to move) without sharing their code, except
for `softmax_priors`, so that both searches start from bit-identical priors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from trapy_rl.game.batch import BatchGame
from trapy_rl.game.state import GameState
from trapy_rl.mcts.policies import softmax_priors
from trapy_rl.mcts.settings import SearchSettings

__all__ = ["ReferenceSearch"]


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

    Args:
        evaluator: called as ``evaluator(BatchGame.from_states([state]), np.array([0]))``.
        settings: as in `MCTS`; only ``c_puct`` and ``fpu_reduction`` matter here (no noise,
            and `search` takes its number of simulations).
    """

    def __init__(self, evaluator, *, settings: SearchSettings | None = None):
        settings = settings or SearchSettings()
        self.evaluator = evaluator
        self.c_puct = settings.c_puct
        self.fpu_reduction = settings.fpu_reduction
        self.nodes: dict[tuple[int, ...], _Node] = {}

    def _new_node(self, state: GameState) -> tuple[_Node, float]:
        """The node of ``state`` and its value for the player to move."""
        if state.is_over:
            return _Node(terminal=True, priors={}), -1.0
        logits, values = self.evaluator(BatchGame.from_states([state]), np.array([0]))
        legal = state.legal_mask()
        priors = softmax_priors(np.asarray(logits)[:1], legal[None])[0]
        node = _Node(terminal=False, priors={a: float(priors[a]) for a in state.legal_actions()})
        return node, float(values[0])

    def _select(self, node: _Node) -> int:
        # The batched search scores in float32; the same roundings here give the same ties.
        f32 = np.float32
        scale = f32(self.c_puct * math.sqrt(node.visits))
        fpu = f32(node.value_sum / node.visits - self.fpu_reduction)
        best_action, best_score = -1, -math.inf
        for action in sorted(node.priors):
            n = node.child_visits.get(action, 0)
            q = f32(node.child_value_sums[action] / n) if n > 0 else fpu
            score = f32(node.priors[action]) * scale / f32(n + 1) + q
            if score > best_score:
                best_action, best_score = action, score
        return best_action

    def search(self, state: GameState, num_simulations: int) -> None:
        """Run ``num_simulations`` simulations from ``state`` (the root of the kept tree)."""
        if () not in self.nodes:
            root, value = self._new_node(state)
            root.visits, root.value_sum = 1, value
            self.nodes[()] = root
        for _ in range(num_simulations):
            path: tuple[int, ...] = ()
            position = state.copy()
            node = self.nodes[()]
            while True:
                action = self._select(node)
                position.play(action)
                path = (*path, action)
                if path not in self.nodes:
                    node, value = self._new_node(position)
                    self.nodes[path] = node
                    break
                node = self.nodes[path]
                if node.terminal:
                    value = -1.0
                    break
            # Back up from the leaf: its value, then the sign flips at every ply up.
            for depth in range(len(path), -1, -1):
                here = self.nodes[path[:depth]]
                here.visits += 1
                here.value_sum += value
                if depth < len(path):
                    action = path[depth]
                    here.child_visits[action] = here.child_visits.get(action, 0) + 1
                    here.child_value_sums[action] = here.child_value_sums.get(action, 0.0) + value
                value = -value

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
