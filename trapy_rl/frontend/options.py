"""What every front end reads the same way from its user: a board side and a colour name.

>>> check_side(7), COLOURS["yellow"]
(7, 2)
"""

from __future__ import annotations

import numpy as np

from trapy_rl.game.board import MAX_SIDE
from trapy_rl.game.state import BLUE, YELLOW

__all__ = ["COLOURS", "check_side"]

COLOURS = {"b": BLUE, "blue": BLUE, "y": YELLOW, "yellow": YELLOW}
"""The player each colour name stands for (names are lower case: callers fold the case)."""


def check_side(side: int) -> int:
    """``side`` as an int if it is an integer 2 to `MAX_SIDE`; else ValueError naming the range."""
    if isinstance(side, bool) or not isinstance(side, (int, np.integer)):
        raise ValueError(f"side must be an integer 2 to {MAX_SIDE}, got {side!r}")
    if not 2 <= side <= MAX_SIDE:
        raise ValueError(f"side must be 2 to {MAX_SIDE}, got {side}")
    return int(side)
