"""``trapy-train``: compose the Hydra configuration (``configs/train.yaml``) and train.

    trapy-train                                   # the default run (about seven CPU minutes)
    trapy-train debug=smoke                       # a one-minute check
    trapy-train side=10 mcts.num_simulations=200  # any override; typos fail naming the key
    trapy-train resume=outputs/2026-01-01/12-00-00

Each run writes its resolved config, checkpoints and TensorBoard events into its Hydra output
folder, ``outputs/<date>/<time>/``.
"""

from __future__ import annotations

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from trapy_rl.config import CONFIG_DIR, train_config
from trapy_rl.errors import reported

__all__ = ["main", "run"]


def run(cfg: DictConfig) -> int:
    """Train with ``cfg``, its outputs in Hydra's run folder unless ``run_dir`` says otherwise.

    Returns the exit code: 0, or 128 + the number of the signal that stopped the run.
    """
    from trapy_rl.train.loop import train

    config = train_config(cfg)
    if not config.run_dir:
        config = config.replace({"run_dir": HydraConfig.get().runtime.output_dir})
    return train(config).exit_code


@hydra.main(version_base="1.3", config_path=CONFIG_DIR, config_name="train")
def main(cfg: DictConfig) -> None:
    with reported("trapy-train"):
        code = run(cfg)
    if code:
        raise SystemExit(code)


if __name__ == "__main__":
    main()
