"""Train with Hydra: ``python scripts/train.py [overrides]``, the same as ``trapy-train``."""

from trapy_rl.train.cli import main

if __name__ == "__main__":
    main()
