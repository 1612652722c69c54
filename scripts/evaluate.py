"""Rate agents with Hydra: ``python scripts/evaluate.py [overrides]``, as ``trapy-eval`` does."""

from trapy_rl.eval.cli import main

if __name__ == "__main__":
    main()
