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
with the mirror cell's, counts are pooled (a cell on the axis keeps its own). Results go into a
`opening_table` DataFrame and are cached on disk by `estimate_openings`.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from trapy_rl.agents.base import Agent, parse_agent, reset_agent
from trapy_rl.agents.rollout import RolloutEvaluator
from trapy_rl.eval.arena import wilson_interval
from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import Board
from trapy_rl.game.fill import full_board_winner, random_fill
from trapy_rl.mcts.search import MCTS

__all__ = [
    "ESTIMATORS",
    "TABLE_COLUMNS",
    "default_cache_dir",
    "estimate_openings",
    "mirror_average",
    "mirror_pool",
    "net_values",
    "opening_table",
    "play_from",
    "playout_counts",
    "rollout_counts",
    "search_values",
    "swapped_openings",
]

ESTIMATORS = ("net", "search", "rollout", "playout")
TABLE_COLUMNS = ("cell", "name", "v", "low", "high", "swap", "blue_chance", "rank")
_CACHE_FORMAT = 1

EvaluatorFn = Callable[[BatchGame, np.ndarray], tuple[np.ndarray, np.ndarray]]


# ---------------------------------------------------------------------- positions


def swapped_openings(board: Board) -> BatchGame:
    """K games: game c is the position after ``c, swap`` (yellow stone on c, blue to move).

    Blue, to move, wins game c with probability 1 - v(c) (see the module docstring).
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
    """[K] float64: (v(c) + v(mirror(c))) / 2, symmetric under the mirror."""
    values = _check_cells_array(values, board, "values").astype(np.float64)
    return (values + values[board.mirror_cells]) / 2.0


def mirror_pool(wins: np.ndarray, games: np.ndarray, board: Board) -> tuple[np.ndarray, np.ndarray]:
    """Counts of c and mirror(c) added together (a cell on the axis keeps its own counts).

    Args:
        wins, games: [K] int.

    Returns:
        (wins [K] int64, games [K] int64), symmetric under the mirror.
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


def net_values(evaluator: EvaluatorFn, board: Board, *, mirror: bool = False) -> np.ndarray:
    """v(c) for every first move from one evaluator call on the K swapped openings.

    Args:
        evaluator: ``(batch, games) -> (logits [n, A], values [n])``, e.g. ``Evaluator(net)``.
        mirror: average with the mirror cell's value.

    Returns:
        [K] float64 in [0, 1].
    """
    batch = swapped_openings(board)
    _, values = evaluator(batch, np.arange(board.num_cells))
    v = _stone_value(values)
    return mirror_average(v, board) if mirror else v


def search_values(
    evaluator: EvaluatorFn,
    board: Board,
    *,
    num_simulations: int,
    c_puct: float = 1.25,
    mirror: bool = False,
) -> np.ndarray:
    """v(c) from the root values of a PUCT search of every swapped opening (one MCTS, K games).

    Args:
        evaluator: the leaves' evaluator: a net's, or `RolloutEvaluator` (rollout MCTS, UCT).
        num_simulations: simulations per opening.
        c_puct: the exploration constant.
        mirror: average with the mirror cell's value.

    Returns:
        [K] float64 in [0, 1].
    """
    _check_positive(num_simulations, "num_simulations")
    k = board.num_cells
    search = MCTS(evaluator, board, num_games=k, num_simulations=num_simulations, c_puct=c_puct)
    result = search.search(swapped_openings(board), add_noise=False)
    v = _stone_value(result.root_values)
    return mirror_average(v, board) if mirror else v


def rollout_counts(
    board: Board, *, num_rollouts: int, seed: int | None = None, chunk: int = 4096
) -> tuple[np.ndarray, np.ndarray]:
    """Random playouts from every swapped opening: how often the stone's owner wins.

    A playout is a uniformly random filling of the empty cells, blue first, which has the
    outcome of a random game played on from the position (`trapy_rl.game.fill`).

    Args:
        num_rollouts: n, playouts per opening.
        seed: seeds the playouts.
        chunk: about how many playouts are filled at once (bounds the memory; the random
            stream, and so the result for a seed, depends on it).

    Returns:
        (wins [K] int64, games [K] int64): the owner's wins in ``num_rollouts`` playouts.
    """
    _check_positive(num_rollouts, "num_rollouts")
    batch = swapped_openings(board)
    rng = np.random.default_rng(seed)
    k = board.num_cells
    owner_wins = np.zeros(k, dtype=np.int64)
    per_chunk = max(1, chunk // k)
    done = 0
    while done < num_rollouts:
        r = min(per_chunk, num_rollouts - done)
        stones = np.repeat(batch.stones, r, axis=0)  # [K r, K]
        to_move = np.repeat(batch.to_move, r)  # [K r]
        winners = full_board_winner(random_fill(stones, to_move, rng), board)
        owner_wins += (winners.reshape(k, r) != batch.to_move[:, None]).sum(axis=1)
        done += r
    return owner_wins, np.full(k, num_rollouts, dtype=np.int64)


def play_from(
    positions: BatchGame,
    agent_first: Agent,
    agent_second: Agent,
    *,
    games: np.ndarray | None = None,
) -> np.ndarray:
    """Play games on from given positions to the end; ``positions`` is advanced in place.

    Args:
        positions: B games in progress (any move count).
        agent_first: plays the player to move in each game at the start.
        agent_second: plays the other player.
        games: [n] int, the games to play on (default all unfinished ones).

    Returns:
        [B] int8, the winner of each game (0 for games not played).

    Raises:
        IllegalMoveError: from `BatchGame.step`, naming the game and the move.
    """
    chosen = np.zeros(positions.num_games, dtype=bool)
    chosen[np.flatnonzero(positions.winner == 0) if games is None else np.asarray(games)] = True
    if (positions.winner[chosen] != 0).any():
        raise ValueError("play_from: some of the chosen games are already over")
    first_player = positions.to_move.copy()  # [B] int8
    everything = np.flatnonzero(chosen)
    for agent in {id(agent_first): agent_first, id(agent_second): agent_second}.values():
        reset_agent(agent, everything)
    while True:
        live = chosen & (positions.winner == 0)
        if not live.any():
            break
        first_to_move = positions.to_move == first_player
        actions = np.zeros(positions.num_games, dtype=np.int64)
        for agent, mine in (
            (agent_first, live & first_to_move),
            (agent_second, live & ~first_to_move),
        ):
            movers = np.flatnonzero(mine)
            if len(movers):
                actions[movers] = np.asarray(agent.act(positions, movers), dtype=np.int64)
        positions.step(actions, games=live)
    return np.where(chosen, positions.winner, 0).astype(np.int8)


def playout_counts(
    agent_owner: Agent,
    agent_opponent: Agent,
    board: Board,
    *,
    num_games: int,
    batch_size: int = 2048,
) -> tuple[np.ndarray, np.ndarray]:
    """Games from every swapped opening: ``agent_owner`` owns the stone, the opponent moves.

    The n games of all K openings are played in batches of up to ``batch_size`` games with
    `play_from`, so agents evaluate many games per call.

    Returns:
        (wins [K] int64, games [K] int64): the owner's wins in ``num_games`` games per opening.
    """
    _check_positive(num_games, "num_games")
    _check_positive(batch_size, "batch_size")
    k = board.num_cells
    openings = np.repeat(np.arange(k), num_games)  # [K n] the opening of each game
    owner_wins = np.zeros(k, dtype=np.int64)
    start = swapped_openings(board)
    for begin in range(0, len(openings), batch_size):
        cells = openings[begin : begin + batch_size]
        positions = start.take(cells)
        owner = positions.to_move.copy() % 2 + 1  # the stone's owner waits
        winners = play_from(positions, agent_opponent, agent_owner)
        np.add.at(owner_wins, cells, (winners == owner).astype(np.int64))
    return owner_wins, np.full(k, num_games, dtype=np.int64)


# ---------------------------------------------------------------------- the table


def opening_table(
    v: np.ndarray,
    board: Board,
    *,
    low: np.ndarray | None = None,
    high: np.ndarray | None = None,
) -> pd.DataFrame:
    """The K first moves as a DataFrame, one row per cell in cell order (index = cell).

    Columns: ``cell`` (int index), ``name``, ``v`` (the stone value), ``low``/``high`` (its
    interval, NaN without one), ``swap`` (yellow should swap: v > 1/2), ``blue_chance``
    (min(v, 1 - v), blue's chance after this opening), ``rank`` (1 = fairest, by |v - 1/2|,
    ties by cell index).

    Args:
        v: [K] float in [0, 1].
        low, high: [K] float, the interval's ends (optional).
    """
    v = _check_cells_array(v, board, "v").astype(np.float64)
    if np.isnan(v).any() or (v < 0).any() or (v > 1).any():
        raise ValueError("v must be probabilities in [0, 1] without NaN")
    nan = np.full(board.num_cells, np.nan)
    low = nan if low is None else _check_cells_array(low, board, "low").astype(np.float64)
    high = nan if high is None else _check_cells_array(high, board, "high").astype(np.float64)
    distance = np.abs(v - 0.5)
    order = np.lexsort((np.arange(board.num_cells), distance))
    rank = np.empty(board.num_cells, dtype=np.int64)
    rank[order] = np.arange(1, board.num_cells + 1)
    table = pd.DataFrame(
        {
            "cell": np.arange(board.num_cells, dtype=np.int64),
            "name": list(board.names),
            "v": v,
            "low": low,
            "high": high,
            "swap": v > 0.5,
            "blue_chance": np.minimum(v, 1.0 - v),
            "rank": rank,
        }
    )
    table.index.name = None
    return table


def _table_from_counts(wins: np.ndarray, games: np.ndarray, board: Board) -> pd.DataFrame:
    bounds = np.array([wilson_interval(int(w), int(g)) for w, g in zip(wins, games)])
    return opening_table(wins / games, board, low=bounds[:, 0], high=bounds[:, 1])


# ---------------------------------------------------------------------- the cached entry point


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/trapy_rl/openings`` (``~/.cache/trapy_rl/openings`` by default)."""
    root = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(root) / "trapy_rl" / "openings"


def estimate_openings(
    *,
    side: int = 10,
    estimator: str = "search",
    checkpoint: str | os.PathLike | None = None,
    simulations: int = 200,
    rollouts: int = 1,
    playouts: int = 1000,
    agent: str = "random",
    opponent: str | None = None,
    c_puct: float = 1.25,
    mirror: bool = True,
    seed: int = 0,
    device: str = "cpu",
    cache_dir: str | os.PathLike | None = "default",
) -> pd.DataFrame:
    """The `opening_table` of one estimator, read from the cache when it was computed before.

    Args:
        side: the board's side.
        estimator: one of `ESTIMATORS` (see the module docstring).
        checkpoint: a checkpoint file or run folder. ``net`` needs it; ``search`` uses the
            net's leaves with it and random playouts (rollout MCTS) without it.
        simulations: search simulations per opening (``search``).
        rollouts: random playouts per leaf evaluation of rollout search (``search`` without
            a net).
        playouts: random playouts (``rollout``) or games (``playout``) per opening.
        agent: the spec of the agent owning the stone (``playout``), e.g. ``uct:100``.
        opponent: the spec of the agent moving next (``playout``; default ``agent``).
        c_puct: the search's exploration constant (``search``).
        mirror: make the map symmetric under the mirror (average values or pool counts).
        seed: seeds playouts and agents; the result is a function of the arguments.
        device: where a net runs (``cpu``, ``cuda``, ``auto``).
        cache_dir: the cache folder; ``"default"`` is `default_cache_dir`, None caches nothing.
            Key: estimator, side, seed, mirror, the settings that estimator reads, the agent
            specs and the checkpoint file's content hash.

    Returns:
        The table; ``table.attrs`` holds the key and ``cached`` (True when read back).

    Raises:
        ValueError: naming a bad estimator, setting, or a checkpoint of another side.
    """
    board = Board(side)
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {', '.join(ESTIMATORS)}; got {estimator!r}")
    if estimator == "net" and checkpoint is None:
        raise ValueError("estimator 'net' needs a checkpoint (a checkpoint file or run folder)")
    checkpoint_file = _checkpoint_file(checkpoint) if checkpoint is not None else None
    key = _cache_key(
        board=board,
        estimator=estimator,
        checkpoint_file=checkpoint_file,
        simulations=simulations,
        rollouts=rollouts,
        playouts=playouts,
        agent=agent,
        opponent=opponent or agent,
        c_puct=c_puct,
        mirror=mirror,
        seed=seed,
    )
    folder = default_cache_dir() if cache_dir == "default" else cache_dir
    path = None
    if folder is not None:
        digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]
        path = Path(folder) / f"{estimator}-side{side}-{digest}.csv"
        if path.is_file():
            table = _read_table(path, board)
            table.attrs.update(key=key, cached=True)
            return table

    table = _compute(board, key, checkpoint_file, device)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".tmp")
        table.to_csv(temporary, index=False, float_format="%.17g")
        os.replace(temporary, path)
        path.with_suffix(".json").write_text(json.dumps(key, indent=2, sort_keys=True) + "\n")
    table.attrs.update(key=key, cached=False)
    return table


def _cache_key(*, board: Board, estimator: str, checkpoint_file: Path | None, **settings) -> dict:
    """The settings that determine an estimator's result (and nothing else)."""
    _check_positive(settings["simulations"], "simulations")
    _check_positive(settings["rollouts"], "rollouts")
    _check_positive(settings["playouts"], "playouts")
    if not settings["c_puct"] > 0:
        raise ValueError(f"c_puct must be > 0, got {settings['c_puct']}")
    used = {
        "net": (),
        "search": ("simulations", "c_puct") + (() if checkpoint_file else ("rollouts",)),
        "rollout": ("playouts",),
        "playout": ("playouts", "agent", "opponent"),
    }[estimator]
    for name in ("agent", "opponent"):
        if name in used:
            settings[name] = _agent_identity(settings[name])
    key: dict[str, Any] = {
        "format": _CACHE_FORMAT,
        "estimator": estimator,
        "side": board.side,
        "seed": int(settings["seed"]),
        "mirror": bool(settings["mirror"]),
        **{name: settings[name] for name in used},
    }
    if checkpoint_file is not None and estimator in ("net", "search"):
        key["checkpoint"] = {"sha256": _file_hash(checkpoint_file), "name": checkpoint_file.name}
    return key


def _compute(board: Board, key: dict, checkpoint_file: Path | None, device: str) -> pd.DataFrame:
    estimator, mirror, seed = key["estimator"], key["mirror"], key["seed"]
    if estimator in ("net", "search"):
        if checkpoint_file is not None:
            evaluator = _net_evaluator(checkpoint_file, board, device)
        else:
            evaluator = RolloutEvaluator(key["rollouts"], seed)
        if estimator == "net":
            return opening_table(net_values(evaluator, board, mirror=mirror), board)
        v = search_values(
            evaluator,
            board,
            num_simulations=key["simulations"],
            c_puct=key["c_puct"],
            mirror=mirror,
        )
        return opening_table(v, board)
    if estimator == "rollout":
        wins, games = rollout_counts(board, num_rollouts=key["playouts"], seed=seed)
    else:
        seeds = np.random.SeedSequence(seed).generate_state(2)
        owner = parse_agent(key["agent"]["spec"], board=board, seed=int(seeds[0]))
        mover = (
            owner
            if key["opponent"] == key["agent"]
            else parse_agent(key["opponent"]["spec"], board=board, seed=int(seeds[1]))
        )
        wins, games = playout_counts(owner, mover, board, num_games=key["playouts"])
    if mirror:
        wins, games = mirror_pool(wins, games, board)
    return _table_from_counts(wins, games, board)


def _read_table(path: Path, board: Board) -> pd.DataFrame:
    stored = pd.read_csv(path)
    if list(stored.columns) != list(TABLE_COLUMNS) or len(stored) != board.num_cells:
        raise ValueError(f"{path}: not an opening table of the side-{board.side} board")
    return opening_table(
        stored["v"].to_numpy(), board, low=stored["low"].to_numpy(), high=stored["high"].to_numpy()
    )


# ---------------------------------------------------------------------- nets and agents


def _checkpoint_file(checkpoint: str | os.PathLike) -> Path:
    from trapy_rl.train.checkpoint import find_checkpoint

    return Path(find_checkpoint(checkpoint)).resolve()


def _file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as data:
        for block in iter(lambda: data.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _net_evaluator(checkpoint_file: Path, board: Board, device: str) -> EvaluatorFn:
    from trapy_rl.agents.network import load_evaluator

    evaluator, _ = load_evaluator(checkpoint_file, board=board, device=device)
    return evaluator


def _agent_identity(spec: str) -> dict:
    """A spec, with the content hash of the checkpoint a network spec plays from."""
    from trapy_rl.agents.network import checkpoint_file

    identity: dict[str, Any] = {"spec": spec}
    path = checkpoint_file(spec)
    if path is not None:
        identity["sha256"] = _file_hash(Path(path))
    return identity


# ---------------------------------------------------------------------- checks


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
