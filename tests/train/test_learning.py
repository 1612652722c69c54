"""Training learns: a short run beats random play by far more than search alone does.

For scale, with the same 8 simulations per move a search guided by a uniform prior and a zero
value (no learning) wins about 60% of side-4 games against random play.
"""

import pytest

from trapy_rl.train import train


def short_run(run_dir, make_config, iterations: int):
    cfg = make_config(
        run_dir,
        iterations=iterations,
        **{
            "mcts.num_simulations": 16,
            "selfplay.num_games": 16,
            "selfplay.moves_per_iteration": 12,
            "replay.min_size": 64,
            "replay.train_ratio": 4.0,
            "optim.batch_size": 64,
            "optim.lr": 0.003,
            "checkpoint.every": 0,
            "eval.final_games": 100,
            "eval.num_simulations": 8,
        },
    )
    return train(cfg).final_match


def test_a_short_run_beats_random(tmp_path, make_config):
    match = short_run(tmp_path, make_config, iterations=8)
    assert match.games == 100 and match.win_rate >= 0.8


@pytest.mark.slow
def test_two_minutes_of_training_beat_random_in_nine_games_of_ten(tmp_path, make_config):
    match = short_run(tmp_path, make_config, iterations=60)
    assert match.games == 100 and match.win_rate >= 0.9
