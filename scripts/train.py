"""Train with Hydra: ``python scripts/train.py [overrides]``, the same as ``trapy-train``."""

from __future__ import annotations

import hydra
from omegaconf import DictConfig

from trapy_rl.train.cli import CONFIG_DIR, run


@hydra.main(version_base="1.3", config_path=CONFIG_DIR, config_name="train")
def main(cfg: DictConfig) -> None:
    run(cfg)


if __name__ == "__main__":
    main()
