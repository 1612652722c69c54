"""``trapy-train``: compose the Hydra configuration (``configs/train.yaml``) and train.

    trapy-train                                   # the default run (about seven CPU minutes)
    trapy-train debug=smoke                       # a one-minute check
    trapy-train side=10 mcts.num_simulations=200  # any override; typos fail naming the key
    trapy-train resume=outputs/2026-01-01/12-00-00  # go on: the run's settings and folder
    trapy-train resume=outputs/2026-01-01/12-00-00 minutes=240  # the same, a longer budget

Each run writes its resolved config, checkpoints and TensorBoard events into its Hydra output
folder, ``outputs/<date>/<time>/``. The schema of ``configs/train.yaml`` is `TrainConfig`,
registered here: every key is checked when the configuration is composed (a mistake is one
line, `trapy_rl.config.check_command_line`), and ``trapy-train --cfg job`` prints the whole
composed configuration.
"""

from __future__ import annotations

import sys

import hydra
from hydra import compose
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from trapy_rl.config import CONFIG_DIR, check_command_line, register_schema, settings_of
from trapy_rl.errors import reported
from trapy_rl.nn import resolve_device
from trapy_rl.train.checkpoint import load_newest_valid
from trapy_rl.train.evaluation import check_opponents
from trapy_rl.train.loop import train
from trapy_rl.train.resume import (
    changed_settings,
    flatten_settings,
    resume_note,
    resumed_config,
)
from trapy_rl.train.settings import TrainConfig

__all__ = ["main", "run"]

register_schema("train", TrainConfig)


def run(cfg: DictConfig) -> int:
    """Train with ``cfg``, its outputs in Hydra's run folder unless ``run_dir`` says otherwise.

    Returns the exit code: 0, or 128 + the number of the signal that stopped the run.
    """
    config = settings_of(cfg, TrainConfig)
    if config.resume:
        changed = _command_line_settings(cfg)
        config = resumed_config(config, changed)
        print(resume_note(config, changed - {"resume", "run_dir"}), flush=True)
    if not config.run_dir:
        config = config.replace({"run_dir": HydraConfig.get().runtime.output_dir})
    return train(config).exit_code


def _command_line_settings(cfg: DictConfig) -> set[str]:
    """Dotted names of the settings this command line set: those its overrides (group choices
    like ``experiment=...`` included) made differ from the defaults, and those it named."""
    defaults = OmegaConf.to_container(compose(config_name="train"), resolve=True)
    command = OmegaConf.to_container(cfg, resolve=True)
    named = {
        override.split("=", 1)[0].lstrip("+~")
        for override in HydraConfig.get().overrides.task
        if "=" in override
    }
    return changed_settings(command, defaults) | (named & flatten_settings(command).keys())


@hydra.main(version_base="1.3", config_path=CONFIG_DIR, config_name="train")
def _hydra_main(cfg: DictConfig) -> None:
    with reported("trapy-train"):
        code = run(cfg)
    if code:
        raise SystemExit(code)


def main() -> None:
    """``trapy-train [OVERRIDES]``: the command line, the matches' opponents and the checkpoint
    to resume checked (one line for a mistake), then Hydra's main: the run folder, then
    `run`."""
    with reported("trapy-train"):
        config = check_command_line("train", TrainConfig, sys.argv[1:])
        if config is not None:  # before Hydra makes the run folder
            resolve_device(config.device)  # a device this machine lacks
            check_opponents(config)
            if config.resume:  # a checkpoint that loads (read again when the run resumes)
                load_newest_valid(config.resume)
    _hydra_main()


if __name__ == "__main__":
    main()
