"""The value of every first move: by a net, by search, by random playouts, by agents playing.

Shapes: K cells, A = K + 1 actions, B games in a batch, n games per opening.

**The stone value.** For a first move c, v(c) is the probability that the owner of a lone stone
on c wins when the opponent moves next. If yellow does not swap, v(c) is blue's chance; if
yellow swaps, yellow owns the stone and blue moves next, so blue's chance is 1 - v(c). Yellow
should swap exactly when v(c) > 1/2, and blue's chance after opening c is min(v(c), 1 - v(c)):
the fairest openings have v(c) closest to 1/2.

**How it is measured.** The position "blue stone on c, yellow to move, no swap" cannot be
reached by legal play (the swap is legal exactly at move two). The position after ``c, swap``
can: a lone *yellow* stone on c, blue to move, the swap no longer legal. The rules treat the
colours alike (only the swap tells them apart, and it is gone), so this is the same game with
the colours exchanged, and the player to move (blue) wins it with probability 1 - v(c):

    v(c) = 1 - P(player to move wins | moves c, swap)

Every estimator here values the K positions `swapped_openings` builds. (The position after
blue's c alone, yellow to move with the swap legal, is worth max(v, 1 - v) to yellow when
yellow plays well, and is not v(c).)

Estimators (``estimator=`` of `estimate_openings`):

    net      the net's value head, one batched call                     needs a checkpoint
    search   PUCT search per opening, all K in one MCTS (num_games=K);  net leaves, or random
             root values                                                 playouts without a net
    rollout  random playouts (uniform random fills) from each opening,  runs anywhere
             a 95% Wilson interval
    playout  games between two agents (specs) from each opening,        runs anywhere
             a 95% Wilson interval

With ``mirror=True`` the map is made symmetric under the board's mirror: values are averaged
with the mirror cell's, counts are pooled (a cell on the axis keeps its own). The results go
into an opening table (`trapy_rl.analysis.openings`), whose `estimate_openings` picks the
estimator and caches what it computed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from trapy_rl.agents.base import Agent
from trapy_rl.eval.arena import play_games
from trapy_rl.eval.stats import Z_95, wilson_interval
from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import Board
from trapy_rl.game.fill import playout_wins
from trapy_rl.game.state import BLUE
from trapy_rl.mcts import MCTS, Evaluator, SearchSettings

__all__ = [
    "PlayCounts",
    "mirror_average",
    "mirror_pool",
    "net_values",
    "play_from",
    "playout_counts",
    "refine_fairest",
    "rollout_counts",
    "search_values",
    "swapped_openings",
]


PlayCounts = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
"""``play(num_games [K] int) -> (wins [K] int64, games [K] int64)``: that many games from each
swapped opening, and how often the stone's owner won them (`playout_counts` with two agents)."""


# ---------------------------------------------------------------------- positions


def swapped_openings(board: Board) -> BatchGame:
    """K games: game c is the position after ``c, swap`` (yellow stone on c, blue to move).

    Blue, to move, wins game c with probability 1 - v(c) (see the module docstring).

    Args:
        board: the board; K = ``board.num_cells``.

    Returns:
        A new `BatchGame` of K games, game c after the moves c and swap (move_count 2).
    """
    k = board.num_cells
    batch = BatchGame(k, board)
    batch.step(np.arange(k))
    batch.step(np.full(k, board.swap_action))
    return batch


def _stone_value(mover_values: np.ndarray) -> np.ndarray:
    """[K] float64 v(c) from values in [-1, 1] for the player to move after ``c, swap``."""
    return (1.0 - np.asarray(mover_values, dtype=np.float64)) / 2.0


def mirror_average(values: np.ndarray, board: Board) -> np.ndarray:
    """Each cell's value averaged with its mirror cell's: (v(c) + v(mirror(c))) / 2.

    Args:
        values: [K] float, v(c) per cell.
        board: the board whose mirror is used.

    Returns:
        [K] float64, symmetric under the mirror (a cell on the axis keeps its value).

    Raises:
        ValueError: if ``values`` is not [K].
    """
    values = _check_cells_array(values, board, "values").astype(np.float64)
    return (values + values[board.mirror_cells]) / 2.0


def mirror_pool(wins: np.ndarray, games: np.ndarray, board: Board) -> tuple[np.ndarray, np.ndarray]:
    """Counts of c and mirror(c) added together (a cell on the axis keeps its own counts).

    Args:
        wins, games: [K] int, per cell.
        board: the board whose mirror is used.

    Returns:
        (wins [K] int64, games [K] int64), symmetric under the mirror.

    Raises:
        ValueError: if ``wins`` or ``games`` is not [K].
    """
    wins = _check_cells_array(wins, board, "wins").astype(np.int64)
    games = _check_cells_array(games, board, "games").astype(np.int64)
    mirror = board.mirror_cells
    on_axis = mirror == np.arange(board.num_cells)
    return (
        np.where(on_axis, wins, wins + wins[mirror]),
        np.where(on_axis, games, games + games[mirror]),
    )


# ---------------------------------------------------------------------- estimators


def net_values(evaluator: Evaluator, board: Board, *, mirror: bool = False) -> np.ndarray:
    """v(c) for every first move from one evaluator call on the K swapped openings.

    Args:
        evaluator: ``(batch, games) -> (logits [n, A] float32, values [n] float32)``, e.g. a
            network's; values in [-1, 1] for the player to move.
        board: the board.
        mirror: average with the mirror cell's value.

    Returns:
        [K] float64 in [0, 1].
    """
    batch = swapped_openings(board)
    _, values = evaluator(batch, np.arange(board.num_cells))
    v = _stone_value(values)
    return mirror_average(v, board) if mirror else v


def search_values(
    evaluator: Evaluator,
    board: Board,
    *,
    settings: SearchSettings,
    mirror: bool = False,
) -> np.ndarray:
    """v(c) from the root values of a PUCT search of every swapped opening (one MCTS, K games).

    Args:
        evaluator: the leaves' evaluator: a net's, or `RolloutEvaluator` (rollout MCTS, UCT).
        board: the board.
        settings: the search (``num_simulations`` per opening, ``c_puct``; no noise).
        mirror: average with the mirror cell's value.

    Returns:
        [K] float64 in [0, 1].
    """
    k = board.num_cells
    search = MCTS(evaluator, board, num_games=k, settings=settings)
    result = search.search(swapped_openings(board), add_noise=False)
    v = _stone_value(result.root_values)
    return mirror_average(v, board) if mirror else v


def rollout_counts(
    board: Board, *, num_rollouts: int, seed: int | None = None, chunk: int = 4096
) -> tuple[np.ndarray, np.ndarray]:
    """Random playouts from every swapped opening: how often the stone's owner wins.

    A playout is a uniformly random filling of the empty cells, blue first, which has the
    outcome of a random game played on from the position (`trapy_rl.game.fill.playout_wins`;
    the swap is no longer legal there).

    Args:
        board: the board.
        num_rollouts: n, playouts per opening.
        seed: seeds the playouts.
        chunk: about how many playouts are filled at once (bounds the memory; the random
            stream, and so the result for a seed, depends on it).

    Returns:
        (wins [K] int64, games [K] int64): the owner's wins in ``num_rollouts`` playouts.
    """
    _check_positive(num_rollouts, "num_rollouts")
    k = board.num_cells
    rng = np.random.default_rng(seed)
    mover_wins = playout_wins(
        swapped_openings(board), np.arange(k), rng, num_playouts=num_rollouts, chunk=chunk
    )
    # Every playout has a winner: the owner wins those the player to move loses.
    return num_rollouts - mover_wins, np.full(k, num_rollouts, dtype=np.int64)


def play_from(
    positions: BatchGame,
    agent_first: Agent,
    agent_second: Agent,
    *,
    games: np.ndarray | None = None,
) -> np.ndarray:
    """Play games on from given positions to the end; ``positions`` is advanced in place.

    The arena's game loop (`trapy_rl.eval.arena.play_games`) with the colours given by the
    positions: each agent keeps the colour it has at the start (a later swap changes the
    stone's colour, not the players'). Both agents are reset (`reset_agent`) for the chosen
    games first, and each is called once a step, for all the chosen games where it is to move.

    Args:
        positions: B games in progress (any move count).
        agent_first: plays the player to move in each game at the start.
        agent_second: plays the other player.
        games: [n] int, the games to play on (default all unfinished ones).

    Returns:
        [B] int8, the winner of each game (0 for games not played).

    Raises:
        IllegalMoveError: naming the agent, the game and the move, if an agent plays an
            illegal move or returns the wrong number of actions.
        ValueError: if a chosen game is already over.
    """
    chosen = np.zeros(positions.num_games, dtype=bool)  # [B]
    chosen[np.flatnonzero(positions.winner == 0) if games is None else np.asarray(games)] = True
    if (positions.winner[chosen] != 0).any():
        raise ValueError("play_from: some of the chosen games are already over")
    first_is_blue = positions.to_move == BLUE  # [B] bool
    play_games(positions, agent_first, agent_second, a_is_blue=first_is_blue, games=chosen)
    return np.where(chosen, positions.winner, 0).astype(np.int8)


def playout_counts(
    agent_owner: Agent,
    agent_opponent: Agent,
    board: Board,
    *,
    num_games: int | np.ndarray,
    batch_size: int = 1024,
    progress: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Games from every swapped opening: ``agent_owner`` owns the stone, the opponent moves.

    The games of all K openings are played in batches of up to ``batch_size`` games with
    `play_from`, so agents evaluate many games per call.

    Args:
        agent_owner: plays the stone's owner (yellow, waiting in the swapped opening).
        agent_opponent: plays the player to move (blue); may be ``agent_owner`` itself.
        board: the board.
        num_games: n, games per opening: one int for all, or [K] int (0 skips a cell).
        batch_size: games played at once.
        progress: show a bar counting games, with rate and ETA.

    Returns:
        (wins [K] int64, games [K] int64): the owner's wins in the games played per opening.
    """
    _check_positive(batch_size, "batch_size")
    k = board.num_cells
    if np.ndim(num_games) == 0:
        _check_positive(num_games, "num_games")
    counts = np.broadcast_to(np.asarray(num_games), (k,)).astype(np.int64)  # [K]
    if (counts < 0).any():
        raise ValueError("num_games must be >= 0 for every cell")
    openings = np.repeat(np.arange(k), counts)  # [sum n] the opening of each game
    owner_wins = np.zeros(k, dtype=np.int64)
    start = swapped_openings(board)
    with tqdm(total=len(openings), unit="game", disable=not progress, desc="openings") as bar:
        for begin in range(0, len(openings), batch_size):
            cells = openings[begin : begin + batch_size]
            positions = start.take(cells)
            owner = positions.to_move.copy() % 2 + 1  # the stone's owner waits
            winners = play_from(positions, agent_opponent, agent_owner)
            np.add.at(owner_wins, cells, (winners == owner).astype(np.int64))
            bar.update(len(cells))
    return owner_wins, counts.copy()


def refine_fairest(
    play: PlayCounts,
    board: Board,
    wins: np.ndarray,
    games: np.ndarray,
    *,
    fairest: int,
    half_width: float,
    mirror: bool = True,
    max_games: int = 4000,
) -> tuple[np.ndarray, np.ndarray]:
    """More games where they matter: until the ``fairest`` openings nearest v = 1/2 all have a
    95% Wilson interval no wider than +-``half_width``.

    Each round ranks the cells by their current estimate, takes the ``fairest`` nearest 1/2,
    and plays more games from those whose interval is still too wide: as many as the normal
    approximation says they need at their current v, but at most as many as they have (so the
    ranking is looked at again before much is spent on a cell that turns out not to be fair).
    With ``mirror`` the counts of c and mirror(c) are pooled (the rules are symmetric under the
    mirror, so both estimate one value) and a pair's new games are split between its two cells.

    Args:
        play: plays the games, ``play(num_games [K] int) -> (wins [K], games [K])``: e.g.
            ``lambda n: playout_counts(owner, opponent, board, num_games=n)``, or a
            `trapy_rl.analysis.playout_jobs.PlayoutJob`.
        board: the board.
        wins, games: [K] int, the counts so far (`playout_counts`), every cell played.
        fairest: how many cells must reach the width (0: none, the counts are returned).
        half_width: the interval's half-width to reach, in (0, 1/2).
        mirror: pool c and mirror(c).
        max_games: a (pooled) cell stops getting games at this many.

    Returns:
        (wins [K] int64, games [K] int64): the counts with the new games added (not pooled).

    Raises:
        ValueError: for a bad setting, or a cell without games.
    """
    check_refinement(fairest, half_width)
    _check_positive(max_games, "max_games")
    wins = _check_cells_array(wins, board, "wins").astype(np.int64)
    games = _check_cells_array(games, board, "games").astype(np.int64)
    if (games < 1).any():
        raise ValueError("refine_fairest needs at least one game from every cell")
    k = board.num_cells
    partner = board.mirror_cells if mirror else np.arange(k)
    while fairest > 0:
        pooled_wins, pooled_games = mirror_pool(wins, games, board) if mirror else (wins, games)
        v = pooled_wins / pooled_games
        nearest = np.lexsort((np.arange(k), np.abs(v - 0.5)))[:fairest]
        more = np.zeros(k, dtype=np.int64)  # [K] new games per cell, pooled
        for cell in nearest:
            low, high = wilson_interval(int(pooled_wins[cell]), int(pooled_games[cell]))
            n = int(pooled_games[cell])
            if (high - low) / 2 <= half_width or n >= max_games:
                continue
            p = min(max(v[cell], 0.05), 0.95)
            needed = math.ceil(Z_95**2 * p * (1 - p) / half_width**2) - n
            more[min(cell, partner[cell])] = min(max(needed, 8), n, max_games - n)
        if not more.any():
            break
        # A mirror pair's games go half to each cell; a cell on the axis takes them all.
        split = np.zeros(k, dtype=np.int64)
        for cell in np.flatnonzero(more):
            split[cell] += (more[cell] + 1) // 2 if partner[cell] != cell else more[cell]
            if partner[cell] != cell:
                split[partner[cell]] += more[cell] // 2
        new_wins, new_games = play(split)
        wins, games = wins + new_wins, games + new_games
    return wins, games


# ---------------------------------------------------------------------- checks


def check_refinement(fairest: Any, half_width: Any, *, name: str = "fairest") -> None:
    """Raise ValueError unless ``fairest`` (called ``name`` in the message) is an integer >= 0
    and ``half_width`` a number in (0, 1/2): the settings of `refine_fairest`."""
    if isinstance(fairest, bool) or not isinstance(fairest, (int, np.integer)) or fairest < 0:
        raise ValueError(f"{name} must be an integer >= 0, got {fairest!r}")
    number = isinstance(half_width, (int, float, np.number)) and not isinstance(half_width, bool)
    if not number or not 0 < half_width < 0.5:
        raise ValueError(f"half_width must be a number in (0, 0.5), got {half_width!r}")


def _check_cells_array(values: Any, board: Board, what: str) -> np.ndarray:
    array = np.asarray(values)
    if array.shape != (board.num_cells,):
        raise ValueError(
            f"{what} must have shape ({board.num_cells},) for the side-{board.side} board, "
            f"got {array.shape}"
        )
    return array


def _check_positive(value: Any, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
