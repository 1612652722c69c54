"""Typed schemas of the training configuration, registered in Hydra's ConfigStore.

``configs/train.yaml`` starts its defaults list with ``train_schema`` (the `TrainConfig` below),
so every group file and every command-line override is checked against these dataclasses when
the configuration is composed: a typo such as ``mcts.num_simulatons=3`` fails at once, naming
the key, before anything runs.

The library never imports this module; only the command line (``trapy_rl.train.cli``,
``scripts/train.py``) does. `trapy_rl.train.loop.train` reads any object with these attribute
names (the composed ``DictConfig``, or a `TrainConfig` built by hand).

The ``model`` group (``configs/model/*.yaml``) holds the flat keyword arguments of the network's
constructor; they are checked by the constructor itself when the run starts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hydra.core.config_store import ConfigStore

__all__ = [
    "CheckpointConfig",
    "EvalConfig",
    "LoggerConfig",
    "MCTSConfig",
    "OptimConfig",
    "ReplayConfig",
    "SelfPlayConfig",
    "TrainConfig",
    "register_configs",
]


@dataclass
class MCTSConfig:
    """The search that self-play runs at every move (``configs/mcts/``)."""

    num_simulations: int = 32
    c_puct: float = 1.25
    dirichlet_alpha: float = 0.3
    dirichlet_fraction: float = 0.25


@dataclass
class SelfPlayConfig:
    """Self-play games (``configs/selfplay/``).

    ``num_games`` games run together in one BatchGame; an iteration plays
    ``moves_per_iteration`` moves in each, so it generates num_games * moves_per_iteration
    positions (fewer when games resign). Moves before ``temperature_moves`` are sampled in
    proportion to the visit counts, later ones take the most visited action.
    """

    num_games: int = 32
    moves_per_iteration: int = 16
    num_workers: int = 0  # self-play processes; 0 plays in the training process
    temperature_moves: int = 8
    resign_threshold: float = -0.9
    resign_playout_fraction: float = 0.2


@dataclass
class ReplayConfig:
    """The replay window and how much the learner draws from it."""

    capacity: int = 20_000
    min_size: int = 512
    train_ratio: float = 4.0  # training samples drawn per generated position
    mirror: str = "random"  # none | random | both


@dataclass
class OptimConfig:
    """The optimiser, its learning-rate schedule and the loss weights (``configs/optim/``)."""

    name: str = "adam"  # adam | sgd
    lr: float = 1e-3
    momentum: float = 0.9  # sgd only
    weight_decay: float = 1e-4
    lr_schedule: str = "constant"  # constant | cosine
    warmup_steps: int = 0
    batch_size: int = 128
    policy_weight: float = 1.0
    value_weight: float = 1.0
    grad_clip: float = 0.0  # max gradient norm, 0 for none


@dataclass
class LoggerConfig:
    """Where the run reports (``configs/logger/``)."""

    name: str = "tensorboard"  # tensorboard | none
    progress: bool = True  # a tqdm bar over the iterations (else a log line per iteration)


@dataclass
class EvalConfig:
    """Matches played by the training run: every ``every`` iterations and once at the end."""

    every: int = 10  # iterations between evaluations, 0 for none during training
    num_games: int = 20  # per opponent, per evaluation
    num_simulations: int = 64  # the trained agent's search in matches
    uct_simulations: int = 32  # the rollout-MCTS opponent's search
    final_games: int = 100  # the match against random at the end, 0 to skip


@dataclass
class CheckpointConfig:
    """How often the run saves itself, and what the checkpoints hold."""

    every: int = 10  # iterations between checkpoints (one is always written at the end)
    keep: int = 3  # numbered checkpoints kept, the newest; 0 keeps all
    replay: bool = True  # include the replay window (needed to resume identically)


@dataclass
class TrainConfig:
    """A whole training run (``configs/train.yaml``)."""

    side: int = 5
    seed: int = 0
    iterations: int = 30
    device: str = "cpu"
    bf16: bool = False
    threads: int = 1  # torch CPU threads (1 is fastest for small nets), 0 for torch's default
    run_dir: str | None = None  # where outputs go; the command line sets Hydra's folder
    resume: str | None = None  # a checkpoint file or a run folder to continue
    model: dict[str, Any] = field(default_factory=dict)
    mcts: MCTSConfig = field(default_factory=MCTSConfig)
    selfplay: SelfPlayConfig = field(default_factory=SelfPlayConfig)
    replay: ReplayConfig = field(default_factory=ReplayConfig)
    optim: OptimConfig = field(default_factory=OptimConfig)
    logger: LoggerConfig = field(default_factory=LoggerConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    checkpoint: CheckpointConfig = field(default_factory=CheckpointConfig)


def register_configs() -> None:
    """Store the schemas in Hydra's ConfigStore (idempotent; done on import)."""
    store = ConfigStore.instance()
    store.store(name="train_schema", node=TrainConfig)


register_configs()
