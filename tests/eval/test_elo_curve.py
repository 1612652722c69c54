"""The Elo curve's axis says which scale its ratings are on."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.axes import Axes
from matplotlib.colors import to_hex

from trapy_rl.eval.elo import fit_elo
from trapy_rl.eval.report import plot_curve_panels, plot_elo_curve, plot_rating_curves


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


def test_several_runs_share_one_scale_and_the_references_are_drawn(tmp_path, monkeypatch):
    drawn, lines = [], []
    errorbar, axhline = Axes.errorbar, Axes.axhline

    def recorded_errorbar(self, x, y, **kw):
        drawn.append((list(x), kw))
        return errorbar(self, x, y, **kw)

    def recorded_axhline(self, y, **kw):
        lines.append(y)
        return axhline(self, y, **kw)

    monkeypatch.setattr(Axes, "errorbar", recorded_errorbar)
    monkeypatch.setattr(Axes, "axhline", recorded_axhline)
    curves = {"tiny": [(1.0, 2460.0, 2371.0, 2549.0), (0.5, 2297.0, 2208.0, 2386.0)],
              "small": [(0.7, 2200.0, 2100.0, 2300.0)]}  # fmt: skip
    marked = []
    axvline = Axes.axvline

    def recorded_axvline(self, x, **kw):
        marked.append((x, kw["color"]))
        return axvline(self, x, **kw)

    monkeypatch.setattr(Axes, "axvline", recorded_axvline)
    path = plot_rating_curves(curves, tmp_path / "curves.png", references={"uct:5000": 1753.0},
                              marks={"small": [(0.6, "+option")]})  # fmt: skip
    assert path.stat().st_size > 0
    ((x, colour),) = marked  # in the colour of its run, the second curve
    assert x == 0.6 and to_hex(colour) == to_hex("C1")
    assert [(x, kw["label"]) for x, kw in drawn] == [([0.5, 1.0], "tiny"), ([0.7], "small")]
    assert lines == [1753.0]


@pytest.fixture
def legends_covering(monkeypatch) -> list[bool]:
    """Filled as each figure is saved: for each of its axes, whether the legend overlaps the
    axes or their x label."""
    from matplotlib.figure import Figure

    covered = []
    savefig = Figure.savefig

    def checked_savefig(self, *args, **kw):
        renderer = self.canvas.get_renderer()
        self.draw(renderer)  # lay out first: legends' places are known only then
        for ax in self.axes:
            legend = ax.get_legend().get_window_extent(renderer)
            x_label = ax.xaxis.label.get_window_extent(renderer)
            covered.append(
                legend.overlaps(ax.get_window_extent(renderer)) or legend.overlaps(x_label)
            )
        return savefig(self, *args, **kw)

    monkeypatch.setattr(Figure, "savefig", checked_savefig)
    return covered


def test_a_legend_outside_covers_no_data(tmp_path, legends_covering):
    curves = {f"run {i}": [(1.0, 4500.0 + i, 4450.0, 4550.0)] for i in range(7)}
    plot_rating_curves(curves, tmp_path / "curves.png", legend="outside")
    plot_rating_curves(curves, tmp_path / "inside.png", legend="upper left")
    assert legends_covering == [False, True]  # the second: the check can fail


def test_panels_hold_their_own_curves_and_no_legend_covers_data(
    tmp_path, monkeypatch, legends_covering
):
    drawn = []
    errorbar = Axes.errorbar

    def recorded_errorbar(self, x, y, **kw):
        drawn.append((id(self), kw["label"]))
        return errorbar(self, x, y, **kw)

    monkeypatch.setattr(Axes, "errorbar", recorded_errorbar)
    panels = {
        "left": {"a": [(1.0, 0.8, 0.8, 0.8), (2.0, 0.9, 0.9, 0.9)]},
        "right": {"a vs b": [(1.0, 0.5, 0.5, 0.5)], "c vs d": [(2.0, 0.7, 0.7, 0.7)]},
    }
    path = plot_curve_panels(panels, tmp_path / "panels.png", title="maps", y_label="rho")
    assert path.stat().st_size > 0
    on = {}  # axes -> the curves drawn on them
    for axes, label in drawn:
        on.setdefault(axes, []).append(label)
    assert list(on.values()) == [["a"], ["a vs b", "c vs d"]]
    assert legends_covering == [False, False]
