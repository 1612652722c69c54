"""scripts/ship_pretrained.py's record of a net's strength: its matches found by run folder and
file, wins counted from its side, replaced opponents renamed, a long run's net on its panel."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

from tiny import write_tiny_checkpoint

from trapy_rl.eval.pool import load_pool, rate_against_pool, rating_from_cache
from trapy_rl.game import Board
from trapy_rl.train.checkpoint import average_networks

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "ship_pretrained.py"
sys.path.insert(0, str(SCRIPT.parent))  # it imports strength_curve from its own folder
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


def test_an_averaged_long_run_net_ships_with_its_panel_elo_and_says_it_is_a_mean(
    tmp_path: Path, monkeypatch
) -> None:
    """``--long-run-panel`` records the net's matches against the panel alone (not those with
    other members) and the Elo `rating_from_cache` fits from them; a mean net says so."""
    monkeypatch.chdir(tmp_path)  # the cache names nets relative to the repository
    run = Path("benchmarks") / "long_runs" / "run-s0"
    nets = [write_tiny_checkpoint(run / f"net_it{i:06d}.pt", side=10, seed=i) for i in (1, 2)]
    mean = average_networks(nets, run / "mean_it000001-000002.pt")
    spec = f"mcts:{mean.as_posix()}:2"
    pool = load_pool("default", side=10)
    cache = Path("benchmarks") / "long_runs" / "matches.jsonl"
    board = Board(10)
    rate_against_pool([spec], pool.select(["random", "uct:1", "uct:4"]), board=board,
                      num_games=2, cache_path=cache)  # fmt: skip
    panel = ("random", "uct:1")  # uct:4 is no member of this panel
    for name, value in (("ROOT", tmp_path), ("CACHE", cache), ("PANEL", panel)):
        monkeypatch.setattr(ship, name, value)
    monkeypatch.setattr(ship, "FOLDER", tmp_path / "pretrained")
    monkeypatch.setattr(ship, "MANIFEST", tmp_path / "pretrained" / "manifest.json")
    (tmp_path / "pretrained").mkdir()

    argv = [str(mean), "--name", "new", "--command", "c", "--machine", "m", "--long-run-panel",
            "--simulations", "2"]  # fmt: skip
    assert ship.main(argv) == 0
    entry = json.loads((tmp_path / "pretrained" / "manifest.json").read_text())["new"]
    assert entry["training"]["weights"] == "mean of net_it000001.pt, net_it000002.pt"
    recorded = entry["strength"]["matches"]
    assert sorted(m["opponent"] for m in recorded) == ["random", "uct:1"]
    assert all(m["games"] == 2 and m["net"] == spec for m in recorded)
    fit = rating_from_cache(spec, pool.select(list(panel)), cache)
    (elo,) = entry["strength"]["pool_elo"]
    assert elo["elo"] == round(float(fit.ratings[-1]), 1)
    assert elo["interval"] == [round(float(fit.lower[-1]), 1), round(float(fit.upper[-1]), 1)]
    assert (tmp_path / "pretrained" / "trap_y_side10_new.pt").is_file()


def test_truth_rows_of_the_net_are_kept_with_their_rates_counts_and_wrong_decisions(
    tmp_path: Path,
) -> None:
    """``--truth``: the net's rows of trapy-eval's truth.csv, another agent's left out, a score
    the agent has none of (a policy's value sign is there; uct's is not) left out too."""
    truth = tmp_path / "truth.csv"
    truth.write_text(
        "agent,checkpoint,won_kept,won_kept_of,value_sign,value_sign_of,swaps,swaps_of,"
        "wrong_swaps,test_set\n"
        "mcts:runs/a/checkpoints/latest.pt:200,,0.9942,173,0.9600,300,1.0000,35,,own.json\n"
        "uct:1000,,0.8000,173,,,0.9429,35,b3 f3,own.json\n"
    )
    (row,) = ship.truth_scores([Path("runs/a/checkpoints/latest.pt")], [truth])
    assert row == {
        "agent": "mcts:runs/a/checkpoints/latest.pt:200",
        "won_kept": {"rate": 0.9942, "of": 173},
        "value_sign": {"rate": 0.96, "of": 300},
        "swaps": {"rate": 1.0, "of": 35},
        "wrong_swaps": [],
        "test_set": "own.json",
        "source": str(truth),
    }
    assert ship.truth_scores([Path("runs/b/checkpoints/latest.pt")], [truth]) == []
