"""Opening values with Hydra: ``python scripts/analyze_openings.py [overrides]``, the same as
``trapy-openings`` (see `trapy_rl.analysis.cli`)."""

from __future__ import annotations

from trapy_rl.analysis.cli import main

if __name__ == "__main__":
    main()
