"""The shipped nets: named in specs without a path, their bytes checked against the manifest."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from tiny import write_tiny_checkpoint

from trapy_rl.agents.kinds import parse_agent
from trapy_rl.agents.moves import checked_move
from trapy_rl.game.board import Board
from trapy_rl.game.state import GameState
from trapy_rl.nn.checkpoint import CheckpointError, find_checkpoint, load_checkpoint
from trapy_rl.pretrained import (
    FOLDER,
    pretrained_file,
    pretrained_info,
    pretrained_names,
)


def fake_package(folder: Path) -> Path:
    """A folder laid out like the package's: one net, ``tiny``, and its manifest."""
    net = write_tiny_checkpoint(folder / "tiny.pt", side=3)
    digest = hashlib.sha256(net.read_bytes()).hexdigest()
    manifest = {"tiny": {"file": "tiny.pt", "sha256": digest, "side": 3}}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return net


def test_a_shipped_net_is_found_by_name_and_its_bytes_are_checked(tmp_path) -> None:
    net = fake_package(tmp_path)
    assert pretrained_names(tmp_path) == ["tiny"]
    assert pretrained_file("tiny", tmp_path) == net
    with pytest.raises(KeyError, match="no shipped net named 'other'"):
        pretrained_file("other", tmp_path)
    data = bytearray(net.read_bytes())
    data[100] ^= 1
    net.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="damaged"):
        pretrained_file("tiny", tmp_path)
    net.unlink()
    with pytest.raises(ValueError, match="missing from the installation"):
        pretrained_file("tiny", tmp_path)


def test_the_manifest_lists_every_shipped_file_with_its_record() -> None:
    names = pretrained_names()
    assert "pretrained" in names
    shipped = {path.name for path in FOLDER.glob("*.pt")}
    assert shipped == {pretrained_info(name)["file"] for name in names}  # none unlisted
    for name in names:
        info = pretrained_info(name)
        payload = load_checkpoint(pretrained_file(name))  # the file's own checks too
        assert payload["side"] == info["side"]
        assert {"recipe", "command", "minutes", "machine"} <= set(info["training"])
        assert info["strength"]["matches"], "a shipped net says how strong it measured"
        assert (FOLDER / info["file"]).stat().st_size < 10_000_000


def test_specs_name_the_shipped_net_from_any_folder(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert find_checkpoint("pretrained") == pretrained_file("pretrained")
    board = Board(pretrained_info("pretrained")["side"])
    state = GameState(board)
    agent = parse_agent("mcts:pretrained:8", board=board, seed=0)
    state.play(checked_move(agent, state))
    assert state.move_count == 1
    # a path that exists wins over the shipped name
    (tmp_path / "pretrained").mkdir()
    with pytest.raises(CheckpointError, match="a folder without a checkpoint"):
        find_checkpoint("pretrained")


def test_an_unknown_path_names_the_shipped_nets(tmp_path) -> None:
    named = r"no such checkpoint .*shipped net: .*\bpretrained\b"
    with pytest.raises(CheckpointError, match=named):
        find_checkpoint(tmp_path / "nothing.pt")
