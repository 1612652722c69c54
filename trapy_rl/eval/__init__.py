"""Evaluation of agents: matches with confidence intervals and game records."""

from trapy_rl.eval.arena import (
    MatchResult,
    load_records,
    play_match,
    replay_record,
    wilson_interval,
)

__all__ = ["MatchResult", "load_records", "play_match", "replay_record", "wilson_interval"]
