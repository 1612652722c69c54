"""The trapy-eval command: composed configs, a run's checkpoints, files written, clear errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.errors import ConfigCompositionException
from tiny import write_tiny_run_checkpoint

from trapy_rl.config import CONFIG_DIR
from trapy_rl.eval.cli import evaluate
from trapy_rl.eval.pool import calibrate_pool
from trapy_rl.game import Board
from trapy_rl.solve.positions import make_test_set, write_test_set

REPO = Path(__file__).resolve().parents[2]


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def config(*overrides: str):
    with initialize_config_dir(config_dir=CONFIG_DIR, version_base="1.3"):
        return compose(config_name="eval", overrides=list(overrides))


def test_defaults_compose() -> None:
    cfg = config()
    assert cfg.agents == [] and cfg.games == 40 and cfg.side is None and cfg.seed == 0
    assert cfg.run is None and cfg.mode == "round_robin" and cfg.num_simulations == 100
    assert cfg.starts and cfg.openings == 0 and cfg.checkpoints == []
    assert cfg.baselines == ["random", "uct:200"] and cfg.pool == "default"


def test_typos_fail_naming_the_key() -> None:
    with pytest.raises(ConfigCompositionException, match="gamez"):
        config("gamez=3")
    with pytest.raises(ConfigCompositionException, match="games"):
        config("games=many")


def test_agents_end_to_end(tmp_path, capsys) -> None:
    checkpoint = write_tiny_run_checkpoint(tmp_path / "run", 1, side=3)
    cfg = config(
        f"agents=[random,uct:4,'net:{checkpoint},device=cpu']",
        "baselines=[random]",
        "games=4",
        "side=3",
        f"out={tmp_path / 'out'}",
        "progress=false",
    )
    assert cfg.agents[2] == f"net:{checkpoint},device=cpu"
    result = evaluate(cfg)
    assert result.played == 3 and result.ratings.names[result.ratings.anchor] == "random"
    out = tmp_path / "out"
    for name in ("ratings.txt", "ratings.csv", "ratings.json", "matches.jsonl"):
        assert (out / name).is_file(), name
    assert not (out / "elo_curve.png").exists()  # no run, no curve
    printed = capsys.readouterr().out
    assert "(anchor)" in printed and str(out / "ratings.csv") in printed
    again = evaluate(cfg)
    assert again.played == 0 and again.cached == 3


def test_run_rates_every_checkpoint_and_reuses_results(tmp_path) -> None:
    run = tmp_path / "run"
    for iteration in (1, 2):
        write_tiny_run_checkpoint(run, iteration, side=3, step=50 * iteration)
    overrides = [
        f"run={run}",
        "games=2",
        "num_simulations=2",
        "baselines=[random,uct:4]",
        "device=cpu",
        "progress=false",
    ]
    first = evaluate(config(*overrides, f"out={tmp_path / 'first'}"))
    assert first.side == 3  # from the run
    assert first.specs[:2] == ("random", "uct:4")
    assert first.specs[2] == f"mcts:{run / 'checkpoints' / 'ckpt_000001.pt'}:2,device=cpu"
    assert first.played == 6
    assert (run / "eval_cache.jsonl").is_file()
    assert (tmp_path / "first" / "elo_curve.png").read_bytes()[:4] == b"\x89PNG"
    curve = json.loads((tmp_path / "first" / "ratings.json").read_text())["curve"]
    assert [point["step"] for point in curve] == [50, 100]

    write_tiny_run_checkpoint(run, 3, side=3, step=150)
    second = evaluate(config(*overrides, f"out={tmp_path / 'second'}"))
    assert second.played == 4 and second.cached == 6  # only the new checkpoint's matches

    gauntlet = evaluate(config(*overrides, "mode=gauntlet", f"out={tmp_path / 'third'}"))
    assert gauntlet.played == 0  # the newest checkpoint's matches are all cached
    assert {m.agent_a for m in gauntlet.matches} == {second.specs[-1]}


def test_baselines_mode_tabulates_chosen_checkpoints(tmp_path) -> None:
    run = tmp_path / "run"
    for iteration in (1, 2, 3):
        write_tiny_run_checkpoint(run, iteration, side=3, step=50 * iteration)
    out = tmp_path / "out"
    result = evaluate(
        config(
            f"run={run}",
            "mode=baselines",
            "checkpoints=[1,3]",
            "baselines=[random,uct:4,uct:2]",
            "games=2",
            "num_simulations=2",
            "device=cpu",
            "progress=false",
            f"out={out}",
        )
    )
    assert result.specs[:3] == ("random", "uct:4", "uct:2")
    checkpoints = [spec for spec in result.specs if spec.startswith("mcts:")]
    assert [Path(spec.split(":")[1]).name for spec in checkpoints] == [
        "ckpt_000001.pt",
        "ckpt_000003.pt",
    ]
    # Each chosen checkpoint against each of the three baselines, and nothing else.
    pairs = {(m.agent_a, m.agent_b) for m in result.matches}
    assert pairs == {(c, b) for c in checkpoints for b in ("random", "uct:4", "uct:2")}
    table = (out / "winrates.txt").read_text().splitlines()
    assert table[0].split()[:2] == ["step", "checkpoint"] and table[0].split()[2:] == [
        "random",
        "uct:4",
        "uct:2",
    ]
    assert [line.split()[:2] for line in table[1:]] == [
        ["50", "ckpt_000001.pt"],
        ["150", "ckpt_000003.pt"],
    ]
    wins = {(m.agent_a, m.agent_b): m.wins for m in result.matches}
    assert table[1].split()[2] == f"{wins[(checkpoints[0], 'random')]}/2"
    rows = (out / "winrates.csv").read_text().splitlines()
    assert rows[0] == "step,agent,baseline,wins,games,win_rate,low,high" and len(rows) == 7
    assert (out / "winrate_curve.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["side=3"], "no agents"),
        (["agents=[random,uct:2]", "side=3", "checkpoints=[1]"], "give run=RUN_FOLDER"),
        (["agents=[random,uct:2]", "side=3", "mode=baselines", "baselines=[]"], "needs baselines"),
        (["agents=[random,uct:2]", "mode=swiss", "side=3"], "mode must be one of"),
        (["agents=[random,wizard]", "side=3"], "unknown agent spec 'wizard'"),
        (["agents=[random,uct:2]", "side=3", "games=0"], "games must be between 1 and"),
    ],
)
def test_bad_settings_name_the_problem(tmp_path, overrides, message) -> None:
    with pytest.raises(ValueError, match=message):
        evaluate(config(*overrides, f"out={tmp_path}", "progress=false"))


def test_run_errors(tmp_path) -> None:
    run = tmp_path / "run"
    write_tiny_run_checkpoint(run, 1, side=3)
    with pytest.raises(ValueError, match="trains on side 3"):
        evaluate(config(f"run={run}", "side=4", f"out={tmp_path}"))
    with pytest.raises(ValueError, match=r"no checkpoints of iterations \[7\]; it has \[1\]"):
        evaluate(config(f"run={run}", "checkpoints=[1,7]", f"out={tmp_path}"))
    with pytest.raises(ValueError, match="no such run folder"):
        evaluate(config(f"run={tmp_path / 'missing'}", f"out={tmp_path}"))


def test_a_curriculum_run_is_rated_on_its_own_side(tmp_path, capsys) -> None:
    """A run that learned on side 3 first (a curriculum) and then on side 4: its side-4
    checkpoints are rated, the side-3 ones left out and said so; choosing one is an error."""
    run = tmp_path / "run"
    for iteration, side in ((1, 3), (2, 4), (3, 4)):
        write_tiny_run_checkpoint(run, iteration, side=side, step=10 * iteration)
    overrides = [f"run={run}", "games=2", "num_simulations=2", "baselines=[random]"]
    result = evaluate(config(*overrides, "device=cpu", "progress=false", f"out={tmp_path / 'a'}"))
    assert result.side == 4 and [s for s in result.specs if "ckpt_" in s] == [
        f"mcts:{run / 'checkpoints' / f'ckpt_00000{i}.pt'}:2,device=cpu" for i in (2, 3)
    ]
    assert "left out 1 of sides [3] (a curriculum's boards)" in capsys.readouterr().out
    with pytest.raises(ValueError, match=r"checkpoints \[1\] are of side \[3\], not 4"):
        evaluate(config(*overrides, "checkpoints=[1,3]", f"out={tmp_path / 'b'}"))
    with pytest.raises(ValueError, match="trains on side 4"):
        evaluate(config(*overrides, "side=5", f"out={tmp_path / 'c'}"))


def test_command_line_writes_into_the_hydra_folder(tmp_path) -> None:
    folder = tmp_path / "hydra_run"
    completed = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "evaluate.py"),
            "agents=[random,uct:2]",
            "games=2",
            "side=3",
            f"hydra.run.dir={folder}",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr
    assert f"csv: {folder / 'ratings.csv'}" in completed.stdout
    assert "tournament" in completed.stderr  # the progress bar
    for name in ("ratings.txt", "ratings.csv", "ratings.json", "matches.jsonl"):
        assert (folder / name).is_file(), name


def test_benchmark_rates_checkpoints_against_a_fixed_pool(tmp_path) -> None:
    pool, _ = calibrate_pool(["random", "uct:3", "uct:30"], board=Board(3), num_games=8)
    pool_file = tmp_path / "pool.json"
    pool_file.write_text(json.dumps(pool.to_dict()))
    run = tmp_path / "run"
    for iteration in (1, 2):
        write_tiny_run_checkpoint(run, iteration, side=3)
    common = [f"run={run}", "mode=benchmark", f"pool={pool_file}", "games=4"]
    common += ["num_simulations=2", "device=cpu", "progress=false", "every_member=true"]
    result = evaluate(config(*common, "head_to_head=true", f"out={tmp_path / 'out'}"))
    ratings = dict(zip(result.ratings.names, result.ratings.ratings))
    assert {m.spec: m.elo for m in pool.members} == {s: ratings[s] for s in pool.ratings}
    checkpoints = [spec for spec in result.specs if spec.startswith("mcts:")]
    assert {(m.agent_a, m.agent_b) for m in result.matches} == {
        (c, member) for c in checkpoints for member in pool.ratings
    }
    summary = (tmp_path / "out" / "summary.txt").read_text()
    assert "start positions" in summary and "pool: random (0)" in summary
    assert "cycles of clear wins" in summary and "head-to-head" in summary
    assert "distinct" in summary
    assert (tmp_path / "out" / "elo_curve.png").read_bytes()[:4] == b"\x89PNG"
    newest = ["checkpoints=[-1]", "pool_members=[random]", f"out={tmp_path / 'cheap'}"]
    cheap = evaluate(config(*common, *newest))
    assert {m.agent_b for m in cheap.matches} == {"random"} and cheap.played == 0  # cached
    assert {m.agent_a for m in cheap.matches} == {checkpoints[-1]}  # -1: the newest only


def test_a_benchmark_plays_the_members_near_the_agent_first(tmp_path) -> None:
    """A weak agent on a five-member ladder starts at the middle member and then plays the
    members nearest its falling estimate: never the two far above it."""
    elos = {"random": 0.0, "uct:2": 100.0, "uct:8": 300.0, "uct:40": 600.0, "uct:200": 900.0}
    members = [{"spec": s, "elo": e, "low": e, "high": e} for s, e in elos.items()]
    pool_file = tmp_path / "ladder.json"
    pool_file.write_text(json.dumps({"side": 3, "members": members, "games": 8, "seed": 0}))
    steps = ["adaptive.games_per_step=4", "adaptive.max_games=12", "adaptive.target=1"]
    result = evaluate(
        config(
            "agents=[uct:1]",
            "mode=benchmark",
            f"pool={pool_file}",
            *steps,
            "side=3",
            "progress=false",
            f"out={tmp_path / 'out'}",
        )
    )
    played = {m.agent_b: m.games for m in result.matches}
    assert sum(played.values()) == 12 and "uct:8" in played  # three steps, the middle first
    assert set(played) <= {"random", "uct:2", "uct:8"}  # near its estimate, below the middle
    assert {m.agent_a for m in result.matches} == {"uct:1"}
    ratings = dict(zip(result.ratings.names, result.ratings.ratings))
    assert {s: ratings[s] for s in elos} == pytest.approx(elos) and ratings["uct:1"] < 300.0
    summary = (tmp_path / "out" / "summary.txt").read_text()
    assert "uct:1: " in summary and "steps: uct:8 (4), " in summary
    assert "game budget spent" in summary and "12 distinct" in summary


def test_mode_truth_scores_every_agent_and_checkpoint_of_a_solved_side(tmp_path, capsys) -> None:
    for iteration in (1, 2):
        write_tiny_run_checkpoint(tmp_path / "run", iteration, side=4)
    cfg = config(
        "agents=[random,uct:16]",
        f"run={tmp_path / 'run'}",
        "mode=truth",
        "num_simulations=4",
        f"out={tmp_path / 'out'}",
    )
    scores = evaluate(cfg)
    assert [s.agent for s in scores][:2] == ["random", "uct:16"] and len(scores) == 4
    assert scores[0].value_sign is None and scores[2].value_sign.total == 300
    rows = (tmp_path / "out" / "truth.csv").read_text().splitlines()
    assert rows[0].startswith("agent,training step (gradient steps),won_kept,won_kept_of")
    assert len(rows) == 5
    assert rows[0].endswith(",wrong_swaps,test_set")
    assert all(row.endswith(",shipped positions_side4.json") for row in rows[1:])
    assert "swap decisions" in capsys.readouterr().out


def test_mode_truth_scores_on_a_test_set_of_the_users_own(tmp_path, capsys) -> None:
    own = make_test_set(4, count=6, empty=7, seed=5)
    write_test_set(own, tmp_path / "own.json")
    cfg = config("agents=[uct:16]", "side=4", "mode=truth", f"test_set={tmp_path / 'own.json'}",
                 f"out={tmp_path / 'out'}")  # fmt: skip
    (score,) = evaluate(cfg)
    assert score.won_kept.total == sum(p.win for p in own.positions)  # not the shipped set's
    assert f"(6 positions of {tmp_path / 'own.json'})" in capsys.readouterr().out
    rows = (tmp_path / "out" / "truth.csv").read_text().splitlines()
    assert rows[1].endswith(f",{tmp_path / 'own.json'}")
    with pytest.raises(ValueError, match=r"holds side-4 positions, the agents play side 5"):
        evaluate(config("agents=[random]", "side=5", "mode=truth",
                        f"test_set={tmp_path / 'own.json'}", f"out={tmp_path}"))  # fmt: skip
    with pytest.raises(ValueError, match=r"test_set is for mode=truth \(the exact values\), not"):
        evaluate(config("agents=[random]", "side=4", f"test_set={tmp_path / 'own.json'}"))


def test_mode_truth_on_an_unsolved_side_is_one_clear_error(tmp_path) -> None:
    cfg = config("agents=[random]", "side=6", "mode=truth", f"out={tmp_path}")
    with pytest.raises(ValueError, match=r"mode=truth: side 6 is not solved \(solved: \[4, 5\]\)"):
        evaluate(cfg)
