"""scripts/ship_pretrained.py's record of a net's strength: its matches found by run folder and
file, wins counted from its side, replaced opponents renamed."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "ship_pretrained.py"
_spec = importlib.util.spec_from_file_location("ship_pretrained", SCRIPT)
ship = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ship)


def _match(a: str, b: str, wins: int) -> dict:
    return {"agent_a": a, "agent_b": b, "games": 40, "wins": wins, "openings": 1, "starts": 0}


def test_strength_finds_the_nets_matches_from_either_side_and_renames_replaced_opponents(
    tmp_path: Path,
) -> None:
    ours = "mcts:runs/a/checkpoints/latest.pt:200"
    ratings = tmp_path / "ratings.json"
    matches = [
        _match(ours, "mcts:pretrained:200", 25),
        _match("uct:5000", ours, 1),  # ours on the b side: it won 39
        _match("uct:1000", "random", 40),  # not ours
        _match("mcts:runs/b/checkpoints/latest.pt:200", "random", 40),  # another run's latest
    ]
    data = {"side": 10, "fixed": {"random": 0.0}, "matches": matches, "ratings": [
        {"name": ours, "elo": 2300.0, "lower": 2100.0, "upper": 2500.0},
        {"name": "uct:5000", "elo": 1800.0, "lower": 1700.0, "upper": 1900.0},
    ]}  # fmt: skip
    ratings.write_text(json.dumps(data))
    net = Path("runs/a/checkpoints/latest.pt")
    record = ship.strength([net], [ratings], {"mcts:pretrained:200": "mcts:runs/old/x.pt:200"})
    found = [(m["opponent"], m["wins"], m["games"]) for m in record["matches"]]
    assert found == [("mcts:runs/old/x.pt:200", 25, 40), ("uct:5000", 39, 40)]
    assert record["pool_elo"] == [
        {
            "elo": 2300.0,
            "interval": [2100.0, 2500.0],
            "scale": "the side-10 pool (random 0)",
            "source": str(ratings),
        }
    ]


def test_a_long_run_nets_legs_end_at_the_net_and_leave_out_the_legs_after_it() -> None:
    legs = [
        {"from": "scratch", "command": "a", "to": {"iteration": 381}, "ended": "t1"},
        {"from": {"iteration": 381}, "command": "b", "to": {"iteration": 710}, "ended": "t2"},
        {"from": {"iteration": 710}, "command": "c", "to": {"iteration": 1206}, "ended": "t3"},
    ]
    mid = ship.legs_up_to(legs, {"iteration": 900, "cpu_hours": 1.07})
    assert [leg["command"] for leg in mid] == ["a", "b", "c"]
    assert mid[-1]["to"] == {
        "iteration": 900,
        "cpu_hours": 1.07,
        "note": "the net; the leg trained on",
    }
    assert "ended" not in mid[-1] and legs[2]["to"] == {"iteration": 1206}  # a copy changed
    at_end = ship.legs_up_to(legs, {"iteration": 710, "cpu_hours": 0.89})
    assert [leg["command"] for leg in at_end] == ["a", "b"] and at_end[-1]["ended"] == "t2"
