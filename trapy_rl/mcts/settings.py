"""`SearchSettings`: every setting of the search, with its one default, in one frozen object.

Self-play, the agents and the command lines build one `SearchSettings` and pass it whole to
`trapy_rl.mcts.MCTS`; nobody re-maps its fields by hand. The training config's ``mcts`` group
(``configs/mcts/*.yaml``) has exactly these keys, and an agent spec's options use the same
names (``mcts:PATH:400,c_puct=2``).

>>> settings = SearchSettings(num_simulations=64)
>>> settings.c_puct, settings.replace(c_puct=2.0).c_puct
(1.25, 2.0)
>>> SearchSettings(num_simulations=0)
Traceback (most recent call last):
...
ValueError: num_simulations must be >= 1 (an integer), got 0
>>> settings.leaves_per_game(1), settings.leaves_per_game(256)  # leaves=0: auto
(16, 1)
>>> settings.replace(leaves=4).leaves_per_game(256)
4
>>> settings.virtual, SearchSettings(virtual="loss").virtual
('visits', 'loss')
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["AUTO_LEAVES", "SEARCHES", "VIRTUALS", "SearchSettings"]

SEARCHES = ("puct", "gumbel")
# How a pending descent of the leaf-parallel search counts on its path (`SearchSettings.virtual`).
VIRTUALS = ("visits", "loss")
# ``leaves=0`` (auto): the leaves a search of one game sends to each evaluator call.
AUTO_LEAVES = 16


@dataclass(frozen=True)
class SearchSettings:
    """How a search spends and steers its simulations.

    Attributes:
        num_simulations: simulations per searched move (a move played from a tree kept from
            earlier moves adds this many to the visits already there).
        search: ``puct`` (AlphaZero: PUCT everywhere, Dirichlet noise at a self-play root,
            the move and the policy target from the visit counts) or ``gumbel`` (Gumbel root
            search, `trapy_rl.mcts.gumbel`: sequential halving over sampled root actions, the
            move chosen by the search, the improved policy as the target; PUCT below the root).
        c_puct: the PUCT exploration constant (see `trapy_rl.mcts.policies.select_puct`).
        fpu_reduction: an unvisited child starts at its parent's mean value minus this.
        dirichlet_alpha: concentration of the root noise that PUCT self-play adds.
        dirichlet_fraction: the weight of that noise in the root prior, in [0, 1].
        max_considered: gumbel: root actions sampled (k).
        c_visit, c_scale: gumbel: ``sigma(q) = (c_visit + max visits) * c_scale * q``.
        leaves: the leaves each game's tree descends to before one evaluator call scores
            them all (leaf parallelism: each pending descent counts on its path as
            ``virtual`` says, so the next ones spread out; `trapy_rl.mcts.kernels`). 1 is the
            sequential search. 0 (the default, `leaves_per_game`) is 16 for a search of
            one game (GTP, the web board, the analysis of a position), where one leaf per
            net call would leave the net's fixed cost per call to every simulation, and 1 for
            a search of B >= 2 games (self-play, matches), whose games share each call
            already. So under 0 a game's tree depends on whether it is searched alone; give
            a number for trees that do not.
        virtual: how the pending descents of one step count on their paths when more than
            one leaf a game is sent (`trapy_rl.mcts.kernels`): ``visits`` (the default;
            WU-UCT: a visit of the edge's present value, so the descents spread only where
            the search is unsure, which suits a net's steady values) or ``loss`` (a lost
            visit, -1 to the player choosing the edge: they spread wider, which suits noisy
            rollout values; the ``uct`` agents default to it). Unused with one leaf a game.
    """

    num_simulations: int = 200
    search: str = "puct"
    c_puct: float = 1.25
    fpu_reduction: float = 0.0
    dirichlet_alpha: float = 0.3
    dirichlet_fraction: float = 0.25
    max_considered: int = 16
    c_visit: float = 50.0
    c_scale: float = 0.1
    leaves: int = 0
    virtual: str = "visits"

    def __post_init__(self) -> None:
        n = self.num_simulations
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"num_simulations must be >= 1 (an integer), got {n!r}")
        if self.search not in SEARCHES:
            raise ValueError(f"search must be one of {SEARCHES}, got {self.search!r}")
        if self.virtual not in VIRTUALS:
            raise ValueError(f"virtual must be one of {VIRTUALS}, got {self.virtual!r}")
        k = self.max_considered
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"max_considered must be >= 1 (an integer), got {k!r}")
        leaves = self.leaves
        if isinstance(leaves, bool) or not isinstance(leaves, (int, np.integer)) or leaves < 0:
            raise ValueError(f"leaves must be >= 0 (an integer; 0: auto), got {leaves!r}")
        for name, low, high, closed in (
            ("c_puct", 0.0, math.inf, False),
            ("fpu_reduction", -math.inf, math.inf, True),
            ("dirichlet_alpha", 0.0, math.inf, False),
            ("dirichlet_fraction", 0.0, 1.0, True),
            ("c_visit", 0.0, math.inf, True),
            ("c_scale", 0.0, math.inf, False),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
                raise ValueError(f"{name} must be a number, got {value!r}")
            inside = (low <= value if closed else low < value) and value <= high
            if not (math.isfinite(value) and inside):
                bound = f"in [{low}, {high}]" if closed else f"> {low}"
                raise ValueError(f"{name} must be finite and {bound}, got {value!r}")
        # Plain Python numbers, whatever the caller passed (numpy scalars, ints for floats).
        object.__setattr__(self, "num_simulations", int(n))
        object.__setattr__(self, "max_considered", int(k))
        object.__setattr__(self, "leaves", int(leaves))
        floats = ("c_puct", "fpu_reduction", "dirichlet_alpha", "dirichlet_fraction")
        for name in (*floats, "c_visit", "c_scale"):
            object.__setattr__(self, name, float(getattr(self, name)))

    def leaves_per_game(self, num_games: int) -> int:
        """The leaves a game's tree descends to per evaluator call in a search of
        ``num_games`` games: ``leaves``, or for 0 `AUTO_LEAVES` for one game and 1 for more."""
        return self.leaves or (AUTO_LEAVES if num_games == 1 else 1)

    def replace(self, **changes: Any) -> SearchSettings:
        """A copy with ``changes`` (checked like the constructor's arguments)."""
        return dataclasses.replace(self, **changes)
