"""The training command's Hydra configuration: typos fail naming the key, overrides reach the
settings, bad values are refused naming the key. (tests/test_settings_defaults.py: every
option of every group composes; the defaults are written once.)"""

import pytest
from hydra.errors import ConfigCompositionException

from trapy_rl.config import compose_settings
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
    ("override", "key"),
    [
        ("mcts.num_simulatons=3", "num_simulatons"),
        ("selfplay.num_game=3", "num_game"),
        ("optim.learning_rate=0.1", "learning_rate"),
        ("iteration=3", "iteration"),
    ],
)
def test_a_typo_fails_at_compose_time_naming_the_key(override, key):
    with pytest.raises(ConfigCompositionException) as error:
        compose_train([override])
    assert key in str(error.value) or key in str(error.value.__cause__)


def test_a_wrong_type_fails_at_compose_time():
    with pytest.raises(ConfigCompositionException) as error:
        compose_train(["mcts.num_simulations=many"])
    assert "num_simulations" in str(error.value) + str(error.value.__cause__)


def test_an_unknown_option_fails_naming_the_group():
    with pytest.raises(ConfigCompositionException, match="mcts"):
        compose_train(["mcts=enormous"])


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
        ("+mcts.typo=3", r"mcts: unknown setting 'typo'"),
        ("side=41", r"side must be between 2 and 40"),
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
