"""notebooks/opening_swap_values.ipynb executes, with small settings injected."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "opening_swap_values.ipynb"
DOCS = NOTEBOOK.parents[1] / "docs"
SMALL = """checkpoint = None
side = 3
simulations = 40
rollouts = 2
playouts = 200
seed = 0
cache_dir = None
played_maps = None
"""


# The shipped net, as a new user runs the notebook, with a small search.
SHIPPED = (
    SMALL.replace("checkpoint = None", 'checkpoint = "pretrained"')
    .replace("side = 3", "side = 10")
    .replace("simulations = 40", "simulations = 4")
    .replace(
        "played_maps = None",
        f"played_maps = {{'seed 0': {str(DOCS / 'openings-seed_0.json')!r}, "
        f"'seed 1': {str(DOCS / 'openings-seed_1.json')!r}}}",
    )
)


@pytest.mark.parametrize("settings", [SMALL, SHIPPED], ids=["rollout", "shipped-net"])
def test_the_notebook_executes_with_small_settings(tmp_path, settings):
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    tagged = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1
    names = {line.split("=")[0].strip() for line in tagged[0].source.splitlines() if "=" in line}
    assert {"checkpoint", "side", "simulations", "playouts", "played_maps"} <= names
    tagged[0].source = settings
    client = nbclient.NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()
    text = "".join(
        output.get("text", "")
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
    )
    assert "Spearman rank correlation" in text and "Mann-Whitney" in text
    if "seed_0" in settings:  # the played maps of docs/openings.md, their claims tested
        assert "seed 0 against seed 1" in text and "swap decisions:" in text
        assert "the value head against play" in text and "interval containing 1/2" in text
        assert "seed 0's map as the truth" in text and "all three bars met by" in text
    images = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if "image/png" in output.get("data", {})
    ]
    assert len(images) >= 3
    assert not list(tmp_path.iterdir())  # nothing written beside it
