"""``trapy-train``: compose the Hydra configuration (``configs/train.yaml``) and train.

    trapy-train                                   # the default run (about ten CPU minutes)
    trapy-train debug=smoke                       # a one-minute check
    trapy-train side=10 mcts.num_simulations=200  # any override; typos fail naming the key
    trapy-train resume=outputs/2026-01-01/12-00-00

Each run writes its resolved config, checkpoints and TensorBoard events into its Hydra output
folder, ``outputs/<date>/<time>/``.
"""

from __future__ import annotations

from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

import trapy_rl.config  # noqa: F401  (stores the schemas)

CONFIG_DIR = str(Path(__file__).resolve().parents[2] / "configs")


def run(cfg: DictConfig) -> None:
    """Train with ``cfg``, its outputs in Hydra's run folder unless ``run_dir`` says otherwise."""
    from trapy_rl.train.loop import train

    if not cfg.get("run_dir"):
        cfg.run_dir = HydraConfig.get().runtime.output_dir
    train(cfg)


@hydra.main(version_base="1.3", config_path=CONFIG_DIR, config_name="train")
def main(cfg: DictConfig) -> None:
    run(cfg)


if __name__ == "__main__":
    main()
