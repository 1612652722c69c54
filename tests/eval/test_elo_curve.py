"""The Elo curve's axis says which scale its ratings are on."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.axes import Axes

from trapy_rl.eval.elo import fit_elo
from trapy_rl.eval.report import plot_elo_curve


@pytest.mark.parametrize(
    ("fixed", "label"),
    [(None, "Elo (uct:100 = 0)"), ({"uct:100": 1293.0}, "Elo (the pool's scale, uct:100 = 1293)")],
)
def test_the_y_label_names_the_scale(tmp_path, monkeypatch, fixed, label):
    labels = []
    monkeypatch.setattr(Axes, "set_ylabel", lambda self, text, **kw: labels.append(text))
    names = ["uct:100", "a", "b"]
    wins = np.array([[0, 5, 3], [5, 0, 4], [7, 6, 0]])
    ratings = fit_elo(names, wins, fixed=fixed)
    plot_elo_curve(ratings, [("a", 1), ("b", 2)], tmp_path / "curve.png", baselines=["uct:100"])
    assert labels and labels[0].startswith(label)
