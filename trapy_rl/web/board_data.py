"""The board's geometry and colours as plain data, for the page's SVG.

One geometry for every picture: the hexagons, the region bands and the centres are those of
`trapy_rl.game.geometry` (cell widths, y up), the colours those of `trapy_rl.game.draw`.
The page flips y and scales; it computes nothing about hexagons itself.

Shapes: K cells, m band quadrilaterals.

>>> data = board_payload(Board(2))
>>> len(data["names"]), len(data["corners"][0]), data["names"][:2]
(5, 6, ['a1', 'b1'])
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from trapy_rl.game.board import REGION_NAMES, Board
from trapy_rl.game.draw import PALETTE
from trapy_rl.game.geometry import bounding_box, cell_centers, hexagon_corners, region_bands

__all__ = ["board_payload"]

_DECIMALS = 4  # a ten-thousandth of a cell width: far below a pixel, and short JSON
_MARGIN = 0.6  # around the hexagons, room for the region bands, in cell widths


def _rounded(array: np.ndarray) -> list:
    return np.round(array, _DECIMALS).tolist()


@functools.cache
def board_payload(board: Board) -> dict[str, Any]:
    """Everything the page needs to draw ``board``, JSON-ready (cached per board).

    Returns:
        A dict: ``side``, ``num_cells`` (K), ``swap_action``; ``names`` [K] str; ``centers``
        [K, 2] and ``corners`` [K, 6, 2] (x, y) in cell widths, y up; ``bands``: per region
        (in region-bit order) [m, 4, 2] quadrilaterals; ``box`` (x_min, x_max, y_min, y_max)
        with a margin for the bands; ``regions`` [5] names; ``palette``: `PALETTE`.
    """
    return {
        "side": board.side,
        "num_cells": board.num_cells,
        "swap_action": board.swap_action,
        "names": list(board.names),
        "centers": _rounded(cell_centers(board)),
        "corners": _rounded(hexagon_corners(board)),
        "bands": [_rounded(quads) for quads in region_bands(board)],
        "box": [round(end, _DECIMALS) for end in bounding_box(board, margin=_MARGIN)],
        "regions": list(REGION_NAMES),
        "palette": PALETTE,
    }
