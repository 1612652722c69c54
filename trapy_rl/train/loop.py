"""The AlphaZero training loop: self-play -> replay -> learner, with checkpoints and logs.

`train(cfg)` reads any object with the attributes of `trapy_rl.config.TrainConfig` (the
composed Hydra config, or the dataclass itself) and never imports Hydra. One iteration:

1. self-play: ``selfplay.moves_per_iteration`` searched moves in each of ``selfplay.num_games``
   games; finished games' positions go into the replay window;
2. learn: once the window holds ``replay.min_size`` positions, ``replay.train_ratio`` training
   samples per generated position, in batches of ``optim.batch_size``;
3. log to TensorBoard; every ``eval.every`` iterations play matches and draw the opening values;
4. every ``checkpoint.every`` iterations, and at the end (Ctrl-C included), save a checkpoint.

Random numbers: every iteration draws from generators seeded by (seed, iteration), so a run
resumed from a checkpoint continues exactly as if it had not stopped.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from trapy_rl.game.board import Board
from trapy_rl.nn import Evaluator, PolicyValueNet
from trapy_rl.train.checkpoint import (
    CHECKPOINT_DIR,
    CheckpointError,
    check_compatible,
    get_rng_state,
    load_checkpoint,
    set_rng_state,
    write_run_checkpoint,
)
from trapy_rl.train.learner import Learner
from trapy_rl.train.replay import MIRROR_MODES, ReplayBuffer
from trapy_rl.train.workers import make_selfplay_backend

__all__ = ["TrainResult", "config_to_dict", "train"]

log = logging.getLogger(__name__)

# Streams of random numbers drawn per iteration: seeded by (seed, iteration, stream).
_SELFPLAY_STREAM, _REPLAY_STREAM, _EVAL_STREAM = 1, 2, 3


@dataclass
class TrainResult:
    """What a finished run leaves behind.

    Attributes:
        run_dir: the run's folder (config, checkpoints, TensorBoard events).
        checkpoint: the last checkpoint written.
        iterations: iterations completed in total (resumed ones included).
        final_match: the closing match against random play, if one was played.
        history: per-iteration metrics of this process, in order.
    """

    run_dir: Path
    checkpoint: Path | None
    iterations: int
    final_match: Any = None
    history: list[dict[str, float]] = dataclasses.field(default_factory=list)


def config_to_dict(cfg: Any) -> dict:
    """The configuration as plain nested dicts (from a dataclass, DictConfig or dict)."""
    if dataclasses.is_dataclass(cfg) and not isinstance(cfg, type):
        return dataclasses.asdict(cfg)
    if isinstance(cfg, dict):
        return {k: config_to_dict(v) if isinstance(v, dict) else v for k, v in cfg.items()}
    try:  # an OmegaConf container; omegaconf comes with Hydra but is imported only here
        from omegaconf import OmegaConf

        if OmegaConf.is_config(cfg):
            return OmegaConf.to_container(cfg, resolve=True)
    except ImportError:  # pragma: no cover
        pass
    raise TypeError(f"cannot read a configuration from {type(cfg).__name__}")


def _to_yaml(config: dict) -> str:
    try:
        from omegaconf import OmegaConf

        return OmegaConf.to_yaml(OmegaConf.create(config))
    except ImportError:  # pragma: no cover
        import json

        return json.dumps(config, indent=2)


def _check_config(config: dict) -> None:
    """Clear errors for values the schema's types cannot rule out."""
    problems = []
    sp, rp, op = config["selfplay"], config["replay"], config["optim"]
    for where, value, least in (
        ("side", config["side"], 2),
        ("iterations", config["iterations"], 0),
        ("selfplay.num_games", sp["num_games"], 1),
        ("selfplay.moves_per_iteration", sp["moves_per_iteration"], 1),
        ("selfplay.num_workers", sp["num_workers"], 0),
        ("mcts.num_simulations", config["mcts"]["num_simulations"], 1),
        ("replay.capacity", rp["capacity"], 1),
        ("optim.batch_size", op["batch_size"], 1),
        ("checkpoint.every", config["checkpoint"]["every"], 0),
        ("eval.every", config["eval"]["every"], 0),
    ):
        if value < least:
            problems.append(f"{where} must be >= {least}, got {value}")
    if rp["train_ratio"] < 0:
        problems.append(f"replay.train_ratio must be >= 0, got {rp['train_ratio']}")
    if rp["mirror"] not in MIRROR_MODES:
        problems.append(f"replay.mirror must be one of {MIRROR_MODES}, got {rp['mirror']!r}")
    if config["logger"]["name"] not in ("tensorboard", "none"):
        problems.append(
            f"logger.name must be 'tensorboard' or 'none', got {config['logger']['name']!r}"
        )
    if problems:
        raise ValueError("bad training configuration: " + "; ".join(problems))


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)  # noqa: NPY002 (for code that uses the global state)
    torch.manual_seed(seed)


def train(cfg: Any) -> TrainResult:
    """Run (or resume) a training run; see the module docstring. Returns where it all went."""
    config = config_to_dict(cfg)
    _check_config(config)
    run_dir = Path(config.get("run_dir") or ".").resolve()
    checkpoint_dir = run_dir / CHECKPOINT_DIR
    checkpoint_dir.mkdir(parents=True, exist_ok=True)
    config_yaml = _to_yaml(config)
    (run_dir / "config.yaml").write_text(config_yaml)
    if config["threads"] > 0:
        torch.set_num_threads(config["threads"])
    seed = int(config["seed"])
    _seed_everything(seed)

    # ------------------------------------------------------------------ the pieces
    board = Board(config["side"])
    model_config = dict(config["model"])
    try:
        net = PolicyValueNet(**model_config)
    except TypeError as error:
        raise ValueError(f"bad model configuration {model_config}: {error}") from error
    model_config = dict(getattr(net, "config", model_config))
    device = torch.device(config["device"])
    evaluator = Evaluator(net, device=device, bf16=config["bf16"])
    sp, rp, op, ev, ck = (config[k] for k in ("selfplay", "replay", "optim", "eval", "checkpoint"))
    positions_per_iteration = sp["num_games"] * sp["moves_per_iteration"]
    learner = Learner(
        net,
        board,
        optimizer=op["name"],
        lr=op["lr"],
        momentum=op["momentum"],
        weight_decay=op["weight_decay"],
        lr_schedule=op["lr_schedule"],
        warmup_steps=op["warmup_steps"],
        total_steps=math.ceil(
            config["iterations"] * positions_per_iteration * rp["train_ratio"] / op["batch_size"]
        ),
        policy_weight=op["policy_weight"],
        value_weight=op["value_weight"],
        grad_clip=op["grad_clip"],
        device=device,
    )
    replay = ReplayBuffer(board, rp["capacity"])
    selfplay = make_selfplay_backend(net, evaluator, board, config)
    counters = {"iteration": 0, "positions": 0, "games": 0, "samples_owed": 0.0}

    if config.get("resume"):
        try:
            _resume(config["resume"], board, model_config, net, learner, replay, selfplay, counters)
        except BaseException:
            selfplay.close()
            raise

    writer = None
    if config["logger"]["name"] == "tensorboard":
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(log_dir=str(run_dir / "tensorboard"))
    print(f"run folder: {run_dir}\n  checkpoints: {checkpoint_dir}", flush=True)
    if writer is not None:
        print(f"  tensorboard: tensorboard --logdir {run_dir / 'tensorboard'}", flush=True)

    def save(reason: str) -> Path:
        payload = {
            "side": board.side,
            "model": {"config": model_config, "state": net.state_dict()},
            "learner": learner.state_dict(),
            "counters": dict(counters),
            "rng": get_rng_state(),
            "replay": replay.state_dict() if ck["replay"] else None,
            "selfplay": selfplay.state_dict(),
            "config": config,
            "config_yaml": config_yaml,
        }
        path = write_run_checkpoint(checkpoint_dir, counters["iteration"], payload, keep=ck["keep"])
        log.info("checkpoint (%s): %s", reason, path)
        return path

    result = TrainResult(run_dir=run_dir, checkpoint=None, iterations=counters["iteration"])
    bar = None
    if config["logger"]["progress"] and counters["iteration"] < config["iterations"]:
        from tqdm.auto import tqdm

        bar = tqdm(
            total=config["iterations"], initial=counters["iteration"], unit="it", desc="training"
        )
    saved_at = counters["iteration"] if config.get("resume") else -1
    loop_started, first_iteration = time.perf_counter(), counters["iteration"]
    try:
        # ---------------------------------------------------------------- the iterations
        while counters["iteration"] < config["iterations"]:
            iteration = counters["iteration"]
            started = time.perf_counter()

            # 1. self-play
            played = selfplay.play(
                sp["moves_per_iteration"], seed=[seed, iteration, _SELFPLAY_STREAM]
            )
            replay.add(played.samples)
            counters["positions"] += len(played.samples)
            counters["games"] += len(played.records)

            # 2. learn
            rng = np.random.default_rng([seed, iteration, _REPLAY_STREAM])
            reports = []
            learn_started = time.perf_counter()
            if len(replay) >= rp["min_size"]:
                counters["samples_owed"] += rp["train_ratio"] * len(played.samples)
                while counters["samples_owed"] >= op["batch_size"]:
                    batch = replay.sample(op["batch_size"], rng, mirror=rp["mirror"])
                    reports.append(learner.train_step(batch))
                    counters["samples_owed"] -= op["batch_size"]
            learn_seconds = time.perf_counter() - learn_started
            selfplay.weights_changed()
            counters["iteration"] = iteration + 1

            # 3. report
            stats = played.stats
            metrics = {
                "selfplay/games_per_s": stats.games_per_s,
                "selfplay/moves_per_s": stats.moves_per_s,
                "selfplay/simulations_per_s": stats.simulations_per_s,
                "selfplay/game_length": stats.mean_game_length,
                "selfplay/blue_win_rate": stats.blue_win_rate,
                "selfplay/swap_rate": stats.swap_rate,
                "selfplay/resign_rate": stats.resign_rate,
                "selfplay/false_resign_rate": stats.false_resign_rate,
                "replay/size": float(len(replay)),
                "perf/learn_s": learn_seconds,
                "perf/iteration_s": time.perf_counter() - started,
            }
            if reports:
                for key in ("policy", "value", "total", "entropy"):
                    metrics[f"loss/{key}"] = float(np.mean([r[key] for r in reports]))
                metrics["optim/lr"] = reports[-1]["lr"]
                metrics["optim/steps"] = float(learner.step)
            if ev["every"] and counters["iteration"] % ev["every"] == 0:
                metrics.update(_evaluate(evaluator, board, config, counters["iteration"], writer))
            _log(writer, metrics, counters["iteration"])
            result.history.append({"iteration": counters["iteration"], **metrics})
            done = counters["iteration"] - first_iteration
            per_iteration = (time.perf_counter() - loop_started) / done
            eta = per_iteration * (config["iterations"] - counters["iteration"])
            line = _summary_line(counters, metrics, config["iterations"], eta)
            if bar is not None:
                bar.set_postfix_str(line, refresh=False)
                bar.update(1)
            else:
                print(line, flush=True)

            # 4. checkpoint
            if ck["every"] and counters["iteration"] % ck["every"] == 0:
                result.checkpoint = save("periodic")
                saved_at = counters["iteration"]
    except KeyboardInterrupt:
        if bar is not None:
            bar.close()
        path = save("interrupted")
        print(f"\ninterrupted: saved {path}; resume with resume={run_dir}", flush=True)
        if writer is not None:
            writer.close()
        selfplay.close()
        raise
    if bar is not None:
        bar.close()
    if saved_at != counters["iteration"]:
        result.checkpoint = save("final")
    elif result.checkpoint is None:
        result.checkpoint = checkpoint_dir / "latest.pt"
    result.iterations = counters["iteration"]
    selfplay.close()

    # ------------------------------------------------------------------ the closing match
    if ev["final_games"] > 0:
        from trapy_rl.agents import RandomAgent
        from trapy_rl.eval import play_match

        agent = _search_agent(evaluator, config, seed=seed, label="trained")
        match = play_match(
            agent, RandomAgent(seed=seed + 1), num_games=ev["final_games"], board=board, seed=seed
        )
        result.final_match = match
        if writer is not None:
            writer.add_scalar(
                "eval/final_win_rate_vs_random", match.win_rate, counters["iteration"]
            )
        low, high = match.interval
        print(
            f"final match vs random, {match.games} games (both colours, swap allowed): "
            f"won {match.wins} = {match.win_rate:.1%} (95% interval {low:.1%}..{high:.1%})",
            flush=True,
        )
        print(match, flush=True)
    if writer is not None:
        writer.close()
    print(f"checkpoint: {result.checkpoint}", flush=True)
    if writer is not None:
        print(f"logs: tensorboard --logdir {run_dir / 'tensorboard'}", flush=True)
    return result


def _resume(path, board, model_config, net, learner, replay, selfplay, counters) -> None:
    """Load a run's state from the checkpoint at ``path`` (a file or a run folder)."""
    payload = load_checkpoint(path)
    missing = [k for k in ("learner", "counters", "rng", "selfplay") if k not in payload]
    if missing:
        raise CheckpointError(
            f"{payload['path']}: not a checkpoint of a training run (lacks {', '.join(missing)})"
        )
    check_compatible(payload, side=board.side, model_config=model_config)
    net.load_state_dict(payload["model"]["state"])
    learner.load_state_dict(payload["learner"])
    if payload.get("replay") is not None:
        replay.load_state_dict(payload["replay"])
    selfplay.load_state_dict(payload["selfplay"])
    counters.update(payload["counters"])
    set_rng_state(payload["rng"])
    print(f"resumed from {payload['path']} at iteration {counters['iteration']}", flush=True)


def _search_agent(evaluator, config: dict, *, seed: int, label: str):
    """The agent the run is measured with: its net guiding search, eval.num_simulations a move."""
    from trapy_rl.agents import NetworkMCTSAgent

    simulations = config["eval"]["num_simulations"]
    return NetworkMCTSAgent(
        evaluator,
        num_simulations=simulations,
        c_puct=config["mcts"]["c_puct"],
        seed=seed,
        name=f"{label}+mcts:{simulations}",
    )


def _evaluate(evaluator, board: Board, config: dict, iteration: int, writer) -> dict[str, float]:
    """Matches against random and UCT, and the opening-values picture."""
    from trapy_rl.train.evaluation import evaluate, opening_values_figure

    ev = config["eval"]
    seed = int(np.random.default_rng([config["seed"], iteration, _EVAL_STREAM]).integers(2**31))
    agent = _search_agent(evaluator, config, seed=seed, label="net")
    matches = evaluate(
        agent,
        board,
        num_games=ev["num_games"],
        uct_simulations=ev["uct_simulations"],
        seed=seed,
    )
    if writer is not None:
        figure = opening_values_figure(evaluator, board, title=f"iteration {iteration}")
        writer.add_figure("eval/opening_values", figure, iteration)
    return {
        "eval/win_rate_vs_random": matches["random"].win_rate,
        "eval/win_rate_vs_uct": matches["uct"].win_rate,
    }


def _log(writer, metrics: dict[str, float], step: int) -> None:
    if writer is None:
        return
    for tag, value in metrics.items():
        if value is not None and not (isinstance(value, float) and math.isnan(value)):
            writer.add_scalar(tag, value, step)
    writer.flush()


def _summary_line(counters: dict, metrics: dict[str, float], total: int, eta: float) -> str:
    parts = [
        f"it {counters['iteration']}/{total}",
        f"eta {int(eta) // 60}:{int(eta) % 60:02d}",
        f"games {counters['games']}",
        f"{metrics['selfplay/moves_per_s']:.0f} moves/s",
    ]
    if "loss/total" in metrics:
        parts.append(
            f"loss {metrics['loss/total']:.3f} (p {metrics['loss/policy']:.3f} "
            f"v {metrics['loss/value']:.3f})"
        )
    for key, label in (
        ("eval/win_rate_vs_random", "vs random"),
        ("eval/win_rate_vs_uct", "vs uct"),
    ):
        if key in metrics:
            parts.append(f"{label} {metrics[key]:.0%}")
    return ", ".join(parts)
