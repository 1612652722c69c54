"""Matches between two agents: many games at once, results with confidence intervals, records.

`play_match` plays ``num_games`` games concurrently in one `BatchGame`. Agent a plays blue
(player 1, moving first) in the even games and yellow in the odd ones. The game loop is
`play_games`, which plays any chosen games of a batch on from where they stand (the opening
estimators use it too): at each step every agent is called once, for all the games where it is
to move, so network agents evaluate in batches, and its answer is checked
(`trapy_rl.agents.moves`). The swap is an ordinary move that each agent may choose.

Two search agents without noise play the same game again and again: a match between them is
two games repeated, and its interval a fiction. ``openings=k`` starts each pair of games (2i,
2i + 1: the same agents, colours exchanged) from k uniformly random stones, a fresh opening per
pair. One random first stone suffices and stays fair, since yellow may swap it.

With ``record_path`` the games are written as game records (`trapy_rl.eval.records`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from trapy_rl.agents.base import Agent, reset_agent
from trapy_rl.agents.moves import checked_actions
from trapy_rl.eval.records import match_records, write_records
from trapy_rl.eval.starts import start_batch
from trapy_rl.eval.stats import wilson_interval
from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import Board
from trapy_rl.game.sampling import random_legal_actions
from trapy_rl.game.state import BLUE

__all__ = ["MatchResult", "count_distinct_games", "play_games", "play_match"]


def _share(count: int, games: int) -> float:
    """``count / games``, or nan without games."""
    return count / games if games else math.nan


@dataclasses.dataclass(frozen=True)
class MatchResult:
    """The outcome of a match of agent a against agent b.

    Attributes:
        agent_a, agent_b: the agents' names.
        games: games played.
        wins: games won by a.
        games_as_blue, wins_as_blue: a's games and wins as blue (the even games).
        games_as_yellow, wins_as_yellow: the same as yellow (the odd games).
        swaps: games in which yellow swapped.
        total_moves: moves in all games (the swap counts as a move).
        seed: the match seed, as recorded.
        openings: random stones each game started from (see the module docstring).
        starts: start positions the pairs of games started from (0: none; see `play_match`).
        distinct_games: games that differ in their moves (None in results cached before it
            was counted): two agents without randomness play fewer than ``games``.
    """

    agent_a: str
    agent_b: str
    games: int
    wins: int
    games_as_blue: int
    wins_as_blue: int
    games_as_yellow: int
    wins_as_yellow: int
    swaps: int
    total_moves: int
    seed: int | None = None
    openings: int = 0
    starts: int = 0
    distinct_games: int | None = None

    @property
    def win_rate(self) -> float:
        """a's share of the games won."""
        return _share(self.wins, self.games)

    @property
    def interval(self) -> tuple[float, float]:
        """95% Wilson interval of a's win rate."""
        return wilson_interval(self.wins, self.games)

    @property
    def win_rate_as_blue(self) -> float:
        """a's share of its games as blue won."""
        return _share(self.wins_as_blue, self.games_as_blue)

    @property
    def interval_as_blue(self) -> tuple[float, float]:
        """95% Wilson interval of a's win rate as blue."""
        return wilson_interval(self.wins_as_blue, self.games_as_blue)

    @property
    def win_rate_as_yellow(self) -> float:
        """a's share of its games as yellow won."""
        return _share(self.wins_as_yellow, self.games_as_yellow)

    @property
    def interval_as_yellow(self) -> tuple[float, float]:
        """95% Wilson interval of a's win rate as yellow."""
        return wilson_interval(self.wins_as_yellow, self.games_as_yellow)

    @property
    def swap_rate(self) -> float:
        """The share of games in which yellow swapped."""
        return _share(self.swaps, self.games)

    @property
    def mean_length(self) -> float:
        """Mean moves per game (the swap counts as a move)."""
        return _share(self.total_moves, self.games)

    def __str__(self) -> str:
        def row(label: str, wins: int, games: int) -> str:
            low, high = wilson_interval(wins, games)
            rate = f"{wins / games:6.1%}" if games else "     -"
            return f"  {label:<10} {wins:>6} / {games:<6} {rate}  [{low:6.1%}, {high:6.1%}]"

        return "\n".join(
            [
                f"{self.agent_a} vs {self.agent_b}: {self.games} games"
                + (f" from {self.openings} random stones per pair" if self.openings else ""),
                f"  {'a wins':<10} {'won':>6} / {'games':<6} {'rate':>6}  95% Wilson",
                row("overall", self.wins, self.games),
                row("as blue", self.wins_as_blue, self.games_as_blue),
                row("as yellow", self.wins_as_yellow, self.games_as_yellow),
                f"  swap rate {self.swap_rate:.1%}, mean length {self.mean_length:.1f} moves",
            ]
        )


def play_match(
    agent_a: Agent,
    agent_b: Agent,
    *,
    num_games: int,
    board: Board,
    seed: int | None = None,
    openings: int = 0,
    starts: Sequence[Sequence[int]] = (),
    record_path: str | Path | None = None,
    progress: bool = False,
) -> MatchResult:
    """Play ``num_games`` games of a against b, all at once; a is blue in the even games.

    Args:
        agent_a, agent_b: the players (the same object may play both sides).
        num_games: games to play (>= 1).
        board: the board to play on.
        seed: stored in the result and the records, to say how the agents were seeded; with
            ``openings`` it also seeds the random openings (None: fresh entropy). Otherwise
            the match itself draws no random numbers.
        openings: uniformly random stones (never the swap) that start each pair of games,
            games 2i and 2i + 1 from the same ones; the agents play on from there.
        starts: S start positions (`trapy_rl.eval.starts`) instead: games 2i and 2i + 1
            start from ``starts[(offset + i) % S]``, where the offset ``seed * num_games // 2``
            gives another seed other starts. Not together with ``openings``.
        record_path: when given, the games are written there as game records, one JSON
            line each (overwriting; see `trapy_rl.eval.records`).
        progress: show a tqdm bar counting finished games.

    Raises:
        IllegalMoveError: naming the agent, the game and the move, if an agent plays an
            illegal move or returns the wrong number of actions.
        ValueError: for ``num_games`` < 1, or ``openings`` < 0 or so many that a random
            opening ends a game.
    """
    if isinstance(num_games, bool) or not isinstance(num_games, (int, np.integer)):
        raise ValueError(f"num_games must be an integer >= 1, got {num_games!r}")
    if num_games < 1:
        raise ValueError(f"num_games must be >= 1, got {num_games}")
    if starts:
        if openings:
            raise ValueError("give openings or starts, not both")
        offset = (seed or 0) * (int(num_games) // 2)
        batch = start_batch(board, starts, int(num_games), offset=offset)
    else:
        batch = BatchGame(int(num_games), board)
        _play_openings(batch, openings, seed)
    a_is_blue = np.arange(num_games) % 2 == 0  # [B] bool
    play_games(batch, agent_a, agent_b, a_is_blue=a_is_blue, progress=progress)

    a_won = (batch.winner == BLUE) == a_is_blue
    swapped = batch.history[:, 1] == board.swap_action
    result = MatchResult(
        agent_a=agent_a.name,
        agent_b=agent_b.name,
        games=int(num_games),
        wins=int(a_won.sum()),
        games_as_blue=int(a_is_blue.sum()),
        wins_as_blue=int((a_won & a_is_blue).sum()),
        games_as_yellow=int((~a_is_blue).sum()),
        wins_as_yellow=int((a_won & ~a_is_blue).sum()),
        swaps=int(swapped.sum()),
        total_moves=int(batch.move_count.sum()),
        seed=seed,
        openings=int(openings),
        starts=len(starts),
        distinct_games=count_distinct_games(batch),
    )
    if record_path is not None:
        records = match_records(
            batch,
            agent_a=agent_a.name,
            agent_b=agent_b.name,
            a_is_blue=a_is_blue,
            seed=seed,
            openings=int(openings),
        )
        write_records(records, record_path)
    return result


def count_distinct_games(batch: BatchGame) -> int:
    """How many of the B games differ in their moves (the start included)."""
    return len({batch.history[g, : batch.move_count[g]].tobytes() for g in range(batch.num_games)})


def play_games(
    batch: BatchGame,
    agent_a: Agent,
    agent_b: Agent,
    *,
    a_is_blue: np.ndarray,
    games: np.ndarray | None = None,
    progress: bool = False,
) -> None:
    """Play the chosen games of ``batch`` to their end, in place; the other games stay as they are.

    Both agents are reset (`reset_agent`) for the chosen games first. At each step every agent
    is asked once (`checked_actions`), for all the chosen games where its colour is to move,
    and the chosen games step together. Colours stay with their agents through a swap: the
    swapped stone changes colour, and blue moves on.

    Args:
        batch: B games; the chosen ones are advanced until they are over (mutated).
        agent_a, agent_b: the players (the same object may play both sides).
        a_is_blue: [B] bool, whether a plays blue in each game (b plays the other colour).
        games: [n] int indices or [B] bool mask of the games to play (default: all B); games
            already over among them are left as they are.
        progress: show a tqdm bar counting finished games.

    Raises:
        IllegalMoveError: naming the agent, the game and the move, if an agent plays an
            illegal move or returns the wrong number of actions (that step is not played).
        ValueError: if ``a_is_blue`` is not [B] bool.
    """
    a_is_blue = np.asarray(a_is_blue)
    if a_is_blue.shape != (batch.num_games,) or a_is_blue.dtype != np.bool_:
        raise ValueError(
            f"a_is_blue must be [{batch.num_games}] bool, "
            f"got {a_is_blue.dtype} of shape {a_is_blue.shape}"
        )
    chosen = np.zeros(batch.num_games, dtype=bool)  # [B]
    chosen[slice(None) if games is None else np.asarray(games)] = True
    for agent in {id(agent_a): agent_a, id(agent_b): agent_b}.values():
        reset_agent(agent, np.flatnonzero(chosen))

    bar = None
    if progress:
        total = int((chosen & (batch.winner == 0)).sum())
        bar = tqdm(total=total, desc=f"{agent_a.name} vs {agent_b.name}", unit="game")
    try:
        while True:
            live = chosen & (batch.winner == 0)  # [B] bool
            if not live.any():
                break
            a_to_move = (batch.to_move == BLUE) == a_is_blue
            actions = np.zeros(batch.num_games, dtype=np.int64)
            legal = batch.legal_mask()
            for agent, mine in ((agent_a, live & a_to_move), (agent_b, live & ~a_to_move)):
                movers = np.flatnonzero(mine)
                if len(movers):
                    actions[movers] = checked_actions(agent, batch, movers, legal=legal)
            batch.step(actions, games=live)
            if bar is not None:
                bar.update(int(live.sum()) - int((chosen & (batch.winner == 0)).sum()))
    finally:
        if bar is not None:
            bar.close()


def _play_openings(batch: BatchGame, openings: int, seed: int | None) -> None:
    """Play ``openings`` random stones into every game, the same in games 2i and 2i + 1."""
    if isinstance(openings, bool) or not isinstance(openings, (int, np.integer)) or openings < 0:
        raise ValueError(f"openings must be an integer >= 0, got {openings!r}")
    if openings == 0:
        return
    rng = np.random.default_rng(seed)
    pair = np.arange(batch.num_games) // 2  # [B] the pair of each game
    firsts = np.arange(0, batch.num_games, 2)  # [ceil(B / 2)] one game per pair
    for _ in range(int(openings)):
        drawn = random_legal_actions(batch.legal_mask()[firsts], rng, swap_probability=0.0)
        batch.step(drawn[pair])
        if (batch.winner != 0).any():
            raise ValueError(
                f"openings={openings} random stones end a game on side {batch.board.side}; "
                "use fewer"
            )
