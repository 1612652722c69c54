"""Many games of Trap Y at once, as numpy arrays, with incremental win detection.

Each placement looks only at the six neighbours of the new stone. Every stone carries a group
label (the cell index of one stone of its group) and every label carries the region mask its
group touches, so a move ORs at most six masks, and only a move that joins two or more groups
relabels the cells of the smaller ones (in the few games where that happens). This is what
`GameState` computes with a flood fill, at a cost that does not grow with the group.

Shapes: B games, K cells, A = K + 1 actions. Internally the cell axis has one extra column,
index K, that is always empty: the -1 padding of `Board.neighbors` then reads it for free.

Mutating methods: `step`, `reset`, `resign`, `copy_from`, `assign`. Everything else reads.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from trapy_rl.game.board import Board
from trapy_rl.game.state import BLUE, EMPTY, YELLOW, GameState, IllegalMoveError

__all__ = ["BatchGame"]

# The arrays that make up the state of a batch (copied, taken and assigned together).
_FIELDS = (
    "_stones",
    "_labels",
    "_group_regions",
    "_legal",
    "to_move",
    "winner",
    "move_count",
    "history",
    "resigned",
)


class BatchGame:
    """B independent games stepped together.

    Attributes:
        board: the geometry shared by all games.
        num_games: B.
        stones: [B, K] int8 view, 0 empty, 1 blue, 2 yellow.
        to_move: [B] int8, the player to move (1 blue, 2 yellow).
        winner: [B] int8, 0 while the game goes on.
        move_count: [B] int16, moves played (the swap counts as a move).
        history: [B, K + 1] int16, the actions played, -1 past ``move_count``.
        resigned: [B] bool, the game ended by resignation.
    """

    def __init__(self, num_games: int, board: Board | None = None, *, side: int | None = None):
        if num_games < 1:
            raise ValueError(f"num_games must be >= 1, got {num_games}")
        if board is not None and side is not None and board.side != side:
            raise ValueError(f"board of side {board.side} given with side={side}")
        self.board = board if board is not None else Board(side if side is not None else 10)
        self.num_games = int(num_games)
        k = self.board.num_cells
        self._stones = np.zeros((num_games, k + 1), dtype=np.int8)
        # The label of an empty cell is K, whose group region mask is always 0.
        self._labels = np.full((num_games, k + 1), k, dtype=np.int16)
        self._group_regions = np.zeros((num_games, k + 1), dtype=np.uint8)
        self.to_move = np.full(num_games, BLUE, dtype=np.int8)
        self.winner = np.zeros(num_games, dtype=np.int8)
        self.move_count = np.zeros(num_games, dtype=np.int16)
        self.history = np.full((num_games, k + 1), -1, dtype=np.int16)
        self.resigned = np.zeros(num_games, dtype=bool)
        # The legal mask is kept up to date by every mutating method rather than recomputed.
        self._legal = np.ones((num_games, k + 1), dtype=bool)
        self._legal[:, k] = False
        # Per-board constants with the sentinel column appended (row K: no neighbours).
        neighbors = self.board.neighbors.astype(np.intp)
        self._neighbors = np.where(neighbors < 0, k, neighbors)  # padding -> the sentinel K
        self._region_masks = self.board.region_masks
        self._win_table = self.board.win_table

    # ------------------------------------------------------------------ views and queries
    @property
    def stones(self) -> np.ndarray:
        """[B, K] int8 view of the stones."""
        return self._stones[:, :-1]

    @property
    def is_over(self) -> np.ndarray:
        """[B] bool."""
        return self.winner != 0

    @property
    def swap_allowed(self) -> np.ndarray:
        """[B] bool: the second move of a game not over (yellow to move)."""
        return (self.move_count == 1) & (self.winner == 0)

    @property
    def last_action(self) -> np.ndarray:
        """[B] int16, -1 before the first move."""
        rows = np.arange(self.num_games)
        return np.where(self.move_count > 0, self.history[rows, self.move_count - 1], -1)

    def legal_mask(self) -> np.ndarray:
        """[B, A] bool: empty cells and the swap where allowed; all False in finished games."""
        return self._legal.copy()

    def winning_group(self, game: int) -> np.ndarray:
        """[n] int: cells of the winning group of ``game`` (empty if none or resigned)."""
        if not self.winner[game] or self.resigned[game]:
            return np.zeros(0, dtype=np.intp)
        last = int(self.history[game, self.move_count[game] - 1])
        return np.flatnonzero(self._labels[game, :-1] == self._labels[game, last])

    def group_regions(self) -> np.ndarray:
        """[B, K] uint8: the region mask of the group of each cell (0 for empty cells)."""
        rows = np.arange(self.num_games)[:, None]
        return self._group_regions[rows, self._labels[:, :-1]]

    # ------------------------------------------------------------------ stepping
    def step(
        self,
        actions: np.ndarray | Sequence[int],
        *,
        games: np.ndarray | Sequence[int] | None = None,
    ) -> np.ndarray:
        """Play one action in every game not over; finished games ignore theirs.

        Args:
            actions: [B] int, an action index per game.
            games: [B] bool or indices: only these games move (the others ignore their action).

        Returns:
            [B] bool, the games this step ended (the mover won).

        Raises:
            IllegalMoveError: naming every offending game, its action and why; nothing moves.
            TypeError: for actions that are not integers (floats, bools, strings).
            ValueError: for a wrong shape, or ``games`` not a [B] mask or indices in 0..B-1.
        """
        actions = np.asarray(actions)
        if actions.shape != (self.num_games,):
            raise ValueError(f"actions must have shape ({self.num_games},), got {actions.shape}")
        if not np.issubdtype(actions.dtype, np.integer):
            # A float would be truncated to a cell (1.7 plays 1) and a bool read as 0 or 1.
            raise TypeError(f"actions must be integers, got an array of dtype {actions.dtype}")
        live = self.winner == 0
        if games is not None:
            live &= self._game_mask(games)
        moving = np.flatnonzero(live)
        self._check(moving, actions[moving])
        acts = actions[moving].astype(np.intp)
        k = self.board.num_cells
        width = k + 1  # the cell axis with its sentinel; also the number of actions
        movers = self.to_move[moving]

        swapping = acts == k
        games = moving
        if swapping.any():
            swap_games = moving[swapping]
            first = self.history[swap_games, 0].astype(np.intp)
            self._stones[swap_games, first] = YELLOW  # the group keeps its label and regions
            keep = ~swapping
            games, acts, movers = moving[keep], acts[keep], movers[keep]

        # Flat indices into the [B, K + 1] arrays: take() on them beats 2-D fancy indexing.
        stones, labels = self._stones.reshape(-1), self._labels.reshape(-1)
        group_regions = self._group_regions.reshape(-1)
        offsets = games * width
        stones[offsets + acts] = movers
        self._legal.reshape(-1)[offsets + acts] = False
        # Labels of same-coloured neighbours; other and off-board neighbours give the sentinel K.
        nbr_index = offsets[:, None] + self._neighbors[acts]  # [n, 6]
        same = stones.take(nbr_index) == movers[:, None]
        nbr_labels = np.where(same, labels.take(nbr_index), k)  # [n, 6]
        nbr_regions = group_regions.take(offsets[:, None] + nbr_labels)  # [n, 6]
        regions = self._region_masks[acts]
        for column in nbr_regions.T:
            regions = regions | column
        # Join the new stone to its neighbour group with the smallest label (or start one).
        target = nbr_labels.min(axis=1)
        target = np.where(target == k, acts, target)
        labels[offsets + acts] = target
        group_regions[offsets + target] = regions
        merging = ((nbr_labels != target[:, None]) & (nbr_labels != k)).any(axis=1)
        if merging.any():
            self._merge(games[merging], nbr_labels[merging], target[merging])

        won = self._win_table[regions]
        winners = games[won]
        self.winner[winners] = movers[won]
        self._legal[winners] = False

        # Every game that was not over before this step moved (a placement or the swap).
        self.history[moving, self.move_count[moving]] = actions[moving]
        self.move_count[moving] += 1
        self.to_move[moving] = 3 - self.to_move[moving]
        # The swap is legal after exactly one move (a lone stone never wins, so those games go on).
        self._legal[moving, k] = self.move_count[moving] == 1
        ended = np.zeros(self.num_games, dtype=bool)
        ended[winners] = True
        return ended

    def _merge(self, games: np.ndarray, nbr_labels: np.ndarray, target: np.ndarray) -> None:
        """Relabel the groups in ``nbr_labels`` [m, 6] to ``target`` [m] in ``games`` [m]."""
        k = self.board.num_cells
        width = k + 1
        m = len(games)
        # A per-game lookup table old label -> new label, applied to the whole row in one take.
        lookup = np.tile(np.arange(width, dtype=np.int16), m)  # [m * (K + 1)]
        lookup[(np.arange(m) * width)[:, None] + nbr_labels] = target[:, None]
        lookup[np.arange(m) * width + k] = k  # empty cells keep the empty label
        rows = self._labels[games].astype(np.intp) + (np.arange(m) * width)[:, None]
        self._labels[games] = lookup.take(rows)

    def _game_mask(self, games: np.ndarray | Sequence[int] | Sequence[bool]) -> np.ndarray:
        """[B] bool from ``games``, a [B] bool mask or indices in 0..B-1 (never wrapping)."""
        games = np.asarray(games)
        if games.dtype == bool:
            if games.shape != (self.num_games,):
                raise ValueError(
                    f"a games mask must have shape ({self.num_games},), got {games.shape}"
                )
            return games
        if games.size == 0:
            return np.zeros(self.num_games, dtype=bool)
        if games.ndim != 1 or not np.issubdtype(games.dtype, np.integer):
            raise TypeError(
                f"games must be a [B] bool mask or integer indices, got dtype {games.dtype} "
                f"of shape {games.shape}"
            )
        # numpy would read -1 as the last game; an index past the end is as surely a mistake.
        bad = games[(games < 0) | (games >= self.num_games)]
        if bad.size:
            more = f" (and {bad.size - 1} more)" if bad.size > 1 else ""
            raise ValueError(f"game index {bad[0]} is out of range 0..{self.num_games - 1}{more}")
        mask = np.zeros(self.num_games, dtype=bool)
        mask[games] = True
        return mask

    def _check(self, games: np.ndarray, acts: np.ndarray) -> None:
        """Raise IllegalMoveError for the illegal ``acts`` [n] (any integer dtype) of ``games``."""
        k = self.board.num_cells
        out_of_range = (acts < 0) | (acts > k)  # in the given dtype: no wrap before the check
        safe = np.where(out_of_range, 0, acts).astype(np.intp)
        bad_swap = (safe == k) & (self.move_count[games] != 1)
        occupied = (safe < k) & (self._stones[games, safe] != EMPTY) & ~out_of_range
        bad = out_of_range | bad_swap | occupied
        if not bad.any():
            return
        problems = []
        for g, a, oor, sw in zip(games[bad], acts[bad], out_of_range[bad], bad_swap[bad]):
            if oor:
                why = f"action {a} is out of range 0..{k}"
            elif sw:
                why = "swap is not allowed now (only yellow, as the second move)"
            else:
                why = f"{self.board.cell_name(int(a))} is occupied"
            problems.append(f"game {g}: {why}")
        shown = "; ".join(problems[:10]) + (
            f"; and {len(problems) - 10} more" if len(problems) > 10 else ""
        )
        raise IllegalMoveError(f"illegal actions in {len(problems)} game(s): {shown}")

    def resign(self, games: np.ndarray | Sequence[int]) -> None:
        """The player to move resigns in each of ``games`` (indices or [B] bool) not yet over."""
        games = self._game_mask(games) & (self.winner == 0)
        self.winner[games] = 3 - self.to_move[games]
        self.resigned[games] = True
        self._legal[games] = False

    def reset(self, games: np.ndarray | Sequence[int] | None = None) -> None:
        """Start new games in ``games`` (indices or [B] bool; default all)."""
        games = np.ones(self.num_games, dtype=bool) if games is None else self._game_mask(games)
        k = self.board.num_cells
        self._stones[games] = EMPTY
        self._labels[games] = k
        self._group_regions[games] = 0
        self._legal[games] = True
        self._legal[games, k] = False
        self.to_move[games] = BLUE
        self.winner[games] = 0
        self.move_count[games] = 0
        self.history[games] = -1
        self.resigned[games] = False

    # ------------------------------------------------------------------ copies
    def copy(self) -> BatchGame:
        clone = object.__new__(BatchGame)
        clone.__dict__.update(self.__dict__)
        for name in _FIELDS:
            setattr(clone, name, getattr(self, name).copy())
        return clone

    def copy_from(self, other: BatchGame) -> None:
        """Overwrite this batch's state with ``other``'s (same B and board), without allocating."""
        if other.board is not self.board or other.num_games != self.num_games:
            raise ValueError("copy_from needs a batch of the same board and size")
        for name in _FIELDS:
            np.copyto(getattr(self, name), getattr(other, name))

    def take(self, games: np.ndarray | Sequence[int]) -> BatchGame:
        """A new batch holding copies of ``games`` (indices, repeats allowed), in that order."""
        games = np.asarray(games, dtype=np.intp)
        clone = object.__new__(BatchGame)
        clone.__dict__.update(self.__dict__)
        clone.num_games = len(games)
        for name in _FIELDS:
            setattr(clone, name, getattr(self, name)[games])
        return clone

    def assign(self, games: np.ndarray | Sequence[int], source: BatchGame) -> None:
        """Write the games of ``source`` (in order) into positions ``games`` of this batch."""
        games = np.asarray(games, dtype=np.intp)
        if source.board is not self.board or source.num_games != len(games):
            raise ValueError("assign needs a source of the same board with one game per index")
        for name in _FIELDS:
            getattr(self, name)[games] = getattr(source, name)

    # ------------------------------------------------------------------ conversions
    @classmethod
    def from_states(cls, states: Sequence[GameState]) -> BatchGame:
        """A batch replaying the histories of ``states`` (all on one board)."""
        if not states:
            raise ValueError("from_states needs at least one state")
        batch = cls(len(states), states[0].board)
        if any(s.board is not batch.board for s in states):
            raise ValueError("all states must be on the same board")
        for ply in range(max(s.move_count for s in states)):
            acts = np.array([s.history[ply] if ply < s.move_count else 0 for s in states])
            batch.step(acts, games=np.array([ply < s.move_count for s in states]))
        for i, s in enumerate(states):
            if s.resigned:
                batch.winner[i] = s.winner
                batch.resigned[i] = True
                batch._legal[i] = False
        return batch

    def to_state(self, game: int) -> GameState:
        """The `GameState` of one game, replayed from its history."""
        state = GameState(self.board)
        for action in self.history[game, : self.move_count[game]]:
            state.play(int(action))
        if self.resigned[game]:
            state.winner, state.resigned = int(self.winner[game]), True
        return state
