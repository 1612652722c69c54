"""Rate agents with Hydra: ``python scripts/evaluate.py [overrides]``, as ``trapy-eval`` does."""

from __future__ import annotations

import hydra
from omegaconf import DictConfig

from trapy_rl.eval.cli import CONFIG_DIR, evaluate


@hydra.main(version_base="1.3", config_path=CONFIG_DIR, config_name="eval")
def main(cfg: DictConfig) -> None:
    evaluate(cfg)


if __name__ == "__main__":
    main()
