"""The settings of a training run: frozen, typed, checked, each default written once.

`TrainConfig` is the whole run; its groups are the settings objects the pieces take whole:
`SearchSettings` (``mcts``) goes to the search, `NetConfig` (``model``) to the net,
`SelfPlaySettings` to self-play, `OptimSettings` to the learner. `trapy_rl.train.cli`
registers `TrainConfig` as the schema of ``configs/train.yaml``, whose group files say only how
they differ from their group's class (``model/tiny.yaml`` from `NetConfig()`); tests check
that the composed default config equals ``TrainConfig()``, the default run.

Build one from plain nested dicts (a checkpoint's saved config) with `TrainConfig.from_dict`,
change one with dotted keys:

>>> cfg = TrainConfig().replace({"side": 4, "mcts.num_simulations": 8})
>>> cfg.side, cfg.mcts.num_simulations, cfg.mcts.c_puct
(4, 8, 1.25)
>>> TrainConfig.from_dict({"mcts": {"num_simulatons": 8}})
Traceback (most recent call last):
...
ValueError: mcts: unknown setting 'num_simulatons' (did you mean 'num_simulations'?)
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from trapy_rl.config import settings_from_dict
from trapy_rl.game.board import MAX_SIDE, Board
from trapy_rl.game.planes import NUM_PLANES
from trapy_rl.mcts.settings import SearchSettings
from trapy_rl.mcts.tree import Tree
from trapy_rl.nn.device import DEVICES, check_device
from trapy_rl.nn.network import NetConfig
from trapy_rl.train.replay import MAX_CAPACITY, MIRROR_MODES, replay_bytes

# The default run's net (``model: tiny``): on a CPU it gains strength fastest per minute of the
# nets measured on side 10 (BENCHMARKS.md). `NetConfig()` is the bigger ``small`` net.
TINY_NET = NetConfig(channels=16, blocks=2, policy_channels=16, value_hidden=32, swap_hidden=16)

__all__ = [
    "LR_SCHEDULES",
    "OPTIMIZERS",
    "CheckpointSettings",
    "CurriculumSettings",
    "EvalSettings",
    "LoggerSettings",
    "OptimSettings",
    "ReplaySettings",
    "SelfPlaySettings",
    "TrainConfig",
]

OPTIMIZERS = ("adam", "sgd")
LR_SCHEDULES = ("constant", "cosine")
LOGGERS = ("tensorboard", "none")
# Caps on the counts a run allocates by: far above any run here, checked before the memory the
# whole run holds (`TrainConfig.memory`) is counted from them.
MAX_GAMES = 65_536  # selfplay.num_games (each actor's, with Ray)
CLOCKS = ("cpu", "wall")  # TrainConfig.clock
MAX_PROCESSES = 1_024  # selfplay.num_workers, selfplay.num_actors
MAX_BATCH = 65_536  # optim.batch_size
MAX_SIMULATIONS = 1_000_000  # mcts.num_simulations, selfplay.cheap_num_simulations
_RAY_RESOURCES = ("CPU", "GPU", "memory", "object_store_memory")  # Ray's own, not custom


def _check(problems: list[str], name: str, ok: bool, wanted: str, value: Any) -> None:
    if not ok:
        problems.append(f"{name} must be {wanted}, got {value!r}")


def _raise(problems: list[str], group: str) -> None:
    """One ValueError naming every bad key of the group by its dotted name."""
    if problems:
        raise ValueError("; ".join(f"{group}.{p}" if group else p for p in problems))


@dataclass(frozen=True)
class SelfPlaySettings:
    """Self-play games (``configs/selfplay/``).

    ``num_games`` games run together in one BatchGame; an iteration plays
    ``moves_per_iteration`` moves in each, so it generates num_games * moves_per_iteration
    positions (fewer when games resign). Moves before ``temperature_moves`` are sampled in
    proportion to the visit counts, later ones take the most visited action.

    Resignation: from move ``resign_min_moves`` on, a player resigns when its root value falls
    below the threshold, except in the share ``resign_playout_fraction`` of games that are
    played out to measure false resignations. The threshold starts at ``resign_threshold``
    (-1 or less: never resign); with ``resign_false_rate`` > 0 the loop then moves it so that
    at most that share of the played-out games' winners fell below it
    (`trapy_rl.train.resign.ResignCalibrator`); 0 keeps it fixed.

    Playout cap randomization (KataGo): with ``full_search_share`` < 1, each move of each game
    gets the full search (``mcts``, with noise) with that probability and is a training
    position; the others get a cheap search of ``cheap_num_simulations`` without noise, are
    played and are not recorded (neither policy nor value target). 1 searches every move in
    full.

    Forced playouts and policy target pruning (KataGo; `trapy_rl.mcts.pruning`): with
    ``forced_playouts`` k > 0, the full searches give each root child that has had a playout
    at least sqrt(k * P(c) * the root's playouts) of them (P with its noise), and the policy
    target is the visit counts with those forced playouts taken back where PUCT would not have
    made them. KataGo's k is 2; 0 (the default) is the plain visit counts. The puct search
    only: the gumbel search's target is its improved policy.

    Swap coins: in the share ``swap_coin_share`` of games, move two's swap decision is a fair
    coin rather than the search's, so that the net trains on both branches of the decision
    even when its self-play settles on one (`SelfPlay._toss_swap_coins`). The position's
    policy target stays the search's.

    Random openings: in the share ``random_opening_share`` of games, the first stone goes on a
    cell drawn uniformly rather than where the search's draw puts it, so that the net trains
    on the games after every opening, not only the few its self-play settles on (the two
    shipped side-10 nets' own draws open on 8 and 23 of the 145 cells, 83% of one's games on
    f9; the opening map asks about all of them). The position's policy target stays the search's.
    With ``random_opening_moves`` k > 1, the share ``random_run_share`` of such games play their
    first j moves at random, j drawn from 1 to k when the game starts: the toolkit's random
    play (`trapy_rl.game.sampling`, the swap taken with probability 1/2), so that the net also
    meets positions no search would reach, as the solved test sets' random positions are; the
    others draw the first stone alone. Each position before a drawn move keeps the search's
    policy target and the game's outcome, as the first.

    Post-swap samples: with ``post_swap_samples``, each game whose swap was declined also
    trains the position after the swap: the position after ``c, swap`` is, in the mover's
    view, the decision after ``c`` with the swap gone (the ``swap_allowed`` plane off), and
    every move from it leads where the same move led in the decision, so the declined game's
    outcome and its search's other moves are that position's targets. Self-play meets the
    position after a swap only where a swap was played, so a net can play its first reply
    there far worse than in the decision itself (the opening map plays from it).
    """

    num_games: int = 32
    moves_per_iteration: int = 16
    num_workers: int = 0  # self-play processes; 0 plays in the training process
    num_actors: int = 0  # Ray actors, each playing num_games games (``ray``); 0 for none
    temperature_moves: int = 12
    resign_threshold: float = -0.9
    resign_playout_fraction: float = 0.2
    resign_min_moves: int = 40
    resign_false_rate: float = 0.05
    full_search_share: float = 1.0  # < 1: playout cap randomization (KataGo)
    cheap_num_simulations: int = 8  # the other moves' search, not recorded
    forced_playouts: float = 0.0  # > 0: KataGo's k (2) of forced playouts and target pruning
    swap_coin_share: float = 0.0  # games whose swap decision is a fair coin
    random_opening_share: float = 0.0  # games whose first stone is on a uniformly drawn cell
    random_opening_moves: int = 1  # a random opening's longest run of drawn moves
    random_run_share: float = 1.0  # random openings that run on (with moves > 1)
    post_swap_samples: bool = False  # declined swaps also train the position after the swap

    def __post_init__(self) -> None:
        p: list[str] = []
        _check(p, "num_games", 1 <= self.num_games <= MAX_GAMES, f"between 1 and {MAX_GAMES:,}",
               self.num_games)  # fmt: skip
        _check(
            p, "moves_per_iteration", self.moves_per_iteration >= 1, ">= 1",
            self.moves_per_iteration,
        )  # fmt: skip
        _check(p, "num_workers", 0 <= self.num_workers <= self.num_games,
               "between 0 and num_games", self.num_workers)  # fmt: skip
        _check(p, "num_actors", 0 <= self.num_actors <= MAX_PROCESSES,
               f"between 0 and {MAX_PROCESSES:,}", self.num_actors)  # fmt: skip
        if self.num_actors and self.num_workers:
            p.append("num_actors and num_workers: choose Ray actors or worker processes")
        _check(p, "temperature_moves", self.temperature_moves >= 0, ">= 0", self.temperature_moves)
        _check(p, "resign_threshold", self.resign_threshold < 1, "< 1 (a root value is in [-1, 1])",
               self.resign_threshold)  # fmt: skip
        _check(p, "resign_playout_fraction", 0 <= self.resign_playout_fraction <= 1,
               "in [0, 1]", self.resign_playout_fraction)  # fmt: skip
        _check(p, "resign_min_moves", self.resign_min_moves >= 0, ">= 0", self.resign_min_moves)
        _check(p, "resign_false_rate", 0 <= self.resign_false_rate < 0.5, "in [0, 0.5)",
               self.resign_false_rate)  # fmt: skip
        _check(p, "full_search_share", 0 < self.full_search_share <= 1, "in (0, 1]",
               self.full_search_share)  # fmt: skip
        _check(p, "cheap_num_simulations", 1 <= self.cheap_num_simulations <= MAX_SIMULATIONS,
               f"between 1 and {MAX_SIMULATIONS:,}", self.cheap_num_simulations)  # fmt: skip
        _check(p, "forced_playouts", 0 <= self.forced_playouts < math.inf,
               "finite and >= 0 (KataGo's k is 2; 0: off)", self.forced_playouts)  # fmt: skip
        _check(p, "swap_coin_share", 0 <= self.swap_coin_share <= 1, "in [0, 1]",
               self.swap_coin_share)  # fmt: skip
        _check(p, "random_opening_share", 0 <= self.random_opening_share <= 1, "in [0, 1]",
               self.random_opening_share)  # fmt: skip
        _check(p, "random_opening_moves", self.random_opening_moves >= 1, ">= 1",
               self.random_opening_moves)  # fmt: skip
        _check(p, "random_run_share", 0 <= self.random_run_share <= 1, "in [0, 1]",
               self.random_run_share)  # fmt: skip
        if self.resign_false_rate > 0 and self.resign_playout_fraction == 0:
            p.append("resign_false_rate needs played-out games: resign_playout_fraction > 0")
        _raise(p, "selfplay")


@dataclass(frozen=True)
class ReplaySettings:
    """The replay window and how much the learner draws from it.

    The learner draws from the newest ``capacity`` positions of the current board. With
    ``growth`` = beta in (0, 1] the window grows with the positions T added so far, as
    KataGo's does (Wu 2019): T up to ``capacity`` = c, then c (1 + beta ((T / c) ** 0.75 - 1)
    / 0.75), at most ``max_capacity`` (`trapy_rl.train.replay.window_size`); KataGo's beta is
    0.4. The window's memory is counted at ``max_capacity`` then, the most its arrays hold
    (each step of growth copies them into larger ones, one array at a time).
    """

    capacity: int = 20_000
    min_size: int = 512
    train_ratio: float = 4.0  # training samples drawn per generated position
    mirror: str = "random"  # none | random | both
    growth: float = 0.0  # beta of a growing window (KataGo: 0.4); 0 keeps it at capacity
    max_capacity: int = 1_000_000  # the most positions a growing window holds

    def __post_init__(self) -> None:
        p: list[str] = []
        _check(p, "capacity", 1 <= self.capacity <= MAX_CAPACITY, f"between 1 and {MAX_CAPACITY:,}",
               self.capacity)  # fmt: skip
        _check(p, "growth", 0 <= self.growth <= 1, "in [0, 1]", self.growth)
        _check(p, "max_capacity", 1 <= self.max_capacity <= MAX_CAPACITY,
               f"between 1 and {MAX_CAPACITY:,}", self.max_capacity)  # fmt: skip
        if self.growth > 0 and self.max_capacity < self.capacity:
            p.append(
                f"max_capacity={self.max_capacity} is below capacity={self.capacity}: a growing "
                "window (growth > 0) starts at capacity and grows up to max_capacity"
            )
        _check(p, "min_size", 0 <= self.min_size <= self.capacity,
               f"between 0 and capacity={self.capacity} (else the run never trains)",
               self.min_size)  # fmt: skip
        _check(p, "train_ratio", self.train_ratio >= 0, ">= 0", self.train_ratio)
        _check(p, "mirror", self.mirror in MIRROR_MODES, f"one of {MIRROR_MODES}", self.mirror)
        _raise(p, "replay")


@dataclass(frozen=True)
class OptimSettings:
    """The optimiser, its learning-rate schedule and the loss weights (``configs/optim/``)."""

    name: str = "adam"  # adam | sgd
    lr: float = 2e-3
    momentum: float = 0.9  # sgd only
    weight_decay: float = 1e-4
    # constant | cosine to 0 over the run (its minutes, else its iterations), after the warm-up.
    # Cosine: side 7's seeds agree at half the CPU they need at a constant rate
    # (docs/experiments/2026-12-07-ablation-side7-half-cap.md).
    lr_schedule: str = "cosine"
    warmup_steps: int = 0
    batch_size: int = 128
    policy_weight: float = 1.0
    value_weight: float = 1.0
    # The value target: (1 - s) z + s q, z the outcome and q the search's root value (both for
    # the player to move); 0 trains on the outcome alone.
    value_q_share: float = 0.0
    ownership_weight: float = 0.0  # > 0: the auxiliary ownership loss (model.ownership_head)
    grad_clip: float = 0.0  # max gradient norm, 0 for none

    def __post_init__(self) -> None:
        p: list[str] = []
        _check(p, "name", self.name in OPTIMIZERS, f"one of {OPTIMIZERS}", self.name)
        _check(p, "lr", self.lr > 0 and math.isfinite(self.lr), "finite and > 0", self.lr)
        _check(p, "lr_schedule", self.lr_schedule in LR_SCHEDULES, f"one of {LR_SCHEDULES}",
               self.lr_schedule)  # fmt: skip
        _check(p, "warmup_steps", self.warmup_steps >= 0, ">= 0", self.warmup_steps)
        _check(p, "batch_size", 1 <= self.batch_size <= MAX_BATCH, f"between 1 and {MAX_BATCH:,}",
               self.batch_size)  # fmt: skip
        _check(p, "value_q_share", 0 <= self.value_q_share <= 1, "in [0, 1]", self.value_q_share)
        weights = ("policy_weight", "value_weight", "ownership_weight")
        for name in ("momentum", "weight_decay", *weights, "grad_clip"):
            value = getattr(self, name)
            _check(p, name, value >= 0 and math.isfinite(value), "finite and >= 0", value)
        _raise(p, "optim")


@dataclass(frozen=True)
class LoggerSettings:
    """Where the run reports (``configs/logger/``)."""

    name: str = "tensorboard"  # tensorboard | none
    progress: bool = True  # a tqdm bar over the iterations (else a log line per iteration)

    def __post_init__(self) -> None:
        p: list[str] = []
        _check(p, "name", self.name in LOGGERS, f"one of {LOGGERS}", self.name)
        _raise(p, "logger")


@dataclass(frozen=True)
class EvalSettings:
    """Matches played by the training run: every ``every`` iterations and once at the end.

    The trained agent searches with the run's ``mcts`` settings, ``num_simulations`` a move and
    no noise; it plays ``num_games`` games against each agent spec of ``opponents`` (see
    `trapy_rl.agents.parse_agent`), each pair of games from a position of the side's start set
    (`trapy_rl.eval.starts`), and ``final_games`` against each of ``final_opponents`` at the
    end (from the start set too, unless the only opponent is random play). With
    ``pool`` (``default``: the pool that ships for the run's side, or a pool file) the
    opponents must be pool members, and the run logs its Elo on the pool's fixed scale
    (``eval/pool_elo``), comparable across runs. With ``truth``, on a side whose exact values
    ship (sides 4 and 5), each evaluation also scores the trained agent and its net alone
    against them (`trapy_rl.eval.truth`: won positions kept, value signs, swap decisions),
    logged as ``truth/search_*`` and ``truth/net_*``.
    """

    every: int = 0  # iterations between evaluations, 0 for none during training
    num_games: int = 20  # per opponent, per evaluation
    num_simulations: int = 200  # the trained agent's search in matches
    opponents: tuple[str, ...] = ("random", "uct:32")
    pool: str | None = None  # rate against this pool's fixed scale: default, a file, or none
    final_games: int = 40  # games of each closing match, 0 to skip them
    final_opponents: tuple[str, ...] = ("random", "uct:1000")  # the closing matches' opponents
    truth: bool = True  # score against the exact values where the side is solved

    def __post_init__(self) -> None:
        object.__setattr__(self, "opponents", tuple(str(s) for s in self.opponents))
        object.__setattr__(self, "final_opponents", tuple(str(s) for s in self.final_opponents))
        p: list[str] = []
        _check(p, "every", self.every >= 0, ">= 0", self.every)
        _check(p, "num_games", 1 <= self.num_games <= MAX_GAMES, f"between 1 and {MAX_GAMES:,}",
               self.num_games)  # fmt: skip
        _check(p, "num_simulations", self.num_simulations >= 1, ">= 1", self.num_simulations)
        _check(p, "final_games", self.final_games >= 0, ">= 0", self.final_games)
        _check(p, "final_opponents", len(self.final_opponents) >= 1, "at least one agent spec",
               self.final_opponents)  # fmt: skip
        _raise(p, "eval")


@dataclass(frozen=True)
class RaySettings:
    """Where Ray runs when ``selfplay.num_actors`` > 0 (`trapy_rl.train.ray_selfplay`).

    ``address`` null starts a Ray instance on this machine with ``num_cpus`` CPUs (null: all),
    ``auto`` joins the cluster this machine belongs to (``ray start``), or ``ray://host:port``.
    Each actor keeps at most ``max_in_flight`` play requests queued: the bound on the chunks
    of positions waiting for the learner, and what lets self-play run while the learner learns.
    With ``actor_resource`` each actor also takes one unit of that custom resource, so actors
    go only to the nodes that offer it (``ray start --resources='{"selfplay": 8}'``: at most 8
    actors there); a Ray this backend starts offers it on its one node. With
    ``inference_device`` the actors' searches send their leaves to one inference server on
    that device, which evaluates the leaves of all actors in one net call
    (`trapy_rl.train.inference`); null: each actor runs its own net on its CPU.
    """

    address: str | None = None
    num_cpus: int | None = None
    max_in_flight: int = 2
    actor_resource: str | None = None  # a custom node resource; null: any node with a free CPU
    inference_device: str | None = None  # auto | cpu | cuda[:i]; null: no inference server

    def __post_init__(self) -> None:
        p: list[str] = []
        _check(p, "num_cpus", self.num_cpus is None or self.num_cpus >= 1, ">= 1 or null",
               self.num_cpus)  # fmt: skip
        _check(p, "max_in_flight", self.max_in_flight >= 1, ">= 1", self.max_in_flight)
        _check(p, "actor_resource", self.actor_resource is None or _is_custom_resource(
            self.actor_resource), "a custom resource's name (not CPU, GPU or memory) or null",
            self.actor_resource)  # fmt: skip
        _check(p, "inference_device", self.inference_device is None or _is_device(
            self.inference_device), f"{DEVICES} or null", self.inference_device)  # fmt: skip
        _raise(p, "ray")


@dataclass(frozen=True)
class CheckpointSettings:
    """How often the run saves itself, and what the checkpoints hold."""

    every: int = 10  # iterations between checkpoints (one is always written at the end)
    keep: int = 3  # numbered checkpoints kept, the newest; 0 keeps all
    replay: bool = True  # include the replay window (needed to resume identically)

    def __post_init__(self) -> None:
        p: list[str] = []
        _check(p, "every", self.every >= 0, ">= 0", self.every)
        _check(p, "keep", self.keep >= 0, ">= 0", self.keep)
        _raise(p, "checkpoint")


@dataclass(frozen=True)
class CurriculumSettings:
    """A board-size curriculum (``configs/curriculum/``): the net is fully convolutional, so
    one set of weights learns on small boards first and on the run's own ``side`` after.

    Side ``sides[i]`` is played until iteration ``until[i]``, or, with ``until_minutes``
    instead, until the training clock reaches ``until_minutes[i]`` minutes (an iteration
    plays the side of the clock at its start; the bounds increasing). A run limited by
    ``minutes`` reaches its own side at the same point of its clock on a fast machine and a
    slow one. The run's ``side`` is played from the last bound on; a stage whose side is not
    smaller than the run's is skipped (a curriculum climbs to the run's board, so ``side=5``
    with the default curriculum trains on side 5 throughout). At each change self-play
    starts new games and the replay window starts empty (its positions do not fit the new
    board); the net and the optimiser carry over. A run that ends (out of minutes or
    iterations) before its last stage moves to its own side for the last checkpoint and the
    closing matches. Empty: the run's side throughout.
    """

    sides: tuple[int, ...] = ()
    until: tuple[int, ...] = ()
    until_minutes: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "sides", tuple(int(s) for s in self.sides))
        object.__setattr__(self, "until", tuple(int(i) for i in self.until))
        object.__setattr__(self, "until_minutes", tuple(float(m) for m in self.until_minutes))
        p: list[str] = []
        name, bounds = ("until_minutes", self.until_minutes) if self.until_minutes else (
            "until", self.until)  # fmt: skip
        _check(p, "until_minutes", not (self.until and self.until_minutes),
               "empty when until is given (one or the other)", self.until_minutes)  # fmt: skip
        _check(p, name, len(bounds) == len(self.sides), "one bound per side", bounds)
        _check(p, name, list(bounds) == sorted(set(bounds)) and all(b > 0 for b in bounds),
               "increasing and > 0", bounds)  # fmt: skip
        _check(p, "sides", all(2 <= s <= MAX_SIDE for s in self.sides), f"between 2 and {MAX_SIDE}",
               self.sides)  # fmt: skip
        _raise(p, "curriculum")

    def side_at(self, iteration: int, final_side: int, minutes: float = 0.0) -> int:
        """The side played at ``iteration`` (0-based), which begins after ``minutes`` of
        training clock, in a run whose own side is ``final_side``."""
        now, bounds = (minutes, self.until_minutes) if self.until_minutes else (
            iteration, self.until)  # fmt: skip
        for side, until in zip(self.sides, bounds):
            if now < until and side < final_side:
                return side
        return final_side

    def stage_sides(self, final_side: int) -> tuple[int, ...]:
        """The sides a run of side ``final_side`` plays before its own (in order)."""
        return tuple(side for side in self.sides if side < final_side)


@dataclass(frozen=True)
class TrainConfig:
    """A whole training run (``configs/train.yaml``); see `trapy_rl.train.train`."""

    side: int = 10
    seed: int = 0
    iterations: int = 100_000
    minutes: float = 8.0  # > 0: also stop once the training clock reaches this many minutes
    # The training clock that ``minutes`` and the curriculum's ``until_minutes`` count: "cpu",
    # this process's CPU time (all its threads), which a machine slowed by other jobs does not
    # shorten, so a budget gives the same run on a loaded machine; or "wall", seconds of the
    # clock on the wall (the one for a GPU, self-play workers or Ray actors, whose work this
    # process's CPU time does not count).
    clock: str = "cpu"
    device: str = "cpu"
    bf16: bool = False
    compile: bool = False  # self-play's net through torch.compile (`NetEvaluator`)
    onnxruntime: bool = False  # self-play's net by ONNX Runtime (`NetEvaluator`; CPU)
    threads: int = 1  # torch CPU threads (1 is fastest for small nets), 0 for torch's default
    # The most memory the run may hold, as `memory` counts it (GiB): a bound a setting cannot
    # pass by mistake; raise it where the machine has the memory.
    memory_gb: float = 2.0
    run_dir: str | None = None  # where outputs go; the command line sets Hydra's folder
    resume: str | None = None  # a checkpoint file or a run folder to continue
    # model, mcts and curriculum differ from their classes' defaults: they are the default
    # run's group options (configs/train.yaml's defaults list), a test holds them equal.
    model: NetConfig = field(default_factory=lambda: TINY_NET)  # configs/model/tiny.yaml
    # Self-play's search: fewer simulations than an agent's default, many more games.
    mcts: SearchSettings = field(default_factory=lambda: SearchSettings(num_simulations=32))
    selfplay: SelfPlaySettings = field(default_factory=SelfPlaySettings)
    replay: ReplaySettings = field(default_factory=ReplaySettings)
    optim: OptimSettings = field(default_factory=OptimSettings)
    logger: LoggerSettings = field(default_factory=LoggerSettings)
    eval: EvalSettings = field(default_factory=EvalSettings)
    checkpoint: CheckpointSettings = field(default_factory=CheckpointSettings)
    # configs/curriculum/short.yaml: sides 5 and 7 first (BENCHMARKS.md, the default run)
    curriculum: CurriculumSettings = field(
        default_factory=lambda: CurriculumSettings(sides=(5, 7), until_minutes=(3.0, 6.0))
    )
    ray: RaySettings = field(default_factory=RaySettings)

    def __post_init__(self) -> None:
        p: list[str] = []
        _check(p, "side", 2 <= self.side <= MAX_SIDE, f"between 2 and {MAX_SIDE}", self.side)
        _check(p, "seed", self.seed >= 0, ">= 0", self.seed)
        _check(p, "iterations", self.iterations >= 0, ">= 0", self.iterations)
        _check(p, "minutes", self.minutes >= 0 and math.isfinite(self.minutes), "finite and >= 0",
               self.minutes)  # fmt: skip
        _check(p, "clock", self.clock in CLOCKS, " or ".join(CLOCKS), self.clock)
        timed = self.minutes > 0 or bool(self.curriculum.until_minutes)
        elsewhere = self.selfplay.num_workers or self.selfplay.num_actors  # other processes
        if timed and self.clock == "cpu" and elsewhere:
            p.append(
                "clock=cpu counts this process's CPU time, not its self-play workers' or actors': "
                "set clock=wall with selfplay.num_workers or selfplay.num_actors"
            )
        _check(p, "threads", 0 <= self.threads <= MAX_PROCESSES, f"between 0 and {MAX_PROCESSES}",
               self.threads)  # fmt: skip
        _check(p, "device", _is_device(self.device), DEVICES, self.device)
        _check(p, "memory_gb", self.memory_gb > 0 and math.isfinite(self.memory_gb),
               "finite and > 0", self.memory_gb)  # fmt: skip
        _check(p, "mcts.num_simulations", self.mcts.num_simulations <= MAX_SIMULATIONS,
               f"at most {MAX_SIMULATIONS:,}", self.mcts.num_simulations)  # fmt: skip
        _raise(p, "")
        p += _contradictions(self)
        _raise(p, "")
        memory = self.memory()
        if sum(memory.values()) > self.memory_gb * 2**30:
            parts = ", ".join(f"{name} {_gib(size)}" for name, size in memory.items())
            raise ValueError(
                f"the run would hold about {_gib(sum(memory.values()))} ({parts}), above "
                f"memory_gb={self.memory_gb:g}: lower the largest, or raise memory_gb where the "
                "machine has the memory"
            )

    def memory(self) -> dict[str, int]:
        """What the run holds in memory on its largest board, in bytes, by the setting that
        sizes it, counted from the checked sizes before anything is allocated.

        ``model``: the net's weights, its gradients and the optimiser's moments, the evaluator's
        folded copy; ``replay.capacity``: the replay window (`replay_bytes`), or
        ``replay.max_capacity``, the most it grows to, with ``replay.growth``;
        ``selfplay.num_games``: the games in progress (their positions and search targets, each
        ply of the longest game) and their search trees (``mcts.num_simulations`` + 1 nodes of
        A edges); ``optim.batch_size``: a training batch, and on the CPU the activations kept
        for the backward pass.
        """
        board = Board(self.side)
        cells, actions = board.num_cells, board.num_actions
        height, width = board.grid_shape
        point_bytes = 4 * height * width  # one float32 feature map
        moments = 2 if self.optim.name == "adam" else 1
        local_games = self.selfplay.num_games * (
            self.selfplay.num_actors if self.selfplay.num_actors and not self.ray.address else 1
        )
        # SelfPlay's history of a game: planes, policy, root value, player
        ply_bytes = NUM_PLANES * point_bytes + 4 * actions + 4 + 1
        tree_bytes = (self.mcts.num_simulations + 1) * _tree_node_bytes(actions)
        batch = self.optim.batch_size * (2 if self.replay.mirror == "both" else 1)
        window, slots = ("replay.capacity", self.replay.capacity)
        if self.replay.growth > 0:  # the most a growing window holds
            window, slots = ("replay.max_capacity", self.replay.max_capacity)
        activations = 0
        if self.device == "cpu":  # elsewhere they live on the device, not in this machine's RAM
            activations = self.model.channels * point_bytes * (8 * self.model.blocks + 8)
        return {
            "model": 4 * self.model.num_weights() * (3 + moments),
            window: replay_bytes(board, slots),
            "selfplay.num_games": local_games * ((cells + 1) * ply_bytes + tree_bytes),
            "optim.batch_size": batch * (NUM_PLANES * point_bytes + 4 * actions + activations),
        }

    def net_options(self) -> dict[str, bool]:
        """`NetEvaluator`'s options for self-play's net, wherever it runs."""
        return {"compile": self.compile, "onnxruntime": self.onnxruntime}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TrainConfig:
        """Build from plain nested dicts (missing keys take their defaults).

        Raises:
            ValueError: naming the key, for an unknown key or a bad value.
        """
        return settings_from_dict(cls, data)

    def to_dict(self) -> dict[str, Any]:
        """Plain nested dicts and lists (for YAML, checkpoints and `from_dict`)."""
        return _plain(dataclasses.asdict(self))

    def replace(self, changes: Mapping[str, Any]) -> TrainConfig:
        """A copy with ``changes``, keyed by dotted names (``{"mcts.num_simulations": 8}``)."""
        data = self.to_dict()
        for key, value in changes.items():
            *parents, last = key.split(".")
            target = data
            for part in parents:
                if not isinstance(target.get(part), dict):
                    raise ValueError(f"{key}: {part!r} is not a settings group")
                target = target[part]
            if last not in target:
                raise ValueError(f"{key}: unknown setting {last!r}")
            target[last] = value
        return self.from_dict(data)


@functools.cache
def _tree_node_bytes(actions: int) -> int:
    """The bytes one node of a search tree holds with ``actions`` edges: what a tree of two
    nodes holds more than a tree of one (so the count follows `Tree`'s arrays)."""
    sizes = [
        sum(a.nbytes for a in vars(Tree(1, actions, nodes)).values() if isinstance(a, np.ndarray))
        for nodes in (1, 2)
    ]
    return sizes[1] - sizes[0]


def _is_device(device: str) -> bool:
    try:
        check_device(device)
    except ValueError:
        return False
    return True


def _is_custom_resource(name: str) -> bool:
    """A name Ray takes for a custom resource: not one of its own, no spaces or quotes."""
    return bool(re.fullmatch(r"[A-Za-z_][\w.\-]*", name)) and name not in _RAY_RESOURCES


def _gib(size: int) -> str:
    return f"{size / 2**30:.2f} GiB" if size >= 2**27 else f"{size / 2**20:.0f} MiB"


def _contradictions(cfg: TrainConfig) -> list[str]:
    """The pairs of settings that do not work together, each naming both keys."""
    p = []
    replay, batch = cfg.replay, cfg.optim.batch_size
    if replay.min_size < batch:
        p.append(
            f"replay.min_size={replay.min_size} is below optim.batch_size={batch}: the first "
            "batches would repeat a few positions (replay.capacity >= replay.min_size >= "
            "optim.batch_size)"
        )
    if cfg.optim.ownership_weight > 0 and not cfg.model.ownership_head:
        p.append("optim.ownership_weight > 0 needs a net with model.ownership_head=true")
    if cfg.onnxruntime and (cfg.device != "cpu" or cfg.bf16 or cfg.compile):
        p.append("onnxruntime=true runs on the CPU in fp32: device=cpu, no bf16 or compile")
    if (cfg.ray.address or cfg.ray.num_cpus) and not cfg.selfplay.num_actors:
        p.append("ray.address and ray.num_cpus need Ray actors: selfplay.num_actors > 0")
    if (cfg.ray.actor_resource or cfg.ray.inference_device) and not cfg.selfplay.num_actors:
        p.append(
            "ray.actor_resource and ray.inference_device need Ray actors: selfplay.num_actors > 0"
        )
    if cfg.selfplay.forced_playouts > 0 and cfg.mcts.search != "puct":
        p.append(
            "selfplay.forced_playouts > 0 needs mcts.search=puct: the gumbel search trains on "
            "its improved policy, not on visit counts"
        )
    if cfg.eval.pool and not cfg.eval.every:
        p.append("eval.pool rates the periodic matches: it needs eval.every > 0")
    return p


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
