"""Agents played by a trained net: the policy alone (``net:PATH``), or the net guiding search
(``mcts:PATH:SIMULATIONS``, or ``onnx:MODEL.onnx:SIMULATIONS`` with an exported net).

Specs (see `trapy_rl.agents.base` for the grammar)::

    net:PATH                          the net's most probable legal move (temperature 0)
    net:PATH,temperature=1            a move sampled from softmax(logits / temperature)
    mcts:PATH:400                     PUCT search, 400 simulations a move, the most visited move
    mcts:PATH:400,c_puct=2,device=cpu
    mcts:PATH:800,leaves=16           16 leaves a net call (a search of one game does so anyway)
    mcts:PATH:800,virtual=loss        the pending leaves of a call count as lost visits (the
                                      default, visits, suits the net's values; uct's is loss)
    onnx:model.onnx:400               the same search with a `trapy-export` model under ONNX
                                      Runtime (no torch import; options as mcts but device/bf16)

``PATH`` is a checkpoint file or a run folder (its ``checkpoints/latest.pt``), as
`trapy_rl.nn.checkpoint.find_checkpoint` reads it; it may contain ``:``. Both kinds take
``device=auto|cpu|cuda[:i]`` (default auto), ``bf16=false|true|auto`` and
``onnxruntime=auto|true|false`` (default auto: the net runs under ONNX Runtime where the
``[onnx]`` extra is installed and it runs on the CPU in fp32, `NetEvaluator`). A missing, corrupt or
foreign file raises `CheckpointError` (a ValueError) naming the file, and so does a net trained
on another board side than the one asked for.

Shapes: B games in the batch, n games to move, A actions.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from trapy_rl.agents.base import AgentSpec, quote_arg
from trapy_rl.agents.search import (
    SearchAgent,
    spec_agent_options,
    spec_search_defaults,
    spec_search_settings,
)
from trapy_rl.game.batch import BatchGame
from trapy_rl.game.board import Board
from trapy_rl.mcts.policies import select_actions
from trapy_rl.mcts.settings import SearchSettings

__all__ = [
    "NetworkMCTSAgent",
    "NetworkPolicyAgent",
    "checkpoint_file",
    "checkpoint_spec",
    "load_evaluator",
]

NETWORK_KINDS = ("net", "mcts", "onnx")
_LOADED_LIMIT = 8
_LOADED: dict[tuple, tuple] = {}  # least recently used first
_LOADED_LOCK = threading.Lock()  # threads asking for one file at once share one read of it


class NetworkPolicyAgent:
    """Plays from the net's policy alone: the most probable legal action, or a sample.

    Args:
        evaluator: ``(batch, games) -> (logits [n, A] float32, values [n])`` with illegal
            actions at ``-inf``, e.g. `trapy_rl.nn.NetEvaluator`.
        temperature: 0 plays the highest logit (ties broken at random); T > 0 samples from
            softmax(logits / T).
        seed: seeds the sampling and tie-breaking (None: fresh entropy).
        name: the label in tables and records (default 'net').
        checkpoint_path: the file the net came from, if any (for result caches).
    """

    def __init__(
        self,
        evaluator,
        *,
        temperature: float = 0.0,
        seed: int | None = None,
        name: str | None = None,
        checkpoint_path: str | Path | None = None,
    ) -> None:
        if not callable(evaluator):
            raise TypeError(f"evaluator must be callable, got {type(evaluator).__name__}")
        if not np.isfinite(temperature) or temperature < 0:
            raise ValueError(f"temperature must be finite and >= 0, got {temperature}")
        self.evaluator = evaluator
        self.temperature = float(temperature)
        self.rng = np.random.default_rng(seed)
        self.name = name or "net"
        self.checkpoint_path = None if checkpoint_path is None else Path(checkpoint_path)

    def act(self, batch: BatchGame, games: np.ndarray) -> np.ndarray:
        """[n] int64: one action from the net's policy for each of ``games`` [n] int."""
        games = np.asarray(games, dtype=np.intp)
        if len(games) == 0:
            return np.zeros(0, dtype=np.int64)
        logits, _ = self.evaluator(batch, games)
        logits = np.asarray(logits, dtype=np.float64)  # [n, A]
        legal = batch.legal_mask()[games]
        logits = np.where(legal, logits, -np.inf)
        if self.temperature == 0.0:
            best = logits == logits.max(axis=1, keepdims=True)  # [n, A] bool, ties kept
            return select_actions(best.astype(np.float64), 0.0, self.rng)
        scaled = logits / self.temperature
        scaled -= scaled.max(axis=1, keepdims=True)
        weights = np.exp(scaled)  # [n, A], 0 at illegal actions
        weights /= weights.sum(axis=1, keepdims=True)
        # Inverse-CDF sampling, one uniform per game.
        cumulative = np.cumsum(weights, axis=1)
        draws = self.rng.random(len(games))[:, None] * cumulative[:, -1:]
        actions = (cumulative <= draws).sum(axis=1)
        # Rounding can land on a zero-weight action at the end: fall back to the last legal one.
        last_legal = legal.shape[1] - 1 - np.argmax(legal[:, ::-1], axis=1)
        actions = np.minimum(actions, last_legal)
        return actions.astype(np.int64)

    def __repr__(self) -> str:
        return f"NetworkPolicyAgent(temperature={self.temperature}, name={self.name!r})"


class NetworkMCTSAgent(SearchAgent):
    """A net guiding the search; plays its choice (`SearchAgent`: a fresh tree a move).

    Args:
        evaluator: ``(batch, games) -> (logits [n, A], values [n])``, e.g. `NetEvaluator(net)`.
        settings: the search (simulations a move, c_puct, first-play urgency).
        seed: seeds tie-breaking between equally visited actions, and the noise.
        name: the label in tables and records (default 'net+mcts:SIMULATIONS').
        checkpoint_path: the file the net came from, if any (for result caches).
        noise: search with self-play's root noise, so that games vary (`SearchAgent`).
        temperature_moves: the moves of a game drawn in proportion to the visits
            (`SearchAgent`; 0: none).
    """

    def __init__(
        self,
        evaluator,
        *,
        settings: SearchSettings | None = None,
        seed: int | None = None,
        name: str | None = None,
        checkpoint_path: str | Path | None = None,
        noise: bool = False,
        temperature_moves: int = 0,
    ) -> None:
        settings = settings or SearchSettings()
        super().__init__(
            evaluator,
            settings=settings,
            seed=seed,
            name=name or f"net+mcts:{settings.num_simulations}",
            noise=noise,
            temperature_moves=temperature_moves,
        )
        self.checkpoint_path = None if checkpoint_path is None else Path(checkpoint_path)


def load_evaluator(
    path: str | Path,
    *,
    board: Board,
    device: str = "auto",
    bf16: bool | str = False,
    onnxruntime: bool | str = "auto",
):
    """The net of a checkpoint file or run folder, wrapped as a `NetEvaluator` for ``board``.

    ``onnxruntime`` as in `NetEvaluator` ("auto": ONNX Runtime wherever it can run, the fastest
    for the small batches of a search). The last few evaluators are kept and shared (keyed by
    the file, its size and modification time, the device, bf16 and onnxruntime), so a
    tournament does not read a checkpoint for every match; threads asking at once share one
    read.
    Agents only run the net in inference mode; do not train a net obtained here.

    Returns:
        (evaluator, info): `trapy_rl.nn.NetEvaluator` and `load_network`'s info dict (``path``,
        ``side``, ``iteration``, ``step``, ...).

    Raises:
        CheckpointError: naming the file, when it is missing, unreadable, or for another side.
        ValueError: for an unknown device.
    """
    # torch only when a net is loaded: the onnx kind plays where torch is not installed
    from trapy_rl.nn import NetEvaluator, resolve_device
    from trapy_rl.nn.checkpoint import CheckpointError, find_checkpoint, load_network

    resolved = resolve_device(device)
    file = find_checkpoint(path)
    stat = file.stat()
    key = (str(file.resolve()), stat.st_size, stat.st_mtime_ns, str(resolved), bf16, onnxruntime)
    with _LOADED_LOCK:
        loaded = _LOADED.pop(key, None)
        if loaded is None:
            net, info = load_network(file, device=resolved)
            evaluator = NetEvaluator(net, device=resolved, bf16=bf16, onnxruntime=onnxruntime)
            loaded = (evaluator, info)
        _LOADED[key] = loaded  # the most recently used last
        while len(_LOADED) > _LOADED_LIMIT:
            _LOADED.pop(next(iter(_LOADED)))
    evaluator, info = loaded
    if info["side"] != board.side:
        raise CheckpointError(
            f"{info['path']}: the net was trained on the side-{info['side']} board, but the "
            f"games are on side {board.side}"
        )
    return evaluator, dict(info)


def checkpoint_spec(path: str | Path, *, num_simulations: int, device: str = "auto") -> str:
    """The spec of a checkpoint's agent: ``mcts:PATH:N,device=D``, or ``net:PATH,device=D``
    for ``num_simulations=0`` (its policy alone), the path quoted where it holds ``,``, ``:``
    or quotes (`quote_arg`), so any path travels. Specs name agents in tournaments and caches.

    Raises:
        ValueError: for negative simulations.
    """
    if num_simulations < 0:
        raise ValueError(f"num_simulations must be >= 0, got {num_simulations}")
    text = quote_arg(str(path))
    spec = f"mcts:{text}:{num_simulations}" if num_simulations > 0 else f"net:{text}"
    return f"{spec},device={device}"


def checkpoint_file(spec: str | AgentSpec) -> Path | None:
    """The checkpoint file a ``net:`` or ``mcts:`` spec plays from; None for other kinds.

    Raises:
        CheckpointError: when the spec names no existing file or run folder.
        ValueError: for a network spec without a path.
    """
    from trapy_rl.nn.checkpoint import find_checkpoint  # torch: as in load_evaluator

    parsed = spec if isinstance(spec, AgentSpec) else AgentSpec.parse(spec)
    if parsed.kind not in NETWORK_KINDS:
        return None
    path, _ = _path_and_simulations(parsed)
    if parsed.kind == "onnx":
        if not Path(path).is_file():
            raise ValueError(f"{path}: no such ONNX model file")
        return Path(path)
    return find_checkpoint(path)


def _path_and_simulations(spec: AgentSpec) -> tuple[str, int | None]:
    """``PATH`` and, for ``mcts``, the simulations (a trailing all-digit argument)."""
    if spec.kind == "net":
        spec.check_args(1, 10**6, "'net:PATH' (options: temperature=T, device=D, bf16=B, ...)")
        path, simulations = spec.rest(0), None
    else:
        usage = f"'{spec.kind}:PATH:SIMULATIONS' (options: c_puct=C, fpu_reduction=F, ...)"
        spec.check_args(1, 10**6, usage)
        path, simulations = spec.rest(0), SearchSettings().num_simulations
        if len(spec.args) > 1 and spec.args[-1].isdigit():
            path, simulations = ":".join(spec.args[:-1]), int(spec.args[-1])
    if not path:
        raise ValueError(f"agent spec {spec.text!r}: the checkpoint path is empty")
    return path, simulations


def _auto_option(spec: AgentSpec, options: dict, name: str, default: str) -> bool | str:
    """The option ``name`` (bf16, onnxruntime): True, False or "auto"."""
    value = options.get(name, default)
    lowered = value.lower()
    if lowered == "auto":
        return "auto"
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"agent spec {spec.text!r}: {name}={value!r} is not true, false or auto")


def _net_options(spec: AgentSpec, options: dict) -> dict:
    """`load_evaluator`'s keywords from a spec's options."""
    return {
        "device": options.get("device", "auto"),
        "bf16": _auto_option(spec, options, "bf16", "false"),
        "onnxruntime": _auto_option(spec, options, "onnxruntime", "auto"),
    }


_NET_DEFAULTS = {"device": "auto", "bf16": "false", "onnxruntime": "auto"}
NET_USAGE = "net:PATH[,temperature=T][,device=D][,bf16=B][,onnxruntime=O]"
MCTS_USAGE = (
    "mcts:PATH:SIMULATIONS[,c_puct=C][,search=S][,leaves=L][,virtual=V][,noise=N]"
    "[,temperature_moves=K][,device=D][,bf16=B][,onnxruntime=O]"
)
ONNX_USAGE = (
    "onnx:MODEL.onnx:SIMULATIONS[,c_puct=C][,search=S][,leaves=L][,virtual=V][,noise=N]"
    "[,temperature_moves=K]"
)


def net_from_spec(spec: AgentSpec, *, board: Board, seed: int | None) -> NetworkPolicyAgent:
    path, _ = _path_and_simulations(spec)
    options = spec.typed_options({"temperature": 0.0, **_NET_DEFAULTS})
    evaluator, info = load_evaluator(path, board=board, **_net_options(spec, options))
    try:
        return NetworkPolicyAgent(
            evaluator,
            temperature=options.get("temperature", 0.0),
            seed=seed,
            name=spec.text,
            checkpoint_path=info["path"],
        )
    except ValueError as error:
        raise ValueError(f"agent spec {spec.text!r}: {error}") from None


def mcts_from_spec(spec: AgentSpec, *, board: Board, seed: int | None) -> NetworkMCTSAgent:
    path, simulations = _path_and_simulations(spec)
    options = spec.typed_options({**spec_search_defaults(), **_NET_DEFAULTS})
    settings = spec_search_settings(spec, options, simulations)
    evaluator, info = load_evaluator(path, board=board, **_net_options(spec, options))
    return NetworkMCTSAgent(
        evaluator,
        settings=settings,
        seed=seed,
        name=spec.text,
        checkpoint_path=info["path"],
        **spec_agent_options(options),
    )


def onnx_from_spec(spec: AgentSpec, *, board: Board, seed: int | None) -> NetworkMCTSAgent:
    from trapy_rl.nn.onnx import OnnxEvaluator  # the onnx extra: only for this kind

    path, simulations = _path_and_simulations(spec)
    options = spec.typed_options(spec_search_defaults())
    settings = spec_search_settings(spec, options, simulations)
    evaluator = OnnxEvaluator(path)
    if evaluator.side != board.side:
        raise ValueError(
            f"{path}: exported for the side-{evaluator.side} board, but the games are on side "
            f"{board.side}"
        )
    return NetworkMCTSAgent(
        evaluator,
        settings=settings,
        seed=seed,
        name=spec.text,
        checkpoint_path=str(path),
        **spec_agent_options(options),
    )
