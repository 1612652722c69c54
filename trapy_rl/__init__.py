"""trapy_rl: reinforcement learning for Trap Y, a Hex/Y-family connection game.

Importing the package registers the Gymnasium environment ``trapy_rl/TrapY-v0``, with a native
vector environment for ``gymnasium.make_vec(..., vectorization_mode="vector_entry_point")``.

>>> import gymnasium, trapy_rl
>>> env = gymnasium.make("trapy_rl/TrapY-v0", side=3)
>>> obs, info = env.reset(seed=0)
>>> obs.shape, info["action_mask"].shape
((9, 3, 5), (13,))
"""

from importlib.metadata import PackageNotFoundError, version

import gymnasium

from trapy_rl.game import BatchGame, Board, GameState, IllegalMoveError, find_winner

try:
    __version__ = version("trapy-rl")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"

__all__ = ["ENV_ID", "BatchGame", "Board", "GameState", "IllegalMoveError", "find_winner"]

ENV_ID = "trapy_rl/TrapY-v0"

if ENV_ID not in gymnasium.registry:  # importing twice (or reloading) registers once
    gymnasium.register(
        id=ENV_ID,
        entry_point="trapy_rl.envs.trap_y_env:TrapYEnv",
        vector_entry_point="trapy_rl.envs.vector_env:TrapYVectorEnv",
    )
