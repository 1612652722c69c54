"""The batched search against DeepMind's mctx and the batch engine against pgx, in one run.

    python -m benchmarks.peers.mctx_pgx                 # from the repository's root: the full
                                                        # comparison, a few minutes
    python -m benchmarks.peers.mctx_pgx --quick         # small sizes, to check that it runs
    python -m benchmarks.peers.mctx_pgx --json out.json

Needs the ``peers`` extra (``pip install 'trapy-rl[peers]'``: mctx, pgx and a CPU jax). Three
comparisons, ours and the peer alternating round after round so both see the same machine,
each figure the median of the rounds:

(a) **Search overhead.** A uniform evaluator (uniform prior over the legal actions, value 0)
    on 256 games, 64 simulations a move from positions 10 random moves in, fresh trees:
    simulations per second of our `trapy_rl.mcts.MCTS` (compiled, one leaf a game: B > 1) on
    side 10 (145 cells, 146 actions) against mctx's batched PUCT (``mctx.muzero_policy``, the
    one call jitted, compilation not timed) on pgx's Hex (11x11 = 121 cells, 122 actions),
    its recurrent function stepping the pgx states as pgx's AlphaZero example does. Bar:
    ours at least 8x mctx.
(b) **Random play.** 4,096 games from the empty board to their ends, uniform random legal
    moves, placed stones per second: our `trapy_rl.game.BatchGame` (numpy, the random
    baseline's sampler, `benchmarks.env`) against pgx's Hex stepped by
    ``jax.jit(jax.vmap(env.step))`` with the random action drawn inside the same jitted call.
    Bar: ours at least 4x pgx.
(c) **How close to the machine's limit**, rough figures: the shipped net's evaluation in
    FLOPs a second (its multiply-adds a position, counted from its layers, times positions a
    second, times 2) against one core's measured fp32 matrix-multiply rate (torch, one thread,
    1024x1024 matrices), and each engine's memory traffic against the machine's measured copy
    bandwidth (numpy, one thread, 256 MiB): a step that read and wrote a game's whole state
    once would move 2 x the state's bytes a move; pgx's functional step does rebuild the
    whole state (no buffer donation), ours updates a few cells in place, so for ours the
    figure is an upper bound of its traffic. Far below the limit means the engine is bound by
    something else: per-call dispatch, index arithmetic, latency of scattered reads.

The whole process runs on one core (``sched_setaffinity``; ``--cores all`` lifts it): our
search and engine use one, and XLA would otherwise spread its work over every core.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from benchmarks.env import _play_batch
from benchmarks.search import opening_positions
from trapy_rl.game import BatchGame
from trapy_rl.mcts import MCTS, SearchSettings
from trapy_rl.nn import NetEvaluator
from trapy_rl.nn.checkpoint import load_network
from trapy_rl.nn.evaluator import UniformEvaluator
from trapy_rl.pretrained import pretrained_file
from trapy_rl.provenance import machine

GAMES_SEARCH = 256
GAMES_PLAY = 4096
SIMULATIONS = 64
PLIES = 10  # random moves before the searched positions
PGX_HEX_SIDE = 11  # pgx's "hex": 11x11 cells and the swap


def _median_pair(ours: Callable[[int], float], theirs: Callable[[int], float], rounds: int):
    """Alternate ``ours(r)`` and ``theirs(r)`` for ``rounds`` rounds: their medians."""
    a, b = [], []
    for r in range(rounds):
        a.append(ours(r))
        b.append(theirs(r))
    return statistics.median(a), statistics.median(b), a, b


# ---------------------------------------------------------------------------- (a) search
def our_search_rate(num_games: int, num_simulations: int) -> Callable[[int], float]:
    """A round of our search: ``num_games`` fresh trees, simulations per second (wall)."""
    batch = opening_positions(num_games, plies=PLIES, seed=num_games)
    settings = SearchSettings(num_simulations=num_simulations)
    search = MCTS(UniformEvaluator(), batch.board, num_games=num_games, settings=settings)
    search.search(batch)  # warm-up: compiled kernels, allocation

    def measure(_: int) -> float:
        search.reset()
        start = time.perf_counter()
        search.search(batch)
        return num_games * num_simulations / (time.perf_counter() - start)

    return measure


def mctx_search_rate(num_games: int, num_simulations: int) -> tuple[Callable[[int], float], float]:
    """A round of mctx's ``muzero_policy`` on pgx Hex, simulations per second (wall), and
    the seconds its compilation took."""
    import jax  # the peers extra: only for the peers' side
    import jax.numpy as jnp
    import mctx
    import pgx

    env = pgx.make("hex")
    step = jax.vmap(env.step)

    def uniform(state):
        return jnp.where(state.legal_action_mask, 0.0, jnp.finfo(jnp.float32).min)

    def recurrent_fn(params, rng_key, action, state):
        # pgx's AlphaZero example: the reward of the player who moved, discount -1 (the
        # player to move alternates), 0 once the game is over.
        player = state.current_player
        state = step(state, action)
        reward = state.rewards[jnp.arange(state.rewards.shape[0]), player]
        over = state.terminated
        value = jnp.zeros_like(reward)
        output = mctx.RecurrentFnOutput(
            reward=reward,
            discount=jnp.where(over, 0.0, -1.0),
            prior_logits=uniform(state),
            value=value,
        )
        return output, state

    @jax.jit
    def search(state, key):
        root = mctx.RootFnOutput(
            prior_logits=uniform(state), value=jnp.zeros(num_games), embedding=state
        )
        out = mctx.muzero_policy(
            params=None,
            rng_key=key,
            root=root,
            recurrent_fn=recurrent_fn,
            num_simulations=num_simulations,
            invalid_actions=~state.legal_action_mask,
        )
        return out.action

    state = _pgx_positions(env, num_games, PLIES, seed=num_games)
    start = time.perf_counter()
    search(state, jax.random.PRNGKey(0)).block_until_ready()
    compile_seconds = time.perf_counter() - start

    def measure(r: int) -> float:
        key = jax.random.PRNGKey(r + 1)
        start = time.perf_counter()
        search(state, key).block_until_ready()
        return num_games * num_simulations / (time.perf_counter() - start)

    return measure, compile_seconds


def _pgx_positions(env, num_games: int, plies: int, *, seed: int):
    """[B] pgx states, each ``plies`` uniformly random legal moves in (none over)."""
    import jax  # the peers extra
    import jax.numpy as jnp

    key = jax.random.PRNGKey(seed)
    while True:
        key, init_key = jax.random.split(key)
        state = jax.jit(jax.vmap(env.init))(jax.random.split(init_key, num_games))
        for _ in range(plies):
            key, draw = jax.random.split(key)
            logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
            state = jax.jit(jax.vmap(env.step))(state, jax.random.categorical(draw, logits))
        if not bool(state.terminated.any()):
            return state


# ---------------------------------------------------------------------------- (b) engine
def our_play_rate(num_games: int) -> tuple[Callable[[int], float], int]:
    """A round of our random play, placed stones per second, and a game's state in bytes."""
    _play_batch(64, 0, sampler=True)  # warm-up
    probe = BatchGame(num_games)
    state_bytes = sum(
        getattr(probe, name).nbytes for name in ("_stones", "_labels", "_group_regions", "_legal")
    )
    state_bytes += sum(
        getattr(probe, name).nbytes
        for name in ("to_move", "winner", "move_count", "history", "resigned")
    )

    def measure(r: int) -> float:
        stones, seconds = _play_batch(num_games, 1000 + r, sampler=True)
        return stones / seconds

    return measure, state_bytes // num_games


def pgx_play_rate(num_games: int) -> tuple[Callable[[int], float], int, float]:
    """A round of pgx Hex random play, placed stones per second; a game's state in bytes;
    the compilation's seconds."""
    import jax  # the peers extra: only for the peers' side
    import jax.numpy as jnp
    import pgx

    env = pgx.make("hex")
    init = jax.jit(jax.vmap(env.init))
    swap = env.num_actions - 1  # the last action is the swap

    @jax.jit
    def ply(state, key):
        logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
        action = jax.random.categorical(key, logits)
        live = ~(state.terminated | state.truncated)
        placed = (live & (action != swap)).sum()
        return jax.vmap(env.step)(state, action), placed, (~live).all()

    def play(seed: int) -> tuple[int, float]:
        key = jax.random.PRNGKey(seed)
        key, init_key = jax.random.split(key)
        state = init(jax.random.split(init_key, num_games))
        state.current_player.block_until_ready()
        counts = []
        start = time.perf_counter()
        over = False
        while not over:
            key, draw = jax.random.split(key)
            state, placed, done = ply(state, draw)
            counts.append(placed)
            over = bool(done)  # one sync a ply, as our loop checks is_over
        seconds = time.perf_counter() - start
        return int(sum(int(c) for c in counts)), seconds

    start = time.perf_counter()
    play(0)  # compiles
    compile_seconds = time.perf_counter() - start
    state = init(jax.random.split(jax.random.PRNGKey(0), num_games))
    state_bytes = sum(leaf.nbytes for leaf in jax.tree_util.tree_leaves(state)) // num_games

    def measure(r: int) -> float:
        stones, seconds = play(1000 + r)
        return stones / seconds

    return measure, state_bytes, compile_seconds


# ---------------------------------------------------------------------------- (c) limits
def matmul_flops(rounds: int) -> float:
    """One core's fp32 matrix-multiply rate, FLOP/s (torch, one thread, 1024x1024)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
        torch.mm(a, b)
        rates = []
        for _ in range(rounds):
            start = time.perf_counter()
            for _ in range(4):
                torch.mm(a, b)
            rates.append(4 * 2 * 1024**3 / (time.perf_counter() - start))
    finally:
        torch.set_num_threads(threads)
    return statistics.median(rates)


def nominal_flops() -> tuple[float, str]:
    """One core's nominal fp32 peak from /proc/cpuinfo, FLOP/s, and how it was counted: two
    fused multiply-add pipes a cycle, each 8 fp32 lanes wide with AVX2 (16 with AVX-512), at
    the clock the kernel reports (0 where it reports none)."""
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError:
        return 0.0, "no /proc/cpuinfo"
    mhz = next((float(line.split(":")[1]) for line in info.splitlines() if "cpu MHz" in line), 0)
    flags = next((line.split(":")[1].split() for line in info.splitlines() if "flags" in line), [])
    lanes = 16 if "avx512f" in flags else 8 if {"avx2", "fma"} <= set(flags) else 4
    per_cycle = 2 * lanes * 2  # two FMA pipes, lanes wide, a multiply and an add each
    return mhz * 1e6 * per_cycle, f"{per_cycle} FLOP/cycle at {mhz:,.0f} MHz"


def copy_bandwidth(rounds: int, *, mib: int = 256) -> float:
    """The machine's memory bandwidth as numpy copies it, bytes/s read plus written."""
    source = np.ones(mib * 2**20, dtype=np.uint8)
    target = np.empty_like(source)
    np.copyto(target, source)
    rates = []
    for _ in range(rounds):
        start = time.perf_counter()
        np.copyto(target, source)
        rates.append(2 * source.nbytes / (time.perf_counter() - start))
    return statistics.median(rates)


def net_flops(num_positions: int, rounds: int) -> tuple[float, float, str]:
    """The shipped net's evaluation: (multiply-adds a position, positions/s, the path) at
    batch ``num_positions`` on one thread, the fastest path the agents would take."""
    net, _ = load_network(pretrained_file("pretrained"), device=torch.device("cpu"))
    net.eval()
    batch = opening_positions(num_positions, plies=PLIES, seed=1)
    macs = _multiply_adds(net, batch)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    paths = {"torch folded": lambda: NetEvaluator(net, device="cpu", onnxruntime=False)}
    paths["onnxruntime"] = lambda: NetEvaluator(net, device="cpu", onnxruntime=True)
    best, best_path = 0.0, ""
    games = np.arange(num_positions)
    try:
        for name, make in paths.items():
            try:
                evaluator = make()
            except ValueError:  # the [onnx] extra is not installed
                continue
            evaluator(batch, games)
            rates = []
            for _ in range(rounds):
                start = time.perf_counter()
                for _ in range(4):
                    evaluator(batch, games)
                rates.append(4 * num_positions / (time.perf_counter() - start))
            rate = statistics.median(rates)
            if rate > best:
                best, best_path = rate, name
    finally:
        torch.set_num_threads(threads)
    return macs, best, best_path


def _multiply_adds(net, batch) -> float:
    """Multiply-adds of one position through the net's convolutions and linear layers, as
    the CPU runs them: dense 3x3 kernels (the hex mask's two dead taps included) over the
    whole square grid (the off-board points included)."""
    total = [0]

    def count(module, inputs, output):
        if isinstance(module, torch.nn.Conv2d):
            per_output = module.in_channels // module.groups * module.kernel_size[0]
            total[0] += output[0].numel() * per_output * module.kernel_size[1]
        elif isinstance(module, torch.nn.Linear):
            total[0] += output[0].numel() * module.in_features

    hooks = [
        module.register_forward_hook(count)
        for module in net.modules()
        if isinstance(module, (torch.nn.Conv2d, torch.nn.Linear))
    ]
    try:
        NetEvaluator(net, device="cpu", fold=False, onnxruntime=False)(batch, np.array([0]))
    finally:
        for hook in hooks:
            hook.remove()
    return float(total[0])


# ---------------------------------------------------------------------------- the run
def run(*, quick: bool) -> tuple[list[dict], str]:
    """The rows (``name``, ``value``, ``unit``, ``note``) and the machine's line."""
    try:  # the peers extra, imported when the run starts so that a missing one is one line
        import jax
        import mctx
        import pgx
    except ImportError as error:
        sys.exit(f"{error.name} is not installed: pip install 'trapy-rl[peers]'")

    rounds = 2 if quick else 5
    search_games, sims = (16, 8) if quick else (GAMES_SEARCH, SIMULATIONS)
    play_games = 64 if quick else GAMES_PLAY
    line = (
        f"{machine(libraries=True)}; "
        f"jax {jax.__version__}, mctx {mctx.__version__}, pgx {pgx.__version__}; "
        f"affinity {sorted(os.sched_getaffinity(0))}"
    )
    rows = []

    # (a)
    theirs, compile_search = mctx_search_rate(search_games, sims)
    ours_rate, theirs_rate, _, _ = _median_pair(our_search_rate(search_games, sims), theirs, rounds)
    where = f"{search_games} games, {sims} sims/move, {PLIES} plies in, uniform evaluator"
    rows += [
        _row(f"(a) our MCTS, side 10 (145 cells), B={search_games}", ours_rate, "sims/s", where),
        _row(
            f"(a) mctx muzero_policy, pgx hex 11x11 (121 cells), B={search_games}",
            theirs_rate,
            "sims/s",
            f"{where}; compiling took {compile_search:.1f} s, not timed",
        ),
        _row("(a) ours / mctx", ours_rate / theirs_rate, "x", "bar: 8x"),
    ]

    # (b)
    pgx_measure, pgx_bytes, compile_play = pgx_play_rate(play_games)
    our_measure, our_bytes = our_play_rate(play_games)
    ours_play, pgx_play, _, _ = _median_pair(our_measure, pgx_measure, rounds)
    rows += [
        _row(
            f"(b) our BatchGame random play, side 10, B={play_games}",
            ours_play,
            "moves/s",
            "random_legal_actions + step, placed stones",
        ),
        _row(
            f"(b) pgx hex 11x11 jit(vmap(step)) random play, B={play_games}",
            pgx_play,
            "moves/s",
            f"the random draw inside the jitted call; compiling took {compile_play:.1f} s",
        ),
        _row("(b) ours / pgx", ours_play / pgx_play, "x", "bar: 4x"),
    ]

    # (c)
    peak = matmul_flops(rounds)
    nominal, counted = nominal_flops()
    bandwidth = copy_bandwidth(rounds)
    macs, positions, path = net_flops(64 if quick else 256, rounds)
    achieved = 2 * macs * positions
    rows += [
        _row("(c) one core's nominal fp32 peak", nominal / 1e9, "GFLOP/s", counted),
        _row("(c) one core's fp32 matmul (torch, 1 thread)", peak / 1e9, "GFLOP/s", "1024x1024"),
        _row("(c) the shipped net, multiply-adds a position", macs / 1e6, "M", "side 10"),
        _row(
            f"(c) the shipped net, {path}, 1 thread, batch {64 if quick else 256}",
            positions,
            "positions/s",
            f"{achieved / 1e9:.2f} GFLOP/s = {achieved / peak:.0%} of the matmul rate, "
            f"{achieved / max(nominal, 1.0):.0%} of the nominal peak",
        ),
        _row("(c) copy bandwidth (numpy, 1 thread, 256 MiB)", bandwidth / 1e9, "GB/s", ""),
    ]
    for name, rate, state in (("ours", ours_play, our_bytes), ("pgx", pgx_play, pgx_bytes)):
        traffic = 2 * state * rate
        rows.append(
            _row(
                f"(c) engine {name}: 2 x {state} state bytes a move x moves/s",
                traffic / 1e9,
                "GB/s",
                f"{traffic / bandwidth:.1%} of the copy bandwidth",
            )
        )
    return rows, line


def _row(name: str, value: float, unit: str, note: str) -> dict:
    return {"name": name, "value": value, "unit": unit, "note": note}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, to check it runs")
    parser.add_argument("--cores", choices=("one", "all"), default="one", help="see above")
    parser.add_argument("--json", type=Path, help="also write the rows to this file")
    args = parser.parse_args(argv)
    if args.cores == "one":  # before jax starts its threads
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    rows, line = run(quick=args.quick)
    print(f"machine: {line}")
    for row in rows:
        note = f"  ({row['note']})" if row["note"] else ""
        print(f"{row['name']:<62} {row['value']:>14,.2f} {row['unit']}{note}", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"machine": line, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
