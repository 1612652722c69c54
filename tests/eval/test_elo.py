"""Elo fit: Newton against a general optimiser, closed forms, recovery of known ratings."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.optimize import minimize

from trapy_rl.eval.elo import (
    ELO_SCALE,
    expected_score,
    fit_elo,
    log_likelihood,
    write_ratings_json,
)

TRUE = np.array([0.0, 200.0, 400.0, 800.0])


def simulate(ratings: np.ndarray, games_per_pair: int, rng: np.random.Generator) -> np.ndarray:
    """Bradley-Terry outcomes: wins [M, M] from ``games_per_pair`` games between every pair."""
    m = len(ratings)
    wins = np.zeros((m, m), dtype=np.int64)
    for i in range(m):
        for j in range(i + 1, m):
            won = rng.binomial(games_per_pair, expected_score(ratings[i], ratings[j]))
            wins[i, j], wins[j, i] = won, games_per_pair - won
    return wins


def test_two_agents_closed_form() -> None:
    ratings = fit_elo(["a", "b"], np.array([[0, 30], [10, 0]]), prior_games=0)
    assert ratings.ratings[0] == 0
    assert ratings.ratings[1] == pytest.approx(400 * math.log10(10 / 30), abs=1e-6)
    # The variance of a log-odds estimate is 1/wins + 1/losses.
    assert ratings.stderr[1] == pytest.approx(ELO_SCALE * math.sqrt(1 / 30 + 1 / 10), rel=1e-6)
    assert ratings.stderr[0] == 0
    assert ratings.lower[1] == pytest.approx(ratings.ratings[1] - 1.959964 * ratings.stderr[1])


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("prior_games", [0.0, 1.0])
def test_newton_equals_a_general_optimiser(seed: int, prior_games: float) -> None:
    rng = np.random.default_rng(seed)
    m = 5
    wins = simulate(rng.normal(0, 300, m), 30, rng)
    wins[0, 4] = wins[4, 0] = 0  # a pair that never met
    if prior_games == 0 and ((wins + wins.T).sum(1) == wins.sum(1)).any():
        pytest.skip("a perfect score has no finite maximum without the prior")
    fitted = fit_elo(list("abcde"), wins, anchor=2, prior_games=prior_games)

    def negative(free: np.ndarray) -> float:
        return -log_likelihood(np.insert(free, 2, 0.0), wins, prior_games=prior_games)

    reference = minimize(
        negative,
        np.zeros(m - 1),
        method="Nelder-Mead",
        options={"xatol": 1e-6, "fatol": 1e-10, "maxiter": 20000},
    )
    np.testing.assert_allclose(fitted.ratings, np.insert(reference.x, 2, 0.0), atol=0.05)
    assert fitted.ratings[2] == 0 and fitted.stderr[2] == 0

    # Standard errors: the inverse of a finite-difference Hessian of the readable likelihood.
    h = 1e-2 * np.eye(m - 1)
    x0 = np.delete(fitted.ratings, 2)
    hessian = np.array(
        [
            [
                (
                    negative(x0 + h[i] + h[j])
                    - negative(x0 + h[i] - h[j])
                    - negative(x0 - h[i] + h[j])
                    + negative(x0 - h[i] - h[j])
                )
                / (4e-4)
                for j in range(m - 1)
            ]
            for i in range(m - 1)
        ]
    )
    stderr = np.sqrt(np.diag(np.linalg.inv(hessian)))
    np.testing.assert_allclose(np.delete(fitted.stderr, 2), stderr, rtol=1e-3)


def test_recovers_known_ratings() -> None:
    rng = np.random.default_rng(0)
    fitted = fit_elo(["r0", "r200", "r400", "r800"], simulate(TRUE, 400, rng))
    inside = (fitted.lower <= TRUE) & (TRUE <= fitted.upper)
    assert inside.all(), (fitted.ratings, fitted.lower, fitted.upper)
    np.testing.assert_allclose(fitted.ratings, TRUE, atol=60)


def test_interval_coverage_is_near_95_percent() -> None:
    rng = np.random.default_rng(1)
    covered, total = 0, 0
    for _ in range(200):
        truth = np.array([0.0, 200.0, 400.0, 600.0])
        fitted = fit_elo(list("abcd"), simulate(truth, 200, rng))
        covered += int(((fitted.lower <= truth) & (truth <= fitted.upper))[1:].sum())
        total += 3
    assert 0.90 <= covered / total <= 0.99


def test_intervals_shrink_with_more_games() -> None:
    # Expected outcomes (no noise): quadrupling the games halves the standard errors.
    def expected_wins(games: int) -> np.ndarray:
        p = expected_score(TRUE[:, None], TRUE[None, :])
        wins = np.round(games * p).astype(np.int64)
        np.fill_diagonal(wins, 0)
        return wins

    small = fit_elo(list("abcd"), expected_wins(100), prior_games=0)
    large = fit_elo(list("abcd"), expected_wins(400), prior_games=0)
    ratio = large.stderr[1:] / small.stderr[1:]
    np.testing.assert_allclose(ratio, 0.5, atol=0.02)
    assert ((large.upper - large.lower)[1:] < (small.upper - small.lower)[1:]).all()


def test_perfect_scores_stay_finite_with_the_prior() -> None:
    wins = np.array([[0, 40, 40], [0, 0, 20], [0, 20, 0]])
    fitted = fit_elo(["champion", "b", "c"], wins, anchor="b")
    assert np.isfinite(fitted.ratings).all() and np.isfinite(fitted.stderr).all()
    assert fitted.ratings[0] > 500
    with pytest.raises(ValueError, match="did not converge"):
        fit_elo(["champion", "b", "c"], wins, prior_games=0)


@pytest.mark.parametrize(
    ("names", "wins", "kwargs", "message"),
    [
        (["a", "b"], [[0, 1, 2], [1, 0, 2]], {}, "square"),
        (["a", "b", "c"], [[0, 1], [1, 0]], {}, r"\[3, 3\]"),
        (["a", "a"], [[0, 1], [1, 0]], {}, "distinct"),
        (["a", "b"], [[0, -1], [1, 0]], {}, "non-negative"),
        (["a", "b"], [[0, 1.5], [1, 0]], {}, "whole"),
        (["a", "b"], [[1, 1], [1, 0]], {}, "itself"),
        (["a", "b"], [[0, 1], [1, 0]], {"anchor": "z"}, "anchor 'z'"),
        (["a", "b"], [[0, 1], [1, 0]], {"prior_games": -1}, "prior_games"),
        (["a", "b", "c"], [[0, 1, 0], [1, 0, 0], [0, 0, 0]], {}, r"cannot rate \['c'\]"),
    ],
)
def test_bad_input_names_the_problem(names, wins, kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        fit_elo(names, np.array(wins), **kwargs)


def test_table_csv_and_json(tmp_path) -> None:
    fitted = fit_elo(["random", "uct:100"], np.array([[0, 3], [17, 0]]))
    table = fitted.table()
    assert table.splitlines()[1].split()[1] == "uct:100"  # best first
    assert "(anchor)" in table and "95% interval" in table
    lines = fitted.write_csv(tmp_path / "r.csv").read_text().splitlines()
    assert lines[0].startswith("rank,name,elo,stderr,lower,upper,games,wins,score")
    data = json.loads(write_ratings_json(fitted, tmp_path / "r.json", side=4).read_text())
    assert data["anchor"] == "random" and data["side"] == 4 and data["wins"] == [[0, 3], [17, 0]]
    assert [row["name"] for row in data["ratings"]] == ["uct:100", "random"]


def test_ratings_against_a_fixed_pool_maximise_the_likelihood() -> None:
    """One agent rated against three agents of given ratings: the grid maximum of the plain
    log-likelihood (with the prior) is the fitted rating, and the pool does not move."""
    names = ["random", "uct:200", "uct:1000", "net"]
    pool = {"random": 0.0, "uct:200": 600.0, "uct:1000": 900.0}
    wins = np.zeros((4, 4), dtype=np.int64)
    wins[3, :3] = [39, 30, 12]  # the net's wins out of 40 against each
    wins[:3, 3] = [1, 10, 28]
    fitted = fit_elo(names, wins, fixed=pool)
    np.testing.assert_array_equal(fitted.ratings[:3], [0.0, 600.0, 900.0])
    assert (fitted.stderr[:3] == 0).all() and fitted.stderr[3] > 0
    grid = np.arange(500.0, 1100.0, 0.1)
    likelihood = [
        log_likelihood(np.array([0.0, 600.0, 900.0, r]), wins, prior_games=1.0) for r in grid
    ]
    assert fitted.ratings[3] == pytest.approx(grid[int(np.argmax(likelihood))], abs=0.1)
    rows = {row["name"]: row for row in fitted.rows()}
    assert rows["uct:200"]["fixed"] and not rows["net"]["fixed"]
    assert "(pool)" in fitted.table() and "(anchor)" not in fitted.table()


def test_a_fixed_pool_must_name_known_agents_connected_to_the_rest() -> None:
    wins = np.array([[0, 3, 0], [1, 0, 0], [0, 0, 0]])
    with pytest.raises(ValueError, match="not among"):
        fit_elo(["a", "b", "c"], wins, fixed={"z": 0.0})
    with pytest.raises(ValueError, match=r"cannot rate \['c'\]"):
        fit_elo(["a", "b", "c"], wins, fixed={"a": 0.0})


def test_a_strong_agent_rated_against_a_strong_fixed_pool_converges():
    """Regression: started at 0, about 1,750 Elo below the pool, the Newton steps overflowed
    and the fit gave up on an ordinary result (38/40 and 28/40)."""
    names = ["uct:1000", "uct:5000", "net"]
    wins = np.array([[0, 0, 2], [0, 0, 12], [38, 28, 0]])
    fixed = {"uct:1000": 1293.3, "uct:5000": 1753.0}
    ratings = fit_elo(names, wins, fixed=fixed, prior_games=1.0)
    # the maximum of the likelihood, found independently
    w = wins + 0.5 * ((wins + wins.T) > 0)

    def negative_log_likelihood(x: np.ndarray) -> float:
        theta = np.array([1293.3, 1753.0, x[0]]) * math.log(10) / 400
        diff = theta[:, None] - theta[None, :]
        return float((w * np.logaddexp(0.0, -diff)).sum())

    best = minimize(negative_log_likelihood, x0=[1500.0], method="Nelder-Mead").x[0]
    assert ratings.ratings[2] == pytest.approx(best, abs=0.5)
    assert ratings.lower[2] < 1800 < ratings.upper[2]
