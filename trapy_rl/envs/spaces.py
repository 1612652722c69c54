"""Action spaces whose ``sample()`` draws a legal move of the environment's current position.

Trap Y's action set is fixed (A = K cells + the swap), but which actions are legal changes every
move: an occupied cell or a swap after move two raises `IllegalMoveError`. A plain
``Discrete(A).sample()`` is therefore illegal with a chance that grows as the board fills, which
breaks the usual ``env.step(env.action_space.sample())`` loop. These spaces are ``Discrete`` and
``MultiDiscrete`` in every other respect (they compare equal to them, and ``sample(mask=...)``
works as usual); only ``sample()`` without arguments asks the environment for its legal actions
and draws uniformly among them, from the space's own generator (seed it with ``space.seed``).

Shapes: N environments, A actions.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from gymnasium.spaces import Discrete, MultiDiscrete

__all__ = ["BatchedLegalActions", "LegalActions"]


class LegalActions(Discrete):
    """``Discrete(A)`` whose argument-free ``sample()`` is uniform over the legal actions.

    Args:
        n: A, the number of actions.
        legal_mask: returns the current [A] bool legal mask, or None (no position yet: then
            ``sample()`` is uniform over all A actions). An all-False mask (the game is over)
            gives action 0, as ``Discrete.sample`` does for an empty mask.
        seed: seed of the space's generator.
    """

    def __init__(
        self, n: int, legal_mask: Callable[[], np.ndarray | None], *, seed: int | None = None
    ) -> None:
        super().__init__(n, seed=seed)
        self._legal_mask = legal_mask

    def sample(
        self, mask: np.ndarray | None = None, probability: np.ndarray | None = None
    ) -> np.int64:
        if mask is None and probability is None:
            legal = self._legal_mask()
            if legal is not None:
                mask = np.asarray(legal, dtype=np.int8)
        return super().sample(mask=mask, probability=probability)


class BatchedLegalActions(MultiDiscrete):
    """``MultiDiscrete([A] * N)`` whose argument-free ``sample()`` is a legal action per env.

    Args:
        n: A, the number of actions.
        num_envs: N.
        legal_mask: returns the current [N, A] bool legal mask, or None (uniform over all).
            A row with no legal action (a finished game, whose next action is ignored) gets 0.
        seed: seed of the space's generator.
    """

    def __init__(
        self,
        n: int,
        num_envs: int,
        legal_mask: Callable[[], np.ndarray | None],
        *,
        seed: int | None = None,
    ) -> None:
        super().__init__(np.full(num_envs, n, dtype=np.int64), seed=seed)
        self._legal_mask = legal_mask

    def sample(self, mask: tuple | None = None, probability: tuple | None = None) -> np.ndarray:
        if mask is not None or probability is not None:
            return super().sample(mask=mask, probability=probability)
        legal = self._legal_mask()
        if legal is None:
            return super().sample()
        # argmax of uniform noise over the legal entries is a uniform choice among them.
        noise = self.np_random.random(legal.shape)
        noise[~legal] = -1.0
        return noise.argmax(axis=1).astype(self.dtype)
