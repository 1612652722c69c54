"""Opening swap values: the value of every first move, its pictures and its summary.

>>> from trapy_rl.game import Board
>>> table = estimate_openings(side=2, estimator="rollout", playouts=200, cache_dir=None)
>>> list(table.columns)
['cell', 'name', 'v', 'low', 'high', 'games', 'swap', 'blue_chance', 'rank']
>>> len(table) == Board(2).num_cells
True
"""

from trapy_rl.analysis.estimators import (
    mirror_average,
    mirror_pool,
    net_values,
    play_from,
    playout_counts,
    refine_fairest,
    rollout_counts,
    search_values,
    swapped_openings,
)
from trapy_rl.analysis.figures import draw_opening_map, draw_ranking, ranking_text
from trapy_rl.analysis.openings import (
    ESTIMATORS,
    TABLE_COLUMNS,
    default_cache_dir,
    estimate_openings,
    opening_table,
)
from trapy_rl.analysis.playout_jobs import PlayoutJob
from trapy_rl.analysis.published import load_played_map, shipped_map_names
from trapy_rl.analysis.summary import OpeningSummary, near_long_edge_middle, summarize

__all__ = [
    "ESTIMATORS",
    "TABLE_COLUMNS",
    "OpeningSummary",
    "PlayoutJob",
    "default_cache_dir",
    "draw_opening_map",
    "draw_ranking",
    "estimate_openings",
    "load_played_map",
    "mirror_average",
    "mirror_pool",
    "near_long_edge_middle",
    "net_values",
    "opening_table",
    "play_from",
    "playout_counts",
    "ranking_text",
    "refine_fairest",
    "rollout_counts",
    "search_values",
    "shipped_map_names",
    "summarize",
    "swapped_openings",
]
