"""Evaluators and positions shared by the search tests."""

from __future__ import annotations

import numpy as np

from trapy_rl.game import BatchGame, Board, GameState
from trapy_rl.game.sampling import random_legal_actions


class UniformTestEvaluator:
    """Uniform prior over the legal actions, value 0; counts its calls and their sizes."""

    def __init__(self) -> None:
        self.call_sizes: list[int] = []

    def __call__(self, batch: BatchGame, games: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        self.call_sizes.append(len(games))
        legal = batch.legal_mask()[games]
        return np.where(legal, 0.0, -np.inf).astype(np.float32), np.zeros(len(games), np.float32)


class HashEvaluator:
    """Pseudo-random logits and values, a fixed function of each position alone.

    Each row is computed on its own (no reduction across rows), so a position gets the same
    numbers whether it is evaluated alone or among many. With ``mask_illegal=False`` the
    illegal actions get the highest logits, to check that the search masks them itself.
    """

    def __init__(self, board: Board, *, seed: int = 0, mask_illegal: bool = True) -> None:
        rng = np.random.default_rng(seed)
        k = board.num_cells
        self.blue, self.yellow = rng.standard_normal(k), rng.standard_normal(k)
        self.action_phase = rng.standard_normal(board.num_actions) * 5.0
        self.mask_illegal = mask_illegal

    def __call__(self, batch: BatchGame, games: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        stones = batch.stones[games]
        h = ((stones == 1) * self.blue + (stones == 2) * self.yellow).sum(axis=1)
        h = h + 0.37 * batch.move_count[games]
        logits = 2.0 * np.sin(3.0 * h[:, None] + self.action_phase[None, :])
        legal = batch.legal_mask()[games]
        logits = np.where(legal, logits, -np.inf if self.mask_illegal else 10.0)
        return logits.astype(np.float32), np.tanh(h).astype(np.float32)


class BanditEvaluator:
    """A one-step bandit: every position below the root action ``a`` is worth ``w[a]`` to the
    player to move at the root, so the root's Q(a) is exactly ``w[a]`` whatever the depth.

    The root (``root_moves`` moves played) is worth 0; its prior is ``softmax(root_logits)``
    (uniform by default); positions below it get a uniform prior.
    """

    def __init__(self, root_moves: int, w: np.ndarray, root_logits: np.ndarray | None = None):
        self.root_moves = root_moves
        self.w = np.asarray(w, dtype=np.float32)
        self.root_logits = root_logits

    def __call__(self, batch: BatchGame, games: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        legal = batch.legal_mask()[games]
        logits = np.where(legal, 0.0, -np.inf).astype(np.float32)
        depth = batch.move_count[games].astype(np.int64) - self.root_moves
        first = batch.history[games, min(self.root_moves, batch.history.shape[1] - 1)]
        values = np.where(depth > 0, self.w[np.maximum(first, 0)], 0.0)
        values = np.where(depth % 2 == 0, values, -values).astype(np.float32)
        if self.root_logits is not None:
            at_root = depth == 0
            logits[at_root] = np.where(legal[at_root], self.root_logits, -np.inf)
        return logits, values


def random_positions(board: Board, plies: list[int], seed: int) -> BatchGame:
    """A batch with one game per entry of ``plies``, that many random moves in (none over)."""
    rng = np.random.default_rng(seed)
    states = []
    for ply in plies:
        while True:
            state = GameState(board)
            for _ in range(ply):
                if state.is_over:
                    break
                legal = state.legal_mask()[None]
                state.play(int(random_legal_actions(legal, rng)[0]))
            if not state.is_over:
                states.append(state)
                break
    return BatchGame.from_states(states)


def winning_moves(state: GameState) -> set[int]:
    """The actions that win at once for the player to move, by the reference rules."""
    wins = set()
    for action in state.legal_actions():
        if state.copy().play(action).winner == state.to_move:
            wins.add(action)
    return wins
