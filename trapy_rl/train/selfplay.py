"""Self-play: B games at once in one BatchGame, a batched search at every move.

Shapes: B concurrent games, L = K + 1 the longest possible game, C planes, H x W grid,
A actions, n positions.

Every call of `SelfPlay.play` searches one move in every game ``num_moves`` times. A game that
ends (a win or a resignation) hands its positions to the result, each labelled with the
outcome z for the player to move there and the root value q of the search that chose its move
(the root's mean value for the player to move, as resignation reads it; PUCT and Gumbel
searches alike), and starts again at once. Positions searched cheaply (playout cap
randomization) are not training positions and carry no q; a post-swap sample has no search of
its own, so its q is its outcome (`Samples.root_values`). Games carry over from one
call to the next; the search tree does not (each call builds a fresh search, so that the net's
new weights evaluate every position and a call's result depends only on the game state and its
seed: that is what lets a checkpoint resume a run exactly).

Move choice (PUCT search): the first ``temperature_moves`` moves of a game are drawn in
proportion to the visit counts (temperature 1), later ones take the most visited action
(temperature 0); the search adds Dirichlet noise at the root and reuses the subtree of the move
played, and the visit distribution is the policy target. Gumbel search: the search's own
choice is played (Gumbel noise makes it a sample), and its improved policy is the target.

Resignation: from move ``resign_min_moves`` on, the player to move resigns when the root value
of its search falls below the current threshold (``resign_threshold`` at first; the training
loop moves it with `trapy_rl.train.resign.ResignCalibrator` through `set_resign_threshold`). A
fraction ``resign_playout_fraction`` of games never resign; in those the first player whose
value fell below the threshold is remembered, and if that player then wins, the resignation
would have been false. Their rate is in `SelfPlayStats`. Every game records each player's
lowest root value, which is what the calibration reads.

`SelfPlay` is the worker side of the worker/learner boundary: weights go in (through the
evaluator it holds), `SelfPlayResult` (samples and game records) comes out.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import Board
from trapy_rl.game.planes import NUM_PLANES, PLANE_NAMES, encode_planes
from trapy_rl.game.sampling import random_legal_actions
from trapy_rl.mcts.policies import select_actions, select_opening_actions
from trapy_rl.mcts.search import MCTS, Evaluator
from trapy_rl.mcts.settings import SearchSettings
from trapy_rl.train.replay import Samples
from trapy_rl.train.settings import SelfPlaySettings

_SWAP_PLANE = PLANE_NAMES.index("swap_allowed")

__all__ = [
    "GameRecord",
    "SelfPlay",
    "SelfPlayResult",
    "SelfPlayStats",
    "merge_results",
    "summarize",
]


@dataclass
class GameRecord:
    """One finished self-play game.

    Attributes:
        moves: the actions played, in order (the swap is ``board.swap_action``).
        winner: 1 blue or 2 yellow.
        resigned: the loser resigned.
        playout: resignation was disabled in this game.
        would_resign: in a playout game, the first player whose root value fell below the
            threshold (0 if none).
        min_values: each player's lowest root value in the game, (blue, yellow).
    """

    moves: list[int]
    winner: int
    resigned: bool = False
    playout: bool = False
    would_resign: int = 0
    min_values: tuple[float, float] = (1.0, 1.0)

    @property
    def winner_min_value(self) -> float:
        """The lowest root value the winner saw: how close it came to resigning."""
        return self.min_values[self.winner - 1]

    @property
    def false_resignation(self) -> bool:
        """A playout game that the player who would have resigned went on to win."""
        return self.playout and self.would_resign != 0 and self.would_resign == self.winner


@dataclass
class SelfPlayStats:
    """Rates and outcomes of one or more `SelfPlay.play` calls."""

    seconds: float = 0.0
    moves: int = 0  # searches run (positions generated)
    simulations: int = 0
    games: int = 0
    mean_game_length: float = float("nan")
    blue_win_rate: float = float("nan")
    swap_rate: float = float("nan")
    resign_rate: float = float("nan")
    false_resign_rate: float = float("nan")

    @property
    def games_per_s(self) -> float:
        return self.games / self.seconds if self.seconds > 0 else 0.0

    @property
    def moves_per_s(self) -> float:
        return self.moves / self.seconds if self.seconds > 0 else 0.0

    @property
    def simulations_per_s(self) -> float:
        return self.simulations / self.seconds if self.seconds > 0 else 0.0


@dataclass
class SelfPlayResult:
    """What self-play hands the learner: positions, finished games and timings."""

    samples: Samples
    records: list[GameRecord] = field(default_factory=list)
    stats: SelfPlayStats = field(default_factory=SelfPlayStats)


def merge_results(parts: list[SelfPlayResult], board: Board, *, seconds: float) -> SelfPlayResult:
    """The results of several processes' self-play as one: samples and records in order, the
    rates over ``seconds`` of wall-clock."""
    records = [record for part in parts for record in part.records]
    stats = summarize(
        records,
        board,
        seconds=seconds,
        moves=sum(part.stats.moves for part in parts),
        simulations=sum(part.stats.simulations for part in parts),
    )
    return SelfPlayResult(Samples.concatenate([p.samples for p in parts], board), records, stats)


def summarize(
    records: list[GameRecord], board: Board, *, seconds: float, moves: int, simulations: int
) -> SelfPlayStats:
    """The statistics of a list of finished games."""
    stats = SelfPlayStats(seconds=seconds, moves=moves, simulations=simulations)
    stats.games = len(records)
    if records:
        stats.mean_game_length = float(np.mean([len(r.moves) for r in records]))
        stats.blue_win_rate = float(np.mean([r.winner == 1 for r in records]))
        stats.swap_rate = float(
            np.mean([len(r.moves) > 1 and r.moves[1] == board.swap_action for r in records])
        )
        stats.resign_rate = float(np.mean([r.resigned for r in records]))
        watched = [r for r in records if r.playout and r.would_resign]
        if watched:
            stats.false_resign_rate = float(np.mean([r.false_resignation for r in watched]))
    return stats


@dataclass
class _Move:
    """One move's searches in the B games (see `SelfPlay._search_move`).

    Attributes:
        visit_counts: [B, A] float32.
        root_values: [B] float32, for the player to move.
        policies: [B, A] float32, the policy targets; zero rows for cheap searches.
        selected_actions: [B] int64, the searches' own moves (gumbel), else None.
        simulations: simulations run in all.
    """

    visit_counts: np.ndarray
    root_values: np.ndarray
    policies: np.ndarray
    selected_actions: np.ndarray | None = None
    simulations: int = 0


class SelfPlay:
    """``num_games`` self-play games that persist between calls of `play`.

    Args:
        evaluator: ``(batch, games) -> (logits [n, A], values [n])``, e.g. `NetEvaluator(net)`;
            it holds the net, so new weights loaded into the net are used from the next call.
        board: the board the games are played on.
        search: the search at every move (with root noise).
        settings: ``num_games`` (B, games played together), ``temperature_moves`` and the
            resignation settings; the loop's and the workers' settings are not used here.
        seed: seeds which games are playout games at the start.

    Attributes:
        batch: the BatchGame of the games in progress.
    """

    def __init__(
        self,
        evaluator: Evaluator,
        board: Board,
        *,
        search: SearchSettings,
        settings: SelfPlaySettings,
        seed: int | list[int] = 0,
    ):
        if not isinstance(search, SearchSettings):
            raise TypeError(f"search must be a SearchSettings, got {type(search).__name__}")
        if not isinstance(settings, SelfPlaySettings):
            raise TypeError(f"settings must be SelfPlaySettings, got {type(settings).__name__}")
        if settings.forced_playouts > 0 and search.search != "puct":
            raise ValueError(
                "forced_playouts > 0 needs the puct search: the gumbel search trains on its "
                "improved policy, not on visit counts"
            )
        self.evaluator = evaluator
        self.board = board
        self.search = search
        self.settings = settings
        num_games = self.num_games = settings.num_games

        self.batch = BatchGame(num_games, board)
        length = board.num_cells + 1
        height, width = board.grid_shape
        # The positions of the games in progress, indexed by ply.
        self._planes = np.zeros((num_games, length, NUM_PLANES, height, width), np.float32)
        self._policies = np.zeros((num_games, length, board.num_actions), np.float32)
        self._root_values = np.full((num_games, length), np.nan, np.float32)  # NaN: unknown
        self._players = np.zeros((num_games, length), np.int8)
        self._playout = np.zeros(num_games, bool)  # [B] resignation disabled
        self._would_resign = np.zeros(num_games, np.int8)  # [B] player, 0 none
        self._min_values = np.ones((num_games, 2), np.float32)  # [B, 2] blue's, yellow's
        self._random_moves = np.zeros(num_games, np.int16)  # [B] a random opening's length
        self.resign_threshold = float(settings.resign_threshold)
        rng = np.random.default_rng(seed)
        self._playout[:] = rng.random(num_games) < settings.resign_playout_fraction

    # ------------------------------------------------------------------ playing
    def play(self, num_moves: int, *, seed: int | list[int]) -> SelfPlayResult:
        """Search and play ``num_moves`` moves in every game.

        Args:
            num_moves: moves per game (each is one batched search over all B games).
            seed: seeds the search's noise and the move sampling of this call.

        Returns:
            The positions of the games that finished, their records and the rates.
        """
        start = time.perf_counter()
        rng = np.random.default_rng(seed)
        search = MCTS(
            self.evaluator,
            self.board,
            num_games=self.num_games,
            settings=self.search,
            seed=int(rng.integers(2**63)),
        )
        batch = self.batch
        rows = np.arange(self.num_games)
        parts: list[Samples] = []
        records: list[GameRecord] = []
        searches = simulations = 0
        for _ in range(num_moves):
            move = self._search_move(search, rng)
            visits, root_values = move.visit_counts, move.root_values  # [B, A], [B]
            searches += self.num_games
            simulations += int(move.simulations)

            ply = batch.move_count.astype(np.intp)
            self._planes[rows, ply] = encode_planes(batch)
            self._policies[rows, ply] = move.policies
            self._root_values[rows, ply] = root_values
            self._players[rows, ply] = batch.to_move

            mover = batch.to_move.astype(np.intp) - 1  # [B] 0 blue, 1 yellow
            seen = self._min_values[rows, mover]
            self._min_values[rows, mover] = np.minimum(seen, root_values)
            low = root_values < self.resign_threshold
            low &= ply >= self.settings.resign_min_moves
            resign = low & ~self._playout
            watch = low & self._playout & (self._would_resign == 0)
            self._would_resign[watch] = batch.to_move[watch]
            if move.selected_actions is not None:  # gumbel: a sample already (its noise)
                actions = move.selected_actions
            else:
                actions = select_opening_actions(visits, ply, self.settings.temperature_moves, rng)
            drawn = np.zeros(self.num_games, bool)
            if self.settings.random_opening_share > 0:
                actions, drawn = self._draw_random_openings(actions, rng)
            if self.settings.swap_coin_share > 0:
                actions = self._toss_swap_coins(actions, visits, ~drawn, rng)
            if resign.any():
                batch.resign(resign)
            batch.step(actions)  # games just resigned are over and ignore theirs
            search.advance(actions)

            finished = np.flatnonzero(batch.is_over)
            if len(finished):
                parts.append(self._collect(finished, records))
                batch.reset(finished)
                search.reset(finished)
                self._playout[finished] = (
                    rng.random(len(finished)) < self.settings.resign_playout_fraction
                )
                self._would_resign[finished] = 0
                self._min_values[finished] = 1.0
        samples = Samples.concatenate(parts, self.board)
        stats = summarize(
            records,
            self.board,
            seconds=time.perf_counter() - start,
            moves=searches,
            simulations=simulations,
        )
        return SelfPlayResult(samples, records, stats)

    def _draw_random_openings(
        self, actions: np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        """The first stone on a uniformly drawn cell in the share ``random_opening_share`` of
        the games about to play it, and with ``random_opening_moves`` > 1 the random run of
        moves after it that each such game drew (in the share ``random_run_share`` of them);
        the others keep the search's move.

        Args:
            actions: [B] int64, the moves chosen by the search; not modified.
            rng: the call's random generator.

        Returns:
            [B] int64, the moves to play; [B] bool, the games whose move was drawn.
        """
        count = self.batch.move_count
        opening = np.flatnonzero(count == 0)
        drawn = opening[rng.random(len(opening)) < self.settings.random_opening_share]
        actions = actions.copy()
        actions[drawn] = rng.integers(self.board.num_cells, size=len(drawn))  # all cells free
        longest = self.settings.random_opening_moves
        if longest > 1:
            self._random_moves[opening] = 0
            runs = rng.integers(1, longest + 1, size=len(drawn))
            if self.settings.random_run_share < 1:
                runs[rng.random(len(drawn)) >= self.settings.random_run_share] = 1
            self._random_moves[drawn] = runs
            going = np.flatnonzero((count > 0) & (count < self._random_moves))
            if len(going):
                legal = self.batch.legal_mask()[going]
                actions[going] = random_legal_actions(legal, rng)
            drawn = np.concatenate([drawn, going])
        mask = np.zeros(self.num_games, bool)
        mask[drawn] = True
        return actions, mask

    def _toss_swap_coins(
        self,
        actions: np.ndarray,
        visits: np.ndarray,
        searched: np.ndarray,
        rng: np.random.Generator,
    ) -> np.ndarray:
        """Move two's swap decision by a fair coin in the share ``swap_coin_share`` of the games
        making it: heads swaps, tails plays on (the search's move, or where the search chose
        the swap, another drawn like it from the other visits). A net whose self-play settles
        on always or never swapping would otherwise never train on the other branch, and the
        opening map plays from the position after the swap.

        Args:
            actions: [B] int64, the moves chosen by the search; not modified.
            visits: [B, A] the searches' root visit counts.
            searched: [B] bool, the games whose move is the search's (a random opening's
                drawn move is left as drawn).
            rng: the call's random generator.

        Returns:
            [B] int64, the moves to play.
        """
        deciding = np.flatnonzero(self.batch.swap_allowed & searched)
        tossed = deciding[rng.random(len(deciding)) < self.settings.swap_coin_share]
        heads = rng.random(len(tossed)) < 0.5
        swap = self.board.swap_action
        actions = actions.copy()
        actions[tossed[heads]] = swap
        replay = tossed[~heads][actions[tossed[~heads]] == swap]
        if len(replay):
            counts = visits[replay].astype(np.float64)
            counts[:, swap] = 0.0
            unvisited = counts.sum(axis=1) == 0  # every simulation went to the swap
            counts[unvisited] = self.batch.legal_mask()[replay[unvisited]]
            counts[unvisited, swap] = 0.0
            tau = 1.0 if self.settings.temperature_moves > 1 else 0.0
            actions[replay] = select_actions(counts, tau, rng)
        return actions

    def _search_move(self, search: MCTS, rng: np.random.Generator) -> _Move:
        """One search in every game: the full search, or in the share ``1 -
        full_search_share`` of games (drawn per move) a cheap one of ``cheap_num_simulations``
        without noise, whose policy row is left at zero: the move is played, its position is
        not a training position (KataGo's playout cap randomization). With
        ``forced_playouts`` the full searches force playouts at their roots and their policy
        targets are pruned (`trapy_rl.mcts.pruning`); the moves are drawn from the visits."""
        n, share = self.num_games, self.settings.full_search_share
        full = np.ones(n, dtype=bool) if share >= 1.0 else rng.random(n) < share
        move = _Move(
            visit_counts=np.zeros((n, self.board.num_actions), np.float32),
            root_values=np.zeros(n, np.float32),
            policies=np.zeros((n, self.board.num_actions), np.float32),
        )
        cheap = self.settings.cheap_num_simulations
        for chosen, sims, noise in ((full, None, True), (~full, cheap, False)):
            games = np.flatnonzero(chosen)
            if not len(games):
                continue
            result = search.search(
                self.batch,
                games=games,
                add_noise=noise,
                num_simulations=sims,
                forced_playouts=self.settings.forced_playouts if noise else 0.0,
            )
            move.visit_counts[games] = result.visit_counts
            move.root_values[games] = result.root_values
            move.simulations += len(games) * (sims or self.search.num_simulations)
            if noise:  # the full search's policy target
                target = result.improved_policy
                if target is None:
                    target = result.pruned_policy
                if target is None:
                    counts = result.visit_counts.astype(np.float32)
                    target = counts / counts.sum(axis=1, keepdims=True)
                move.policies[games] = target
            if result.selected_actions is not None:
                if move.selected_actions is None:
                    move.selected_actions = np.zeros(n, np.int64)
                move.selected_actions[games] = result.selected_actions
        return move

    def _collect(self, games: np.ndarray, records: list[GameRecord]) -> Samples:
        """The full-search positions of finished ``games`` [m] with their outcomes; appends
        the games' records."""
        batch = self.batch
        parts = []
        for g in games:
            length = int(batch.move_count[g])
            # A resignation ends the game before the resigning player's move is played: the
            # position searched last (at ply ``length``) belongs to the game too.
            kept = length + 1 if batch.resigned[g] else length
            # Only the full searches' positions are training positions (KataGo's playout cap
            # randomization): a cheap search's row of zeros marks a move played, not recorded.
            recorded = np.flatnonzero(self._policies[g, :kept].sum(axis=1) > 0)
            winner = int(batch.winner[g])
            players = self._players[g, recorded]
            stones = batch.stones[g]  # [K] the final position: 0 empty, 1 blue, 2 yellow
            mine = stones[None, :] == players[:, None]  # [n, K]
            ownership = np.where(mine, 1, np.where(stones[None, :] == 0, 0, -1))
            values = np.where(players == winner, 1.0, -1.0).astype(np.float32)
            root_values = self._root_values[g, recorded]  # NaN: a game resumed from before q
            samples = Samples(
                self._planes[g, recorded],
                self._policies[g, recorded],
                values,
                ownership.astype(np.int8),
                np.full(len(recorded), not batch.resigned[g]),
                np.where(np.isnan(root_values), values, root_values),
            )
            parts.append(samples)
            if self.settings.post_swap_samples:
                parts += self._post_swap_sample(g, recorded, samples)
            records.append(
                GameRecord(
                    moves=[int(a) for a in batch.history[g, :length]],
                    winner=winner,
                    resigned=bool(batch.resigned[g]),
                    playout=bool(self._playout[g]),
                    would_resign=int(self._would_resign[g]),
                    min_values=(float(self._min_values[g, 0]), float(self._min_values[g, 1])),
                )
            )
        return Samples.concatenate(parts, self.board)

    def _post_swap_sample(self, g: int, recorded: np.ndarray, samples: Samples) -> list[Samples]:
        """The position after the swap as one more sample of game ``g``, when it declined the
        swap at move two and that decision is a training position (see `SelfPlaySettings`):
        the decision's planes with ``swap_allowed`` off, its policy target without the swap
        (renormalised), its value and ownership targets, its outcome as its root value (no
        search was run there: the decision's root value counts the swap too). [] otherwise."""
        decision = np.flatnonzero(recorded == 1)  # ply 1: the swap decision
        swap = self.board.swap_action
        if not len(decision) or self.batch.history[g, 1] == swap:
            return []
        row = int(decision[0])
        policy = samples.policies[row].copy()
        policy[swap] = 0.0
        if policy.sum() <= 0:  # every visit went to the swap: no target among the others
            return []
        planes = samples.planes[row].copy()
        planes[_SWAP_PLANE] = 0.0
        return [
            Samples(
                planes[None],
                (policy / policy.sum())[None],
                samples.values[row : row + 1],
                samples.ownership[row : row + 1],
                samples.owned[row : row + 1],
                samples.values[row : row + 1],
            )
        ]

    def set_resign_threshold(self, threshold: float) -> None:
        """Resign below ``threshold`` from the next move on (a root value, < 1)."""
        if not -np.inf < threshold < 1:
            raise ValueError(f"a resignation threshold must be below 1, got {threshold}")
        self.resign_threshold = float(threshold)

    # ------------------------------------------------------------------ checkpoints
    def state_dict(self) -> dict:
        """The games in progress as plain arrays: moves so far, the searches' visit targets and
        root values.

        The planes are not stored; `load_state_dict` recomputes them by replaying the moves.
        """
        longest = int(self.batch.move_count.max())
        return {
            "side": self.board.side,
            "num_games": self.num_games,
            "history": self.batch.history[:, :longest].copy(),
            "move_count": self.batch.move_count.copy(),
            "policies": self._policies[:, :longest].copy(),
            "root_values": self._root_values[:, :longest].copy(),
            "playout": self._playout.copy(),
            "would_resign": self._would_resign.copy(),
            "min_values": self._min_values.copy(),
            "random_moves": self._random_moves.copy(),
            "resign_threshold": self.resign_threshold,
        }

    def load_state_dict(self, state: dict) -> None:
        """Restore the games of `state_dict` (same board side and number of games)."""
        if int(state["side"]) != self.board.side or int(state["num_games"]) != self.num_games:
            raise ValueError(
                f"self-play state of {state['num_games']} games on the side-{state['side']} "
                f"board does not fit {self.num_games} games on the side-{self.board.side} board"
            )
        history = np.asarray(state["history"]).astype(np.int16)
        move_count = np.asarray(state["move_count"]).astype(np.int16)
        batch = self.batch
        batch.reset()
        for ply in range(history.shape[1]):
            live = np.flatnonzero(move_count > ply)
            if not len(live):
                break
            self._planes[live, ply] = encode_planes(batch, live)
            self._players[live, ply] = batch.to_move[live]
            actions = np.zeros(self.num_games, dtype=np.intp)
            actions[live] = history[live, ply]
            frozen = batch.winner.copy()
            batch.winner[move_count <= ply] = 1  # hold games whose history is exhausted
            batch.step(actions)
            batch.winner[:] = np.where(move_count <= ply, frozen, batch.winner)
        if batch.is_over.any():
            raise ValueError("self-play state holds a finished game; it cannot be resumed")
        longest = history.shape[1]
        self._policies[:] = 0.0
        self._policies[:, :longest] = np.asarray(state["policies"])
        # Checkpoints written before root values were kept: unknown, the outcome stands in.
        root_values = state.get("root_values")
        self._root_values[:] = np.nan
        if root_values is not None:
            self._root_values[:, :longest] = np.asarray(root_values, dtype=np.float32)
        self._playout[:] = np.asarray(state["playout"]).astype(bool)
        self._would_resign[:] = np.asarray(state["would_resign"]).astype(np.int8)
        # Checkpoints written before these were kept: every minimum unknown, the first threshold.
        self._min_values[:] = np.asarray(state.get("min_values", 1.0), dtype=np.float32)
        self.resign_threshold = float(state.get("resign_threshold", self.resign_threshold))
        # Checkpoints written before random openings had a length: one drawn move, played.
        self._random_moves[:] = np.asarray(state.get("random_moves", 0), dtype=np.int16)
