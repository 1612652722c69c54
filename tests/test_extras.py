"""Without their extras, the optional interfaces fail in one line that names the extra."""

import importlib
import io
import sys

import pytest

from trapy_rl.agents import parse_agent
from trapy_rl.errors import MissingExtraError
from trapy_rl.game import Board
from trapy_rl.play import main as play_main

INTERFACES = (
    "trapy_rl.envs.pettingzoo",
    "trapy_rl.game.openspiel",
    "trapy_rl.agents.openspiel_bot",
)


@pytest.fixture
def without(monkeypatch):
    """Hide packages as if they were not installed (and forget the interfaces importing them)."""

    def hide(*modules: str) -> None:
        for module in modules:
            monkeypatch.setitem(sys.modules, module, None)  # importing it raises
        for interface in INTERFACES:
            monkeypatch.delitem(sys.modules, interface, raising=False)

    return hide


@pytest.mark.parametrize(
    ("interface", "package", "extra"),
    [
        (INTERFACES[0], "pettingzoo", "pettingzoo"),
        (INTERFACES[1], "pyspiel", "openspiel"),
        (INTERFACES[2], "pyspiel", "openspiel"),
    ],
)
def test_importing_an_interface_names_its_extra(without, interface, package, extra):
    without(package)
    with pytest.raises(MissingExtraError, match=rf"pip install 'trapy-rl\[{extra}\]'") as error:
        importlib.import_module(interface)
    # Code that guards imports catches it, and the command lines report it as a user error.
    assert isinstance(error.value, ModuleNotFoundError) and isinstance(error.value, ValueError)
    assert error.value.name == package


def test_openspiel_specs_without_openspiel(without, capsys):
    without("pyspiel")
    board = Board(3)
    with pytest.raises(ValueError, match=r"'openspiel:mcts:1000' needs the 'openspiel' extra"):
        parse_agent("openspiel:mcts:1000", board=board)
    with pytest.raises(ValueError, match="unknown OpenSpiel bot"):  # found before the import
        parse_agent("openspiel:alphazero", board=board)
    with pytest.raises(SystemExit) as stop:
        play_main(["openspiel:random", "--side", "3"], output=io.StringIO())
    assert stop.value.code == 2
    assert capsys.readouterr().err.splitlines()[0] == (
        "trapy-play: error: the agent spec 'openspiel:random' needs the 'openspiel' extra: "
        "pip install 'trapy-rl[openspiel]' (trapy-play --help lists the specs)"
    )
