"""Confidence intervals: the normal quantile of a 95% interval and the Wilson score interval
for a win rate. Match results (`trapy_rl.eval.arena`) and Elo ratings (`trapy_rl.eval.elo`)
share them.
"""

from __future__ import annotations

import math

__all__ = ["Z_95", "wilson_interval"]

Z_95 = 1.959963984540054
"""The 97.5% quantile of the standard normal: a two-sided 95% interval is +- Z_95 errors."""


def wilson_interval(successes: int, trials: int, *, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval for a binomial proportion (95% by default).

    Args:
        successes: the successes counted, 0 to ``trials``.
        trials: the trials, >= 0.
        z: the normal quantile of the interval (`Z_95`: 95%).

    Returns:
        (low, high), within [0, 1]; (0, 1) when there are no trials.

    Raises:
        ValueError: unless 0 <= successes <= trials.

    >>> tuple(round(x, 4) for x in wilson_interval(8, 10))
    (0.4902, 0.9433)
    """
    if trials < 0 or not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials, got {successes} of {trials}")
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    z2 = z * z
    denominator = 1.0 + z2 / trials
    centre = (p + z2 / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / denominator
    # Clamp rounding at the ends (the exact bounds are 0 at 0 successes, 1 at all).
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return low, high
