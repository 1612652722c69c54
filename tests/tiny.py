"""The smallest nets and checkpoints the tests train, load and play with (one copy for all)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import torch

from trapy_rl.nn import NetConfig, PolicyValueNet
from trapy_rl.train.checkpoint import save_checkpoint, write_run_checkpoint

TINY_NET = NetConfig(channels=16, blocks=1, policy_channels=8, value_hidden=16, swap_hidden=8)


def tiny_payload(*, side: int, seed: int = 0, iteration: int = 0, step: int = 0) -> dict:
    """A checkpoint payload holding a freshly initialised `TINY_NET` (seeded by ``seed``)."""
    torch.manual_seed(seed)
    net = PolicyValueNet(TINY_NET)
    return {
        "side": side,
        "model": {"config": TINY_NET.to_dict(), "state": net.state_dict()},
        "counters": {"iteration": iteration},
        "learner": {"step": step},
    }


def write_tiny_checkpoint(
    path: str | Path, *, side: int, seed: int = 0, iteration: int = 0, step: int = 0
) -> Path:
    """Save a `tiny_payload` checkpoint at ``path``; returns the path."""
    return save_checkpoint(path, tiny_payload(side=side, seed=seed, iteration=iteration, step=step))


def write_tiny_run_checkpoint(
    run: str | Path,
    iteration: int,
    *,
    side: int,
    seed: int | None = None,
    step: int | None = None,
) -> Path:
    """Add ``checkpoints/ckpt_<iteration>.pt`` (and ``latest.pt``) to the run folder ``run``.

    ``seed`` and ``step`` default to ``iteration``: each checkpoint of a run holds other weights.
    """
    payload = tiny_payload(
        side=side,
        seed=iteration if seed is None else seed,
        iteration=iteration,
        step=iteration if step is None else step,
    )
    return write_run_checkpoint(Path(run) / "checkpoints", iteration, payload)


def seeded_tiny_net(seed: int = 0) -> PolicyValueNet:
    """A `TINY_NET` with the weights of ``torch.manual_seed(seed)``: the same net every call."""
    torch.manual_seed(seed)
    return PolicyValueNet(TINY_NET)


@contextlib.contextmanager
def loopback_ray(num_cpus: int):
    """A local Ray of ``num_cpus`` logical CPUs on the loopback address only, shut at exit."""
    import ray  # the ray extra, imported by the tests that need it

    os.environ.setdefault("RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO", "0")
    ray.init(
        address="local",  # its own, even while another test's cluster runs on this machine
        num_cpus=num_cpus,
        include_dashboard=False,
        configure_logging=False,
        log_to_driver=False,
        _node_ip_address="127.0.0.1",  # the loopback address only
    )
    try:
        yield
    finally:
        ray.shutdown()
