"""notebooks/opening_swap_values.ipynb executes, with small settings injected, from a folder
outside the repository; and its `notebook` extra installs what it imports."""

from __future__ import annotations

import ast
import importlib.metadata
import io
import re
import tokenize
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "opening_swap_values.ipynb"
# Each replaces its line of the notebook's parameters cell; the lines not named stay as the
# notebook has them (played_maps: the played maps the package ships).
SMALL = {
    "checkpoint": "None",
    "side": "3",
    "simulations": "40",
    "rollouts": "2",
    "playouts": "200",
    "seed": "0",
    "cache_dir": "None",
}
# The shipped net, as a new user runs the notebook, with a small search.
SHIPPED = {**SMALL, "checkpoint": '"pretrained"', "side": "10", "simulations": "4"}


def execute(settings: dict[str, str], cwd: Path):
    """The notebook executed by a kernel working in ``cwd``, its parameters replaced."""
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    tagged = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1
    lines = tagged[0].source.splitlines()
    names = [line.split("=")[0].strip() for line in lines if re.match(r"^\w+ *=", line)]
    assert {"checkpoint", "side", "simulations", "playouts", "played_maps"} <= set(names)
    assert set(settings) <= set(names), set(settings) - set(names)
    tagged[0].source = "\n".join(
        f"{name} = {settings[name]}"
        if (name := line.split("=")[0].strip()) in settings and re.match(r"^\w+ *=", line)
        else line
        for line in lines
    )
    client = nbclient.NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}
    )
    client.execute()
    return notebook


def printed(notebook) -> str:
    return "".join(
        output.get("text", "")
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
    )


def pictures(notebook) -> list:
    return [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if "image/png" in output.get("data", {})
    ]


@pytest.mark.parametrize(
    "settings",
    [{**SMALL, "played_maps": "None"}, SHIPPED],
    ids=["rollout", "shipped-net"],
)
def test_the_notebook_executes_with_small_settings(tmp_path, settings):
    notebook = execute(settings, tmp_path)
    text = printed(notebook)
    assert "Spearman rank correlation" in text and "Mann-Whitney" in text
    if "played_maps" not in settings:  # the played maps of docs/openings.md, their claims tested
        assert "seed 0 against seed 1" in text and "swap decisions:" in text
        assert "the value head against play" in text and "interval containing 1/2" in text
        assert "seed 0's map as the truth" in text and "all three bars met by" in text
    else:
        assert "played_maps = None: no played map read" in text
    assert len(pictures(notebook)) >= 3
    assert not list(tmp_path.iterdir())  # nothing written beside it


def test_the_notebook_runs_from_any_folder(tmp_path):
    # Every file it reads is found through the package: no string of its code names a path.
    strings = [
        token.string
        for cell in nbformat.read(NOTEBOOK, as_version=4).cells
        if cell.cell_type == "code"
        for token in tokenize.generate_tokens(io.StringIO(cell.source).readline)
        if token.type == tokenize.STRING
    ]
    assert "'seed 0'" in strings or '"seed 0"' in strings
    assert not [s for s in strings if re.search(r"\.\./|docs/|\.(json|csv)\b", s)]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert ROOT not in elsewhere.resolve().parents
    notebook = execute(SMALL, elsewhere)
    text = printed(notebook)
    assert "seed 0 against seed 1" in text and "interval containing 1/2" in text
    assert re.search(r"side 5: \d+ of 35 first moves solved", text)  # the exact tables
    assert len(pictures(notebook)) >= 4  # the played maps drawn too
    assert not list(elsewhere.iterdir())


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower().replace("_", "-")
            for requirement in requirements}  # fmt: skip


def test_the_notebook_extra_installs_what_it_imports():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extra = _names(project["optional-dependencies"]["notebook"])
    assert {"jupyterlab", "ipykernel", "ipywidgets"} <= extra  # open it, run it, draw bars
    installed = _names(project["dependencies"]) | extra | {"trapy-rl"}
    modules = set()
    for cell in nbformat.read(NOTEBOOK, as_version=4).cells:
        if cell.cell_type == "code":
            for node in ast.walk(ast.parse(cell.source)):
                if isinstance(node, ast.Import):
                    modules |= {alias.name.split(".")[0] for alias in node.names}
                elif isinstance(node, ast.ImportFrom):
                    modules.add(node.module.split(".")[0])
    assert {"matplotlib", "pandas", "trapy_rl"} <= modules
    distributions = importlib.metadata.packages_distributions()
    for module in modules - {"trapy_rl"}:
        names = {name.lower().replace("_", "-") for name in distributions[module]}
        assert names & installed, f"{module} ({names}) is in neither the dependencies nor the extra"
