"""The solver agent: perfect play on small boards, from `trapy_rl.solve`.

In a won position it plays a move the solver proved winning; in a lost one (every move loses
against perfect play) the move whose refutation took the solver the most work, the hardest
for a fallible opponent to find. One transposition table serves the whole match, so each move
after the first costs little.

It refuses boards above side `MAX_SIDE`: every position of side 4 solves in about a second
from an empty table (the whole opening, all 22 first moves, in 1 s of CPU), while some side-5
openings take minutes each (see `trapy_rl/solve/data/side5.json`).

>>> from trapy_rl.game import BatchGame
>>> agent = from_spec(AgentSpec.parse("solver"), board=Board(3), seed=0)
>>> batch = BatchGame(1, side=3)
>>> _ = batch.step(np.array([batch.board.parse_action("b2")]))  # b2 wins for its owner
>>> batch.board.action_name(int(agent.act(batch, np.array([0]))[0]))
'swap'
"""

from __future__ import annotations

import numpy as np

from trapy_rl.agents.base import AgentSpec
from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import Board
from trapy_rl.game.state import GameState
from trapy_rl.solve import Solver

__all__ = ["MAX_SIDE", "USAGE", "SolverAgent", "from_spec"]

MAX_SIDE = 4
"""The largest side the agent plays (a side-5 move can take minutes to prove)."""
USAGE = "solver[,table_bits=N] (sides 2 to 4)"


class SolverAgent:
    """Plays perfectly: a proven winning move, else the hardest refuted one.

    Args:
        board: the board it plays on (side at most `MAX_SIDE`).
        seed: breaks ties between equally hard lost moves (None: fresh entropy).
        table_bits: the solver's table holds ``2**table_bits`` positions.
        name: the label in tables and records.
    """

    def __init__(
        self, board: Board, seed: int | None = None, *, table_bits: int = 20, name: str = "solver"
    ) -> None:
        if board.side > MAX_SIDE:
            raise ValueError(
                f"the solver agent plays sides 2 to {MAX_SIDE}, not side {board.side} "
                "(a side-5 move can take minutes to prove)"
            )
        self.name = name
        self.solver = Solver(board, table_bits=table_bits)
        self.rng = np.random.default_rng(seed)

    def act(self, batch: BatchGame, games: np.ndarray) -> np.ndarray:
        """[n] int64: a move for each of ``games`` [n] int."""
        if batch.board is not self.solver.board:
            raise ValueError(
                f"{self.name}: built for side {self.solver.board.side}, "
                f"asked to play side {batch.board.side}"
            )
        games = np.asarray(games, dtype=np.intp)
        return np.array([self._move(batch.to_state(int(g))) for g in games], dtype=np.int64)

    def _move(self, state: GameState) -> int:
        answer = self.solver.solve(state)
        if answer.win:
            return int(answer.move)
        # Lost: every child is proven won for the opponent; take the one that cost the most.
        actions = state.legal_actions()
        work = []
        for action in actions:
            child = state.copy().play(action)
            swap = child.move_count <= 1
            work.append(self.solver.known(child.stones, child.to_move, swap=swap)[1])
        work = np.array(work)
        best = np.flatnonzero(work == work.max())
        return int(actions[self.rng.choice(best)])

    def __repr__(self) -> str:
        return f"SolverAgent(side={self.solver.board.side})"


def from_spec(spec: AgentSpec, *, board: Board, seed: int | None) -> SolverAgent:
    spec.check_args(0, 0, f"'{USAGE}'")
    options = spec.typed_options({"table_bits": 20})
    return SolverAgent(board, seed, name=spec.text, **options)
