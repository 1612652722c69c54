"""The training command's Hydra configuration: typos fail naming the key, overrides reach the
settings, bad values are refused naming the key. (tests/test_settings_defaults.py: every
option of every group composes; the defaults are written once.)"""

import pytest

from trapy_rl.config import check_command_line, compose_settings
from trapy_rl.mcts import SearchSettings
from trapy_rl.nn import NetConfig
from trapy_rl.train.settings import TrainConfig


def compose_train(overrides: list[str]) -> TrainConfig:
    return compose_settings("train", TrainConfig, overrides)


def test_the_default_model_and_search_files_are_the_library_defaults():
    """``model: small`` is NetConfig(); ``mcts/default.yaml`` differs from SearchSettings()
    in the simulations only (self-play searches less than an agent)."""
    assert compose_train(["model=small"]).model == NetConfig()
    assert compose_train([]).mcts == SearchSettings().replace(num_simulations=32)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("mcts.num_simulatons=3", "mcts: unknown setting 'num_simulatons' (did you mean "
         "'num_simulations'?)"),
        ("selfplay.num_game=3", "selfplay: unknown setting 'num_game' (did you mean 'num_games'?)"),
        ("optim.learning_rate=0.1", "optim: unknown setting 'learning_rate' (known: "),
        ("iteratons=3", "unknown setting 'iteratons' (did you mean 'iterations'?)"),
        ("capacity=5", "unknown setting 'capacity' (did you mean 'replay.capacity'?)"),
        ("+mcts.typo=3", "mcts: unknown setting 'typo' (known: c_puct,"),
        ("side=abc", "side must be an integer, got 'abc'"),
        ("mcts.num_simulations=many", "mcts.num_simulations must be an integer, got 'many'"),
        ("bf16=maybe", "bf16 must be true or false, got 'maybe'"),
        ("eval.opponents=3", "eval.opponents must be a list such as [a,b], got '3'"),
        ("replay=foo", "replay must be a group of settings (replay.KEY=VALUE), got 'foo'"),
        ("model=huge", "model=huge: no such option of model (options: large, small, tiny)"),
        ("curriculum=bogus", "curriculum=bogus: no such option of curriculum (options: none, "
         "short, sides_5_7)"),
        ("mcts=enormous", "mcts=enormous: no such option of mcts (options: default, "),
        ("+side=3", "+side: side is already a setting: write side=... without the +"),
        ("side=[", "cannot read the override 'side=['"),
        ("side=${oops}", "side: Interpolation key 'oops' not found"),
        ("seed=1,2", "Ambiguous value for argument 'seed=1,2' (a list is key=[a,b]"),
    ],
)  # fmt: skip
def test_a_composition_error_is_one_line_naming_the_key_and_what_is_allowed(override, message):
    with pytest.raises(ValueError) as error:
        compose_train([override])
    assert str(error.value).startswith(message), str(error.value)
    assert "\n" not in str(error.value)


def test_the_command_line_is_checked_before_hydra_runs():
    check_command_line("train", TrainConfig, ["side=5", "--cfg", "job"])
    with pytest.raises(ValueError, match=r"^unknown setting 'iteratons'"):
        check_command_line("train", TrainConfig, ["iteratons=3"])
    with pytest.raises(ValueError, match=r"^cannot read the command line: unrecognized"):
        check_command_line("train", TrainConfig, ["side=5", "--bogus"])
    with pytest.raises(ValueError, match=r"^seed must be >= 0"):
        check_command_line("train", TrainConfig, ["seed=-1"])
    check_command_line("train", TrainConfig, ["--multirun", "seed=1,2"])  # Hydra's to sweep


def test_overrides_reach_the_config():
    cfg = compose_train(["side=6", "mcts.num_simulations=3", "optim=sgd", "debug=smoke"])
    # command-line values win over every file; the preset still sets what they leave alone
    assert cfg.side == 6 and cfg.mcts.num_simulations == 3 and cfg.optim.name == "sgd"
    assert cfg.iterations == 3 and cfg.model.channels == 16 and cfg.optim.lr_schedule == "cosine"


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("selfplay.resign_threshold=5", r"selfplay\.resign_threshold must be < 1"),
        ("replay.min_size=50000", r"replay\.min_size must be between 0 and capacity"),
        ("seed=-1", r"seed must be >= 0"),
        ("mcts.c_puct=0", r"mcts\.c_puct must be finite and > 0"),
        ("model.channels=0", r"model\.channels must be an integer >= 1"),
        ("side=41", r"side must be between 2 and 40"),
        ("selfplay.forced_playouts=-1", r"selfplay\.forced_playouts must be finite and >= 0"),
    ],
)
def test_a_bad_value_is_refused_naming_the_key(override, message):
    with pytest.raises(ValueError, match=message):
        compose_train([override])


def test_onnxruntime_with_what_it_cannot_run_is_refused():
    with pytest.raises(ValueError, match=r"onnxruntime=true runs on the CPU in fp32"):
        compose_train(["onnxruntime=true", "compile=true"])
    assert compose_train(["onnxruntime=true"]).net_options() == {
        "compile": False,
        "onnxruntime": True,
    }


@pytest.mark.parametrize(
    ("command", "overrides", "message"),
    [
        ("train", ["replay.capacity=8", "replay.min_size=4"],
         r"^replay\.min_size=4 is below optim\.batch_size=128: .*replay\.capacity >= "
         r"replay\.min_size >= optim\.batch_size"),
        ("train", ["optim.batch_size=50000"], r"^replay\.min_size=512 is below optim\.batch_size"),
        ("train", ["replay.capacity=8"], r"^replay\.min_size must be between 0 and capacity=8"),
        ("train", ["ray.address=auto"], r"^ray\.address and ray\.num_cpus need Ray actors"),
        ("train", ["eval.pool=default"], r"^eval\.pool rates the periodic matches: it needs "
         r"eval\.every > 0"),
        ("train", ["mcts=gumbel", "selfplay.forced_playouts=2"], r"^selfplay\.forced_playouts "
         r"> 0 needs mcts\.search=puct: the gumbel search trains on its improved policy"),
        ("train", ["model.value_hidden=1000000000"], r"^model\.value_hidden must be at most 4096"),
        ("train", ["model.policy_channels=100000000"], r"^model\.policy_channels must be at most"),
        ("train", ["model.channels=1024", "model.blocks=64"], r"^model: 1024 channels x 64 "
         r"blocks make [\d,]+ weights, beyond this toolkit.s limit of 67,108,864"),
        ("train", ["selfplay.num_games=10000000"], r"^selfplay\.num_games must be between 1 and "
         r"65,536"),
        ("train", ["replay.capacity=1000000000"], r"^replay\.capacity must be between 1 and "
         r"100,000,000"),
        ("train", ["mcts.num_simulations=1000000000"], r"^mcts\.num_simulations must be at most"),
        ("train", ["device=tpu"], r"^device must be 'auto', 'cpu' or 'cuda\[:i\]', got 'tpu'"),
        ("train", ["memory_gb=0"], r"^memory_gb must be finite and > 0"),
        ("eval", ["games=1000000000"], r"^games must be between 1 and 10,000"),
        ("eval", ["focus=random"], r"^focus is the gauntlet's agent: it needs mode=gauntlet"),
        ("eval", ["head_to_head=true"], r"^head_to_head is for mode=benchmark"),
        ("eval", ["openings=3"], r"^openings=N plays random stones instead of the start set"),
        ("eval", ["checkpoints=[1]"], r"^checkpoints=\[\.\.\.\] picks checkpoints of a run"),
        ("eval", ["side=1000"], r"^side must be between 2 and 40 or null"),
        ("eval", ["device=tpu"], r"^device must be 'auto', 'cpu' or 'cuda\[:i\]'"),
        ("openings", ["simulatons=5"], r"^unknown setting 'simulatons' \(did you mean "
         r"'search\.num_simulations'\?\)"),
        ("openings", ["estimator=net"], r"^estimator=net needs checkpoint"),
        ("openings", ["agent=uct:10"], r"^agent is read by estimator=playout alone, not search"),
        ("openings", ["workers=4", "estimator=rollout"], r"^workers is read by estimator=playout"),
        ("openings", ["playouts=100000000000"], r"^playouts must be between 1 and 10,000,000"),
        ("openings", ["search.num_simulations=1000000000"], r"^search\.num_simulations must be"),
        ("openings", ["half_width=2"], r"^half_width must be in \(0, 0\.5\]"),
    ],
)  # fmt: skip
def test_sizes_past_their_caps_and_settings_that_contradict_are_refused_in_one_line(
    command, overrides, message
):
    from trapy_rl.analysis.cli import OpeningsConfig
    from trapy_rl.eval.cli import EvalCommandConfig

    settings = {"train": TrainConfig, "eval": EvalCommandConfig, "openings": OpeningsConfig}
    with pytest.raises(ValueError, match=message) as error:
        compose_settings(command, settings[command], overrides)
    assert "\n" not in str(error.value)
