"""Rollout evaluation and the rollout-MCTS agent (UCT with random playouts).

A random playout of a Y-type game is a random filling of the board (`trapy_rl.game.fill`), so
`RolloutEvaluator` values a position by filling it ``num_rollouts`` times at random and
averaging the outcomes for the player to move. `RolloutMCTSAgent` runs the project's batched
search (`trapy_rl.mcts`) with that evaluator and plays the most visited root action: there is
one search implementation, with network or rollout leaves.

Shapes: B games in the batch, n evaluated games, K cells, A = K + 1 actions, R rollouts.
"""

from __future__ import annotations

import numpy as np

from trapy_rl.agents.base import AgentSpec
from trapy_rl.agents.search import (
    SearchAgent,
    spec_agent_options,
    spec_search_defaults,
    spec_search_settings,
)
from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import Board
from trapy_rl.game.fill import playout_wins
from trapy_rl.mcts.settings import SearchSettings

__all__ = ["UCT_SETTINGS", "RolloutEvaluator", "RolloutMCTSAgent"]


class RolloutEvaluator:
    """Uniform prior over the legal actions; value = mean outcome of random playouts.

    Each playout is a uniformly random filling of the empty cells, the player to move first
    (`trapy_rl.game.fill.playout_wins`, by its compiled kernel), which has the same outcome as
    a random game played on from the position. Where the swap is legal (move_count == 1, yellow
    to move) each playout first takes it with probability ``swap_probability`` (1/2, as the
    random agent does): blue's stone turns yellow and the rest of the board is filled with blue
    moving first. A finished game is worth -1 to the player to move (the opponent won on the
    move before).

    Args:
        num_rollouts: R, playouts per evaluated position; the value's resolution is 2/R.
        seed: seeds the playouts (None: fresh entropy).
        swap_probability: the playouts' chance of taking a legal swap.
    """

    def __init__(
        self,
        num_rollouts: int = 1,
        seed: int | np.random.SeedSequence | None = None,
        *,
        swap_probability: float = 0.5,
    ) -> None:
        if isinstance(num_rollouts, bool) or not isinstance(num_rollouts, (int, np.integer)):
            raise ValueError(f"num_rollouts must be an integer >= 1, got {num_rollouts!r}")
        if num_rollouts < 1:
            raise ValueError(f"num_rollouts must be >= 1, got {num_rollouts}")
        if not 0.0 <= swap_probability <= 1.0:
            raise ValueError(f"swap_probability must be in [0, 1], got {swap_probability}")
        self.num_rollouts = int(num_rollouts)
        self.swap_probability = float(swap_probability)
        self.rng = np.random.default_rng(seed)

    def __call__(self, batch: BatchGame, games: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Evaluate ``games`` [n] int of ``batch`` (not modified).

        Returns:
            logits [n, A] float32 (0 legal, -inf illegal), values [n] float32 in [-1, 1] for
            the player to move.
        """
        games = np.asarray(games, dtype=np.intp)
        legal = batch.legal_mask()[games]
        logits = np.where(legal, np.float32(0.0), np.float32(-np.inf)).astype(np.float32)
        values = np.full(len(games), -1.0, dtype=np.float32)  # finished games: lost
        live = batch.winner[games] == 0
        if live.any():
            values[live] = self.values(batch, games[live])
        return logits, values

    def values(self, batch: BatchGame, games: np.ndarray) -> np.ndarray:
        """The mean playout outcome for the player to move in unfinished games.

        Args:
            batch: the positions; not modified.
            games: [n] int, unfinished games of ``batch``.

        Returns:
            [n] float32 in [-1, 1]: 2 w / R - 1 for w wins in R playouts (`playout_wins`).
        """
        wins = playout_wins(
            batch,
            games,
            self.rng,
            num_playouts=self.num_rollouts,
            swap_probability=self.swap_probability,
            compiled=True,
        )
        return (2.0 * (wins / self.num_rollouts) - 1.0).astype(np.float32)


# ``uct`` without a number: rollouts are cheap, so the default budget is larger than a net's.
# A game searched alone sends several leaves a call; their pending descents count as virtual
# losses, which spread them wider than virtual visits: one playout's noisy value moves a Q far
# (`trapy_rl.mcts.kernels` has the matches that chose it).
UCT_SETTINGS = SearchSettings(num_simulations=1000, virtual="loss")


class RolloutMCTSAgent(SearchAgent):
    """UCT: the project's batched MCTS with `RolloutEvaluator` leaves; plays the most visited.

    Args:
        settings: the search (simulations a move, c_puct; the prior is uniform over the legal
            actions); default `UCT_SETTINGS`.
        num_rollouts: playouts per leaf evaluation.
        seed: seeds the playouts, tie-breaking and the noise (None: fresh entropy).
        name: the label in tables and records (default 'uct:SIMULATIONS').
        noise: search with self-play's root noise, so that games vary (`SearchAgent`).
        temperature_moves: the moves of a game drawn in proportion to the visits
            (`SearchAgent`; 0: none).
    """

    def __init__(
        self,
        settings: SearchSettings = UCT_SETTINGS,
        *,
        num_rollouts: int = 1,
        seed: int | None = None,
        name: str | None = None,
        noise: bool = False,
        temperature_moves: int = 0,
    ) -> None:
        playouts, ties = np.random.SeedSequence(seed).spawn(2)
        super().__init__(
            RolloutEvaluator(num_rollouts, playouts),
            settings=settings,
            seed=ties,
            name=name or f"uct:{settings.num_simulations}",
            noise=noise,
            temperature_moves=temperature_moves,
        )


USAGE = (
    "uct[:SIMULATIONS][,num_rollouts=R][,c_puct=C][,fpu_reduction=F][,leaves=L][,virtual=V]"
    "[,noise=N][,temperature_moves=K]"
)


def from_spec(spec: AgentSpec, *, board: Board, seed: int | None) -> RolloutMCTSAgent:
    usage = (
        "'uct' or 'uct:SIMULATIONS' (options: num_rollouts=R, c_puct=C, fpu_reduction=F, "
        "leaves=L, virtual=loss|visits)"
    )
    spec.check_args(0, 1, usage)
    num_simulations = UCT_SETTINGS.num_simulations
    if spec.args:
        try:
            num_simulations = int(spec.args[0])
        except ValueError:
            raise ValueError(
                f"agent spec {spec.text!r}: simulations {spec.args[0]!r} is not an integer"
            ) from None
    options = spec.typed_options({"num_rollouts": 1, **spec_search_defaults(UCT_SETTINGS)})
    settings = spec_search_settings(spec, options, num_simulations, defaults=UCT_SETTINGS)
    try:
        return RolloutMCTSAgent(
            settings,
            num_rollouts=options.get("num_rollouts", 1),
            seed=seed,
            name=spec.text,
            **spec_agent_options(options),
        )
    except ValueError as error:
        raise ValueError(f"agent spec {spec.text!r}: {error}") from None
