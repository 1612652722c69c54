"""The agent that plays by search: any evaluator guiding the project's batched PUCT search.

`RolloutMCTSAgent` (random-playout leaves) and `NetworkMCTSAgent` (a trained net's leaves) are
this agent with their evaluators; there is one search agent, as there is one search.

Shapes: B games in the batch, n games to move, A actions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from trapy_rl.agents.base import AgentSpec
from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import Board
from trapy_rl.mcts.policies import select_opening_actions
from trapy_rl.mcts.search import MCTS, Evaluator
from trapy_rl.mcts.settings import SearchSettings

__all__ = [
    "SPEC_SEARCH_OPTIONS",
    "SearchAgent",
    "spec_agent_options",
    "spec_search_defaults",
    "spec_search_settings",
]

# The search settings an agent spec may give as options (``uct:200,c_puct=2``,
# ``mcts:PATH:800,leaves=16``). The noise settings are not among them: ``noise`` (on or off, as
# in self-play) and ``temperature_moves`` are options of the agent (`spec_agent_options`), not
# of its search.
SPEC_SEARCH_OPTIONS = (
    "search",
    "c_puct",
    "fpu_reduction",
    "max_considered",
    "c_visit",
    "c_scale",
    "leaves",
    "virtual",
)


def spec_search_settings(
    spec: AgentSpec,
    options: dict[str, Any],
    num_simulations: int,
    *,
    defaults: SearchSettings | None = None,
) -> SearchSettings:
    """The `SearchSettings` of an agent spec.

    Args:
        spec: the parsed spec (for error messages).
        options: its options, typed (`AgentSpec.typed_options`); those named in
            `SPEC_SEARCH_OPTIONS` are taken, the rest ignored.
        num_simulations: its simulations a move.
        defaults: the agent kind's settings where the spec says nothing (default
            ``SearchSettings()``; ``uct`` counts pending descents as losses).

    Raises:
        ValueError: naming the spec, for a setting out of range.
    """
    chosen = {name: options[name] for name in SPEC_SEARCH_OPTIONS if name in options}
    try:
        return (defaults or SearchSettings()).replace(num_simulations=num_simulations, **chosen)
    except ValueError as error:
        raise ValueError(f"agent spec {spec.text!r}: {error}") from None


def spec_search_defaults(defaults: SearchSettings | None = None) -> dict[str, Any]:
    """The defaults of the `SPEC_SEARCH_OPTIONS` (those of ``defaults``, by default
    ``SearchSettings()``) and of ``noise`` and ``temperature_moves`` (`SearchAgent`), for
    `AgentSpec.typed_options`."""
    defaults = defaults or SearchSettings()
    return {
        **{name: getattr(defaults, name) for name in SPEC_SEARCH_OPTIONS},
        "noise": False,
        "temperature_moves": 0,
    }


def spec_agent_options(options: dict[str, Any]) -> dict[str, Any]:
    """The `SearchAgent` keywords of a spec's typed options: ``noise`` and
    ``temperature_moves``."""
    return {
        "noise": options.get("noise", False),
        "temperature_moves": options.get("temperature_moves", 0),
    }


class SearchAgent:
    """Searches each position afresh and plays the most visited root action (PUCT) or the
    search's best action (gumbel).

    Without noise the agent is deterministic but for ties between equally visited actions,
    which are broken at random (PUCT). With ``noise=True`` it searches with self-play's root
    noise (Dirichlet noise in the root priors for PUCT, sampled Gumbel noise for gumbel, whose
    pick is then a sample of its improved policy), so that games from one position vary: the
    opening map plays many games from each first move this way. With ``temperature_moves=N``
    the first N moves of a game (counted from the empty board, the swap included) are drawn
    in proportion to the visit counts, as self-play draws them (PUCT; gumbel's pick is a
    sample already). The tree is built anew for every move (no state between moves), so
    ``reset`` is not needed.

    Args:
        evaluator: ``(batch, games) -> (logits [n, A] float32, values [n] float32)``, illegal
            actions at ``-inf``.
        settings: the search (``num_simulations`` a move, ``c_puct``, first-play urgency, and
            the noise's ``dirichlet_alpha``/``dirichlet_fraction`` when ``noise`` is on).
        seed: seeds tie-breaking and the noise (None: fresh entropy).
        name: the label in tables and records.
        noise: search with self-play's root noise (see above).
        temperature_moves: the moves of a game drawn at temperature 1 (see above; 0: none).
    """

    def __init__(
        self,
        evaluator: Evaluator,
        *,
        settings: SearchSettings,
        seed: int | np.random.SeedSequence | None = None,
        name: str,
        noise: bool = False,
        temperature_moves: int = 0,
    ) -> None:
        if not callable(evaluator):
            raise TypeError(f"evaluator must be callable, got {type(evaluator).__name__}")
        if not isinstance(settings, SearchSettings):
            raise TypeError(f"settings must be a SearchSettings, got {type(settings).__name__}")
        self.evaluator = evaluator
        self.settings = settings
        self.rng = np.random.default_rng(seed)
        if isinstance(temperature_moves, bool) or int(temperature_moves) != temperature_moves:
            raise ValueError(f"temperature_moves must be an integer, got {temperature_moves!r}")
        if temperature_moves < 0:
            raise ValueError(f"temperature_moves must be >= 0, got {temperature_moves}")
        self.noise = bool(noise)
        self.temperature_moves = int(temperature_moves)
        self.name = name
        self._searches: dict[tuple[Board, int], MCTS] = {}

    def _search(self, board: Board, num_games: int) -> MCTS:
        key = (board, num_games)
        search = self._searches.get(key)
        if search is None:
            # The noise draws from its own generator, seeded from the agent's (only with noise,
            # so that a noiseless agent's tie-breaking stream is what it always was).
            noise_seed = int(self.rng.integers(2**63)) if self.noise else None
            search = MCTS(
                self.evaluator, board, num_games=num_games, settings=self.settings, seed=noise_seed
            )
            self._searches = {key: search}  # keep one: the trees are large
        return search

    def act(self, batch: BatchGame, games: np.ndarray) -> np.ndarray:
        """[n] int64: the most visited root action of a fresh search in each of ``games``
        (drawn in proportion to the visits in the first ``temperature_moves`` moves)."""
        games = np.asarray(games, dtype=np.intp)
        if len(games) == 0:
            return np.zeros(0, dtype=np.int64)
        search = self._search(batch.board, batch.num_games)
        search.reset(games)
        result = search.search(batch, games=games, add_noise=self.noise)
        if result.selected_actions is not None:  # gumbel: the search's own best action
            return result.selected_actions
        return select_opening_actions(
            result.visit_counts, batch.move_count[games], self.temperature_moves, self.rng
        )

    def __repr__(self) -> str:
        options = ", noise=True" if self.noise else ""
        if self.temperature_moves:
            options += f", temperature_moves={self.temperature_moves}"
        return f"{type(self).__name__}({self.settings}{options}, name={self.name!r})"
