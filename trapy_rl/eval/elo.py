"""Elo ratings fitted by maximum likelihood to the results of many matches.

The model is Bradley-Terry on the Elo scale: agent i beats agent j with probability

    P(i beats j) = 1 / (1 + 10 ** ((r_j - r_i) / 400)),

independently in every game (Trap Y has no draws). `fit_elo` maximises the likelihood of the
observed wins by Newton's method; the log-likelihood is concave, and each step is halved until
it does not decrease, so the iteration converges from zero.

Perfect scores: an agent that won (or lost) every game has an infinite maximum-likelihood
rating. To keep ratings finite each pair that met gets ``prior_games`` virtual games (default
1), won half by each side: a tiny prior pulling the pair towards equal strength, negligible
once a pair has played tens of games; with it a 40-0 result puts the pair 763 Elo apart
(400 log10(40.5 / 0.5)) rather than infinitely far. Agents whose games do not connect them to
the anchor (a disconnected comparison graph) cannot be rated against it: `fit_elo` raises.
The prior's price is a mild compression, as in BayesElo (which adds two such games): on
simulated round robins with ratings spread by 300 Elo and 40 games a pair, fitted ratings come
out about 7% closer together than the true ones (1% with ``prior_games=0.1``, none with 0).
Where no agent has a perfect score against the rest, ``prior_games=0`` gives the unbiased fit;
a smaller prior with a perfect score gives wide, unreliable intervals for that agent.

Intervals: from the observed Fisher information (the negative Hessian of the log-likelihood,
prior included, at the maximum), the ratings' covariance is the inverse of its block over the
free ratings. The interval is rating +- z * standard error (95% by default); it measures each
rating relative to the anchor, whose rating is fixed (at 0, standard error 0).

Shapes: M agents.

>>> wins = np.array([[0, 30], [10, 0]])   # agent 0 won 30 of 40 games against agent 1
>>> ratings = fit_elo(["a", "b"], wins, prior_games=0)
>>> round(float(ratings.ratings[1]), 1)    # 400 * log10(10 / 30)
-190.8
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from trapy_rl.eval.stats import Z_95

__all__ = [
    "ELO_SCALE",
    "EloRatings",
    "expected_score",
    "fit_elo",
    "log_likelihood",
    "write_ratings_json",
]

ELO_SCALE = 400.0 / math.log(10.0)  # Elo points per natural-log unit of odds


def expected_score(rating_a: np.ndarray | float, rating_b: np.ndarray | float) -> np.ndarray:
    """The probability that a beats b, from their Elo ratings (broadcasting)."""
    return 1.0 / (1.0 + 10.0 ** ((np.asarray(rating_b) - np.asarray(rating_a)) / 400.0))


def log_likelihood(ratings: np.ndarray, wins: np.ndarray, *, prior_games: float = 1.0) -> float:
    """The log-likelihood of ``wins`` [M, M] under ``ratings`` [M] (Elo), prior included.

    The plain, readable form of what `fit_elo` maximises: sum over ordered pairs of
    ``w_ij * log P(i beats j)``, where the wins of each pair that met are increased by
    ``prior_games / 2`` each way.
    """
    wins = _with_prior(_checked_wins(wins), prior_games)
    r = np.asarray(ratings, dtype=np.float64)
    total = 0.0
    for i in range(len(r)):
        for j in range(len(r)):
            if i != j and wins[i, j] > 0:
                total += wins[i, j] * math.log(float(expected_score(r[i], r[j])))
    return total


@dataclasses.dataclass(frozen=True)
class EloRatings:
    """Fitted ratings with standard errors and 95% (or z) intervals.

    Attributes:
        names: [M] the agents' names.
        ratings: [M] float64 Elo, the anchor at 0.
        stderr: [M] float64, standard errors relative to the anchor (0 for the anchor).
        lower, upper: [M] float64, the interval ends, ratings -+ z * stderr.
        wins: [M, M] int64, wins[i, j] = games i won against j (without the prior).
        anchor: the index of the agent rated 0 (with a pool: the first agent of fixed rating).
        prior_games: the virtual games given to each pair that met.
        z: the normal quantile of the intervals.
        fixed: the indices of the agents whose ratings were given, not fitted (a pool).
    """

    names: tuple[str, ...]
    ratings: np.ndarray
    stderr: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    wins: np.ndarray
    anchor: int
    prior_games: float
    z: float = Z_95
    fixed: tuple[int, ...] = ()

    @property
    def games(self) -> np.ndarray:
        """[M] int64: games played by each agent."""
        return (self.wins + self.wins.T).sum(axis=1)

    @property
    def scores(self) -> np.ndarray:
        """[M] float64: each agent's share of its games won (nan without games)."""
        games = self.games
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(games > 0, self.wins.sum(axis=1) / np.maximum(games, 1), np.nan)

    def rows(self) -> list[dict]:
        """One dict per agent, best first: rank, name, elo, stderr, lower, upper, games, score."""
        order = np.argsort(-self.ratings, kind="stable")
        games, scores, wins = self.games, self.scores, self.wins.sum(axis=1)
        return [
            {
                "rank": rank,
                "name": self.names[i],
                "elo": round(float(self.ratings[i]), 1),
                "stderr": round(float(self.stderr[i]), 1),
                "lower": round(float(self.lower[i]), 1),
                "upper": round(float(self.upper[i]), 1),
                "games": int(games[i]),
                "wins": int(wins[i]),
                "score": round(float(scores[i]), 4),
                "anchor": bool(i == self.anchor and not self.fixed),
                "fixed": bool(i in self.fixed),
            }
            for rank, i in enumerate(order, start=1)
        ]

    def table(self) -> str:
        """The ratings as a text table, best first."""
        rows = self.rows()
        width = max([len("agent"), *(len(row["name"]) for row in rows)])
        level = f"{math.erf(self.z / math.sqrt(2)):.0%}"
        lines = [
            f"{'#':>3}  {'agent':<{width}}  {'Elo':>7}  {level + ' interval':>18}  "
            f"{'games':>6}  {'score':>6}",
        ]
        for row in rows:
            interval = f"[{row['lower']:.0f}, {row['upper']:.0f}]"
            if row["anchor"] or row["fixed"]:
                interval = "(anchor)" if row["anchor"] else "(pool)"
            lines.append(
                f"{row['rank']:>3}  {row['name']:<{width}}  {row['elo']:>7.0f}  {interval:>18}  "
                f"{row['games']:>6}  {row['score']:>6.1%}"
            )
        return "\n".join(lines)

    def write_csv(self, path: str | Path) -> Path:
        """Write `rows` as CSV; returns the path."""
        path = Path(path)
        rows = self.rows()
        with path.open("w", newline="", encoding="utf-8") as out:
            writer = csv.DictWriter(out, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        return path

    def to_dict(self) -> dict:
        """A JSON-ready dict: the rows, the win matrix, and how the fit was made."""
        return {
            "ratings": self.rows(),
            "names": list(self.names),
            "wins": self.wins.tolist(),
            "anchor": self.names[self.anchor],
            "fixed": {self.names[i]: float(self.ratings[i]) for i in self.fixed},
            "prior_games": self.prior_games,
            "z": self.z,
            "model": "Bradley-Terry, P(i beats j) = 1 / (1 + 10^((r_j - r_i) / 400))",
            "intervals": "rating +- z * stderr, stderr from the observed Fisher information",
        }


def fit_elo(
    names: Sequence[str],
    wins: np.ndarray,
    *,
    anchor: int | str = 0,
    fixed: Mapping[str, float] | None = None,
    prior_games: float = 1.0,
    z: float = Z_95,
    tolerance: float = 1e-10,
    max_iterations: int = 200,
) -> EloRatings:
    """Maximum-likelihood Elo ratings of M agents from their head-to-head wins.

    Args:
        names: [M] the agents' names (distinct).
        wins: [M, M] non-negative integers, wins[i, j] = games i won against j.
        anchor: the agent (index or name) whose rating is fixed at 0 (unused with ``fixed``).
        fixed: agents whose ratings are given, not fitted (a rating pool measured before):
            the others are rated on that scale, and their intervals treat the given ratings
            as exact. ``EloRatings.anchor`` is then the first fixed agent.
        prior_games: virtual games, half won by each side, added to every pair that met
            (>= 0; see the module docstring). 0 gives the plain maximum likelihood, which is
            infinite for perfect scores.
        z: the normal quantile of the intervals (1.96: 95%).
        tolerance: stop when the largest Newton step is below this (in natural-log units).
        max_iterations: Newton steps at most.

    Raises:
        ValueError: for a malformed win matrix or names, an unknown anchor, agents not
            connected to the anchor by games, or ratings that diverge (perfect scores with
            ``prior_games=0``).
    """
    names = tuple(str(name) for name in names)
    wins = _checked_wins(wins)
    m = len(names)
    if wins.shape != (m, m):
        raise ValueError(f"wins must be [M, M] = [{m}, {m}] for {m} names, got {wins.shape}")
    if len(set(names)) != m:
        raise ValueError(f"agent names must be distinct, got {list(names)}")
    if prior_games < 0 or not math.isfinite(prior_games):
        raise ValueError(f"prior_games must be finite and >= 0, got {prior_games}")
    theta = np.zeros(m)  # natural-log units: theta = rating / ELO_SCALE
    if fixed:
        unknown = sorted(set(fixed) - set(names))
        if unknown:
            raise ValueError(f"fixed ratings of {unknown}, which are not among {list(names)}")
        held = [names.index(name) for name in fixed]
        for i in held:
            theta[i] = float(fixed[names[i]]) / ELO_SCALE
        # The others start amid the fixed ratings: from 0, far below a strong pool, the win
        # probabilities underflow and the first Newton steps are useless.
        theta[~np.isin(np.arange(m), held)] = theta[held].mean()
        anchor = held[0]
    else:
        if isinstance(anchor, str):
            if anchor not in names:
                raise ValueError(f"anchor {anchor!r} is not one of the agents {list(names)}")
            anchor = names.index(anchor)
        if not 0 <= anchor < m:
            raise ValueError(f"anchor index {anchor} is out of range for {m} agents")
        held = [anchor]
    _check_connected(names, wins, held)

    w = _with_prior(wins, prior_games)  # [M, M] float64
    n = w + w.T  # games between each pair, prior included
    free = np.flatnonzero(~np.isin(np.arange(m), held))

    def objective(t: np.ndarray) -> float:
        diff = t[:, None] - t[None, :]
        return float((w * -np.logaddexp(0.0, -diff)).sum())  # sum w_ij log sigmoid(t_i - t_j)

    value = objective(theta)
    converged = len(free) == 0
    for _ in range(max_iterations):
        if converged:
            break
        gradient, hessian = _derivatives(theta, w, n)
        try:
            step = np.linalg.solve(-hessian[np.ix_(free, free)], gradient[free])
        except np.linalg.LinAlgError:
            break
        scale = 1.0
        while True:
            candidate = theta.copy()
            candidate[free] += scale * step
            new_value = objective(candidate)
            if new_value >= value - 1e-12 * abs(value) or scale < 1e-6:
                break
            scale /= 2
        if new_value < value - 1e-12 * abs(value):  # no step improves: keep the best so far
            break
        theta, value = candidate, new_value
        converged = float(np.abs(scale * step).max()) < tolerance
    if not converged or not np.isfinite(theta).all() or np.abs(theta).max() * ELO_SCALE > 1e5:
        raise ValueError(
            "the Elo fit did not converge: some agent won or lost all its games "
            "(use prior_games > 0)"
        )
    _, hessian = _derivatives(theta, w, n)
    stderr = np.zeros(m)
    if len(free):
        covariance = np.linalg.inv(-hessian[np.ix_(free, free)])
        stderr[free] = np.sqrt(np.maximum(np.diag(covariance), 0.0)) * ELO_SCALE
    ratings = theta * ELO_SCALE
    return EloRatings(
        names=names,
        ratings=ratings,
        stderr=stderr,
        lower=ratings - z * stderr,
        upper=ratings + z * stderr,
        wins=wins,
        anchor=int(anchor),
        prior_games=float(prior_games),
        z=float(z),
        fixed=tuple(held) if fixed else (),
    )


def _derivatives(theta: np.ndarray, w: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gradient [M] and Hessian [M, M] of the log-likelihood in natural-log units."""
    p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))  # [M, M] P(i beats j)
    gradient = (w - n * p).sum(axis=1)
    information = n * p * (1.0 - p)  # [M, M], symmetric
    np.fill_diagonal(information, 0.0)
    hessian = information - np.diag(information.sum(axis=1))
    return gradient, hessian


def _checked_wins(wins: np.ndarray) -> np.ndarray:
    array = np.asarray(wins)
    if array.ndim != 2 or array.shape[0] != array.shape[1]:
        raise ValueError(f"wins must be a square [M, M] matrix, got shape {array.shape}")
    if array.size and (not np.issubdtype(array.dtype, np.number) or (array < 0).any()):
        raise ValueError("wins must hold non-negative numbers of games")
    if array.size and (array != np.round(array)).any():
        raise ValueError("wins must hold whole numbers of games")
    if np.diag(array).any():
        raise ValueError("wins[i, i] must be 0: an agent does not play itself")
    return array.astype(np.int64)


def _with_prior(wins: np.ndarray, prior_games: float) -> np.ndarray:
    met = (wins + wins.T) > 0
    return wins.astype(np.float64) + np.where(met, prior_games / 2.0, 0.0)


def _check_connected(names: tuple[str, ...], wins: np.ndarray, held: list[int]) -> None:
    """Every agent must meet an agent of fixed rating through a chain of games."""
    met = (wins + wins.T) > 0
    reached = set(held)
    frontier = list(held)
    while frontier:
        i = frontier.pop()
        for j in np.flatnonzero(met[i]):
            if int(j) not in reached:
                reached.add(int(j))
                frontier.append(int(j))
    if len(reached) < len(names):
        apart = [names[i] for i in range(len(names)) if i not in reached]
        anchor = ", ".join(repr(names[i]) for i in held)
        raise ValueError(
            f"cannot rate {apart} against the anchor {anchor}: no chain of games connects them"
        )


def write_ratings_json(ratings: EloRatings, path: str | Path, **extra) -> Path:
    """Write `EloRatings.to_dict` (and any ``extra`` JSON-ready entries) to ``path``."""
    path = Path(path)
    path.write_text(json.dumps({**ratings.to_dict(), **extra}, indent=2) + "\n", encoding="utf-8")
    return path
