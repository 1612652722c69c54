"""Evaluation of agents: matches with confidence intervals and game records, tournaments, and
maximum-likelihood Elo ratings with intervals (the ``trapy-eval`` command is `trapy_rl.eval.cli`).
"""

from trapy_rl.eval.arena import MatchResult, play_match
from trapy_rl.eval.elo import EloRatings, expected_score, fit_elo
from trapy_rl.eval.records import load_records, replay_record
from trapy_rl.eval.report import plot_elo_curve, write_tournament
from trapy_rl.eval.stats import wilson_interval
from trapy_rl.eval.tournament import TournamentResult, pairings, play_tournament, run_checkpoints

__all__ = [
    "EloRatings",
    "MatchResult",
    "TournamentResult",
    "expected_score",
    "fit_elo",
    "load_records",
    "pairings",
    "play_match",
    "play_tournament",
    "plot_elo_curve",
    "replay_record",
    "run_checkpoints",
    "wilson_interval",
    "write_tournament",
]
