"""The rules engine: board geometry, one readable game, many vectorized games, input planes.

Pictures of a position live beside it and are imported by name, not here: `render` (the board
as text), `geometry` (the hexagons in the plane, numpy only) and `draw` (matplotlib).
"""

from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import REGION_COLORS, REGION_NAMES, Board
from trapy_rl.game.planes import (
    NUM_PLANES,
    encode_planes,
    encode_state_planes,
    mirror_planes,
    mirror_policy,
)
from trapy_rl.game.state import (
    BLUE,
    EMPTY,
    PLAYER_NAMES,
    YELLOW,
    GameState,
    IllegalMoveError,
    find_winner,
    other,
)

__all__ = [
    "BLUE",
    "EMPTY",
    "NUM_PLANES",
    "PLAYER_NAMES",
    "REGION_COLORS",
    "REGION_NAMES",
    "YELLOW",
    "BatchGame",
    "Board",
    "GameState",
    "IllegalMoveError",
    "encode_planes",
    "encode_state_planes",
    "find_winner",
    "mirror_planes",
    "mirror_policy",
    "other",
]
