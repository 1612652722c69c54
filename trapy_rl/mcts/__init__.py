"""Batched Monte-Carlo tree search (PUCT, Gumbel root) over many games at once, with subtree
reuse, and several leaves per evaluator call within one game (compiled, `trapy_rl.mcts.kernels`)."""

from trapy_rl.mcts.policies import add_dirichlet_noise, select_actions, select_puct, softmax_priors
from trapy_rl.mcts.reference import ReferenceSearch
from trapy_rl.mcts.search import MCTS, Evaluator, SearchResult
from trapy_rl.mcts.settings import SearchSettings
from trapy_rl.mcts.tree import Tree

__all__ = [
    "MCTS",
    "Evaluator",
    "ReferenceSearch",
    "SearchResult",
    "SearchSettings",
    "Tree",
    "add_dirichlet_noise",
    "select_actions",
    "select_puct",
    "softmax_priors",
]
